import { Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { CommitStatusesJob, QueueName } from '@/common/queues/queue-names';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import { MergeQueueGits } from '@/modules/git-providers/merge-queue-gits';
import { RedisService } from '@/common/redis/redis.module';
import { CommitStatusLedger } from './commit-status-ledger';
import { batchRowId } from './engine/merge-queue-ids';
import type { PostCommitStatusJob } from './merge-queue-status-out';
import { MergeQueuesRepository } from './merge-queues.repository';

/**
 * Posts the merge queue's commit statuses (context `merge-queue/<baseRef>`) with the integration's
 * credentials. A failed post is retried by BullMQ with exponential backoff; one decided at an older
 * revision than the last posted for the same commit is skipped, and posts for one commit take turns
 * across every worker process (CommitStatusLedger, in Redis), so a retry that comes late never turns
 * a PR's status back. The link is the CI run when CI reported one, otherwise the queue.
 */
@Processor(QueueName.CommitStatuses)
export class MergeQueueStatusesProcessor extends JobProcessor {
  private readonly ledger: CommitStatusLedger;

  readonly handlers: JobHandlers = {
    [CommitStatusesJob.Post]: (job) => this.post(job.data as PostCommitStatusJob),
  };

  constructor(
    private readonly repository: MergeQueuesRepository,
    private readonly gits: MergeQueueGits,
    redis: RedisService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(QueueName.CommitStatuses, config);
    // A turn outlives a provider call (its timeout, a token refresh and a batch read around it).
    this.ledger = new CommitStatusLedger(redis.client, config.queuePrefix, {
      turnMs: Math.max(30_000, 3 * config.git.timeoutMs),
      waitMs: 5_000,
      keepS: 24 * 3600,
    });
  }

  protected failureContext(job: Job): Record<string, unknown> {
    const { queueId, status } = job.data as PostCommitStatusJob;
    return { queueId, sha: status.sha };
  }

  post({ queueId, revision, status }: PostCommitStatusJob): Promise<string> {
    return this.ledger.inTurn(`${queueId}:${status.sha}:${status.subject.kind}`, revision, () => this.postNow(queueId, status));
  }

  private async postNow(queueId: string, status: PostCommitStatusJob['status']): Promise<string> {
    const queue = await this.repository.queueForWorker(queueId);
    if (!queue) return 'queue gone';
    const git = await this.gits.forSource(queue.repository);
    if (!(git instanceof GitHubMergeQueueGit)) return 'not on GitHub';
    let targetUrl = `${this.config.git.publicUrl}/merge-queues/${queueId}`;
    if (status.ciBatchId) {
      const [batch] = await this.repository.batches(queue.organizationId, queueId, [batchRowId(queueId, status.ciBatchId)]);
      if (batch?.checksUrl) targetUrl = batch.checksUrl;
    }
    await git.createCommitStatus(status.sha, { state: status.state, context: `merge-queue/${queue.baseRef}`, description: status.description, targetUrl });
    return `${status.state}: ${status.description}`;
  }
}
