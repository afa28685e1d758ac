import { Module } from '@nestjs/common';
import { QueuesModule } from '@/common/queues/queues.module';
import { AuditModule } from '@/modules/audit/audit.module';
import { MergeQueueExecutor } from './engine/merge-queue-executor';
import { LocalMergeQueueGit, MergeQueueGit } from './engine/merge-queue-git';
import { MergeQueueScheduler } from './engine/merge-queue-scheduler';
import { MergeQueueStore } from './engine/merge-queue-store';

/** What both processes need: the event transaction, the job kicks, the git port and the executor. */
@Module({
  imports: [AuditModule, QueuesModule],
  providers: [MergeQueueStore, MergeQueueScheduler, MergeQueueExecutor, { provide: MergeQueueGit, useClass: LocalMergeQueueGit }],
  exports: [MergeQueueStore, MergeQueueScheduler, MergeQueueExecutor, MergeQueueGit, AuditModule, QueuesModule],
})
export class MergeQueueEngineModule {}
