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
import { batchRowId } from './engine/merge-queue-ids';
import type { PostCommitStatusJob } from './merge-queue-status-out';
import { MergeQueuesRepository } from './merge-queues.repository';

/**
 * Posts the merge queue's commit statuses (context `merge-queue/<baseRef>`) with the integration's
 * credentials. A failed post is retried by BullMQ with exponential backoff; one decided at an older
 * revision than the last posted for the same commit is skipped, so a retry that comes late never
 * turns a PR's status back. The link is the CI run when CI reported one, otherwise the queue.
 */
@Processor(QueueName.CommitStatuses)
export class MergeQueueStatusesProcessor extends JobProcessor {
  /** The newest revision posted per queue and commit, in this process. */
  private readonly posted = new Map<string, number>();

  readonly handlers: JobHandlers = {
    [CommitStatusesJob.Post]: (job) => this.post(job.data as PostCommitStatusJob),
  };

  constructor(
    private readonly repository: MergeQueuesRepository,
    private readonly gits: MergeQueueGits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(QueueName.CommitStatuses, config);
  }

  protected failureContext(job: Job): Record<string, unknown> {
    const { queueId, status } = job.data as PostCommitStatusJob;
    return { queueId, sha: status.sha };
  }

  async post({ queueId, revision, status }: PostCommitStatusJob): Promise<string> {
    const key = `${queueId}:${status.sha}:${status.subject.kind}`;
    if ((this.posted.get(key) ?? -1) > revision) return 'superseded';
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
    this.posted.set(key, Math.max(this.posted.get(key) ?? -1, revision));
    return `${status.state}: ${status.description}`;
  }
}
