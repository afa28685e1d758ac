import { Module } from '@nestjs/common';
import { IntegrationAccessModule } from '@/modules/integrations/integration-access.module';
import { MergeQueueEngineModule } from '@/modules/merge-queues/merge-queue-engine.module';
import { WebhookDeliveries } from './webhook-deliveries';

/** What the worker needs to apply webhook deliveries: the merge queues' provider events and the integrations. */
@Module({
  imports: [MergeQueueEngineModule, IntegrationAccessModule],
  providers: [WebhookDeliveries],
  exports: [WebhookDeliveries, MergeQueueEngineModule],
})
export class WebhookWorkerModule {}
