import { Module } from '@nestjs/common';
import { QueuesModule } from '@/common/queues/queues.module';
import { AuditModule } from '@/modules/audit/audit.module';
import { IntegrationAccessModule } from '@/modules/integrations/integration-access.module';
import { MergeQueueExecutor } from './engine/merge-queue-executor';
import { MergeQueueGits } from '@/modules/merge-queues/engine/gits';
import { MergeQueueScheduler } from './engine/merge-queue-scheduler';
import { PathsAsks } from './engine/paths-asks';
import { MergeQueuesRepository } from './merge-queues.repository';
import { MergeQueueMetrics } from './merge-queue-metrics';
import { MergeQueueProviderEvents } from './merge-queue-provider-events';
import { MergeQueueStatusOut } from './merge-queue-status-out';
import { MergeQueuePaths } from './merge-queue-paths';

/** What both processes need: the repository (every query, the event transaction), the job kicks, the git port and the executor. */
@Module({
  imports: [AuditModule, QueuesModule, IntegrationAccessModule],
  providers: [
    MergeQueuesRepository,
    MergeQueueScheduler,
    MergeQueueExecutor,
    MergeQueueGits,
    MergeQueueMetrics,
    MergeQueueProviderEvents,
    MergeQueueStatusOut,
    MergeQueuePaths,
    PathsAsks,
  ],
  exports: [
    MergeQueuesRepository,
    MergeQueuePaths,
    PathsAsks,
    MergeQueueProviderEvents,
    MergeQueueScheduler,
    MergeQueueExecutor,
    MergeQueueGits,
    MergeQueueStatusOut,
    AuditModule,
    QueuesModule,
  ],
})
export class MergeQueueEngineModule {}
