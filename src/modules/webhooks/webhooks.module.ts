import { Module } from '@nestjs/common';
import { QueuesModule } from '@/common/queues/queues.module';
import { IntegrationAccessModule } from '@/modules/integrations/integration-access.module';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Provider webhooks (API side): verified, stored once, handed to the worker (WebhooksProcessor). */
@Module({
  imports: [QueuesModule, IntegrationAccessModule],
  controllers: [WebhooksController],
  providers: [WebhooksService],
})
export class WebhooksModule {}
