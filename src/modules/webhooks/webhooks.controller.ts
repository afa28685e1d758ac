import { Controller, Headers, HttpCode, Post, Req } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '@/common/auth/auth.decorators';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse } from '@/common/http/envelope';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { WebhookReceiptDto } from './webhook-delivery.dto';
import { WebhookErrors } from './webhooks.errors';
import { WebhooksService } from './webhooks.service';

/** The raw bytes of a webhook body, kept by the JSON parser for this route (see bootstrap.ts). */
export type RawBodyRequest = Request & { rawBody?: Buffer };

@ApiTags('webhooks')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('github')
  @HttpCode(202)
  @Public()
  @RateLimit('webhooks')
  @ApiOperation({
    summary: 'Receive a GitHub webhook delivery',
    description:
      "Called by GitHub (the GitHub App's or a repository's webhook, content type `application/json`); no bearer token. The delivery is verified with HMAC SHA-256 of the raw body (`X-Hub-Signature-256`, compared in constant time) against the webhook secret of the integration it belongs to, found from `installation.id` or `repository.full_name` (the secret is shown when the integration is created or POST /integrations/{id}/webhook-secret rotates it). An unsigned, wrongly signed or unknown delivery is a 401 and changes nothing. A verified one is stored once per `X-GitHub-Delivery` (a redelivery answers `duplicate: true` and is not applied again) and answered 202 at once; the worker applies it. Events acted on: `pull_request` synchronize (the PR is withdrawn from its batch and queued again with the new head) and closed (it leaves the queue); `check_run` / `check_suite` completed and `status` on a candidate commit (a required check's result, as POST /merge-queues/{id}/batches/{batchId}/checks); `push` to a queue's base from outside the queue (the queue re-plans on the new base); `installation` deleted (the integration becomes REVOKED) or suspend (NEEDS_ATTENTION). Other events are accepted and ignored. See docs/webhooks.md.",
  })
  @ApiHeader({ name: 'X-Hub-Signature-256', required: true, description: '`sha256=` and the hex HMAC SHA-256 of the body under the webhook secret' })
  @ApiHeader({ name: 'X-GitHub-Event', required: true, description: 'The event name, e.g. pull_request' })
  @ApiHeader({ name: 'X-GitHub-Delivery', required: true, description: 'The delivery GUID; a redelivery carries the same one' })
  @ApiDataResponse(WebhookReceiptDto, { status: 202, description: 'Verified and stored; applied by the worker' })
  @ApiErrors(WebhookErrors.SIGNATURE_INVALID, WebhookErrors.HEADER_MISSING)
  async github(
    @Req() req: RawBodyRequest,
    @Headers('x-hub-signature-256') signature: string | undefined,
    @Headers('x-github-event') event: string | undefined,
    @Headers('x-github-delivery') deliveryId: string | undefined,
  ) {
    return { data: await this.webhooks.receiveGithub({ signature, event, deliveryId }, req.rawBody, req.body as unknown) };
  }
}
