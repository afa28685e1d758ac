import { Module } from '@nestjs/common';
import { QueuesModule } from '@/common/queues/queues.module';
import { AuditModule } from '@/modules/audit/audit.module';
import { IntegrationAccessModule } from '@/modules/integrations/integration-access.module';
import { MergeQueuePaths } from './changed-paths/changed-paths';
import { PathMatching } from './changed-paths/path-matching';
import { PathsAsks } from './changed-paths/paths-asks';
import { MergeQueuePathsRepository } from './changed-paths/paths.repository';
import { CommitStatusJobs } from './commit-statuses/commit-status-jobs';
import { MergeQueueAfterCommit } from './engine/after-commit';
import { MergeQueueExecutor } from './engine/executor';
import { MergeQueueGits } from './engine/gits';
import { MergeQueueMetrics } from './engine/metrics';
import { MergeQueueWriter } from './engine/queue-writer';
import { MergeQueueScheduler } from './engine/scheduler';
import { MergeQueueOutboxRepository } from './engine/store/outbox.repository';
import { MergeQueuesRepository } from './merge-queues.repository';
import { MergeQueueProviderEvents } from './provider-events/provider-events';
import { RequiredChecksFromGithub } from './required-checks/required-checks-from-github';
import { MergeQueueViewLinksRepository } from './view-links/view-links.repository';
import { MergeQueueViewLinks } from './view-links/view-links.service';
import { MergeQueueTitles } from './titles/pr-titles';
import { MergeQueuePullRequestCommands } from './provider-events/pull-request-commands';

/** Every provider, and what both processes use of the merge queues (the module exports them all). */
const PROVIDERS = [
  MergeQueuesRepository,
  MergeQueueWriter,
  MergeQueueAfterCommit,
  MergeQueueOutboxRepository,
  MergeQueueScheduler,
  MergeQueueExecutor,
  MergeQueueGits,
  MergeQueueMetrics,
  CommitStatusJobs,
  MergeQueuePaths,
  MergeQueuePathsRepository,
  PathMatching,
  PathsAsks,
  MergeQueueProviderEvents,
  RequiredChecksFromGithub,
  MergeQueueViewLinksRepository,
  MergeQueueViewLinks,
  MergeQueueTitles,
  MergeQueuePullRequestCommands,
];

/**
 * What both processes need of the merge queues: the writer and what follows its commits, the
 * repositories (the API's organization-scoped reads, the worker's outbox, the changed paths'), the
 * git seam, the executor and its scheduler, changed paths, provider events and the page's view
 * links (the worker's statuses carry one). The API module adds the controllers and services; the
 * worker module adds the processors.
 */
@Module({
  imports: [AuditModule, QueuesModule, IntegrationAccessModule],
  providers: PROVIDERS,
  exports: [...PROVIDERS, AuditModule, QueuesModule],
})
export class MergeQueueEngineModule {}
