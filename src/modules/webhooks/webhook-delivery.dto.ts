import { ApiProperty } from '@nestjs/swagger';

/** The answer to a webhook delivery: stored (or already stored) and left to the worker. */
export class WebhookReceiptDto {
  @ApiProperty({ description: 'The X-GitHub-Delivery id' }) deliveryId: string;
  @ApiProperty({ description: 'The X-GitHub-Event name' }) event: string;
  @ApiProperty({ description: 'True when this delivery id was received before for the integration: it is applied once, not again' }) duplicate: boolean;
}
