import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { INFRASTRUCTURE_MODULES } from '@/app.module';
import { JobHandlerCheck } from '@/common/queues/job-handlers';
import { IntegrationsWorkerModule } from '@/modules/integrations/integrations-worker.module';
import { MaintenanceProcessor } from '@/modules/integrations/maintenance.processor';
import { DomainVerificationModule } from '@/modules/domains/verification/domain-verification.module';
import { DomainsProcessor } from '@/modules/domains/domains.processor';
import { MergeQueueEngineModule } from '@/modules/merge-queues/merge-queue-engine.module';
import { MergeQueuesProcessor } from '@/modules/merge-queues/merge-queues.processor';
import { CommitStatusesProcessor } from '@/modules/merge-queues/commit-statuses.processor';
import { UsageImportWorkerModule } from '@/modules/usage/usage-import-worker.module';
import { UsageImportsProcessor } from '@/modules/usage/usage-imports.processor';
import { WebhookWorkerModule } from '@/modules/webhooks/webhook-worker.module';
import { WebhooksProcessor } from '@/modules/webhooks/webhooks.processor';

/**
 * The worker process: the API's infrastructure modules, the domain modules its processors need, and
 * the processors; no controllers (worker.ts serves its health and metrics port).
 */
@Module({
  imports: [
    ...INFRASTRUCTURE_MODULES,
    DiscoveryModule,
    IntegrationsWorkerModule,
    DomainVerificationModule,
    MergeQueueEngineModule,
    UsageImportWorkerModule,
    WebhookWorkerModule,
  ],
  providers: [JobHandlerCheck, MaintenanceProcessor, DomainsProcessor, MergeQueuesProcessor, CommitStatusesProcessor, UsageImportsProcessor, WebhooksProcessor],
})
export class WorkerModule {}
