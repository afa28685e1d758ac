import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { JobQueue, NoData, PayloadsOf } from '@/common/queues/job-handlers';
import { CommitStatusesJob, QueueName } from '@/common/queues/queue-names';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueue, Prisma } from '@/generated/prisma/client';
import type { MergeQueueState } from '../planner';
import { type CommitStatus, statusChanges } from './commit-statuses';

/** A batch that landed on a GitHub queue: its PRs are closed with a note when it landed as new commits (squash, rebase). */
export interface CloseLandedJob {
  queueId: string;
  /** The planner's batch id ("b12"). */
  batchId: string;
  candidateSha: string;
}

export interface PostCommitStatusJob {
  queueId: string;
  /** The queue's revision the status was decided at: an older one is never posted over a newer one. */
  revision: number;
  status: CommitStatus;
}

/** What each job of the commit-statuses queue carries (its processor is CommitStatusesProcessor). */
export type CommitStatusesPayloads = PayloadsOf<
  typeof CommitStatusesJob,
  { [CommitStatusesJob.Post]: PostCommitStatusJob; [CommitStatusesJob.Repair]: NoData; [CommitStatusesJob.CloseLanded]: CloseLandedJob }
>;

/**
 * Decides, after every committed queue change, which commit statuses changed (commit-statuses.ts)
 * and hands each to a `commit-statuses` job. Only queues on GitHub post (what a queue runs on never
 * changes, so it is looked up once per queue). Nothing here is awaited by the queue, and a failure
 * to enqueue is logged, never thrown: statuses never block or fail a queue.
 */
@Injectable()
export class CommitStatusJobs {
  private readonly logger = new Logger(CommitStatusJobs.name);
  private readonly onGithub = new Map<string, Promise<boolean>>();

  constructor(
    private readonly prisma: PrismaService,
    @InjectQueue(QueueName.CommitStatuses) private readonly queue: JobQueue<CommitStatusesPayloads>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  applied(row: MergeQueue, before: MergeQueueState, after: MergeQueueState): void {
    if (before === after) return;
    void this.post(row, before, after).catch((error: unknown) => this.logger.warn({ err: error, queueId: row.id }, 'merge-queue commit statuses not enqueued'));
  }

  private async post(row: MergeQueue, before: MergeQueueState, after: MergeQueueState): Promise<void> {
    if (!(await this.postsStatuses(row))) return;
    const changes = statusChanges(before, after);
    for (const [i, status] of changes.entries()) await this.enqueue({ queueId: row.id, revision: after.revision, status }, `${row.id}-${after.revision}-${i}`);
    const landedBefore = new Set(before.batches.filter((b) => b.status === 'landed').map((b) => b.id));
    for (const b of after.batches) {
      if (b.status !== 'landed' || landedBefore.has(b.id) || b.candidateSha === null) continue;
      await this.queue.add(
        CommitStatusesJob.CloseLanded,
        { queueId: row.id, batchId: b.id, candidateSha: b.candidateSha },
        {
          jobId: `landed-${row.id}-${b.id}`,
          attempts: this.config.mergeQueues.statusPostAttempts,
          backoff: { type: 'exponential', delay: this.config.mergeQueues.statusPostBackoffMs },
          removeOnComplete: true,
          removeOnFail: { age: 24 * 3600 },
        },
      );
    }
  }

  /**
   * One status post as a `commit-statuses` job: MERGE_QUEUE_STATUS_POST_ATTEMPTS attempts with
   * exponential backoff from MERGE_QUEUE_STATUS_POST_BACKOFF_MS (10 from 2 s: about 17 minutes);
   * a post the provider refused every time is repaired later (CommitStatusesProcessor.repair).
   */
  async enqueue(job: PostCommitStatusJob, key: string): Promise<void> {
    await this.queue.add(CommitStatusesJob.Post, job, {
      jobId: `status-${key}`,
      attempts: this.config.mergeQueues.statusPostAttempts,
      backoff: { type: 'exponential', delay: this.config.mergeQueues.statusPostBackoffMs },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    });
  }

  /**
   * The queue posts commit statuses (its code source is on GitHub): each change needs the queue's
   * whole planner state. `client`: the transaction asking (the writer, under the queue's lock,
   * never waits for a second connection).
   */
  postsStatuses(row: MergeQueue, client: Prisma.TransactionClient = this.prisma): Promise<boolean> {
    let known = this.onGithub.get(row.id);
    if (!known) {
      // The queue's code source never changes provider; read once per queue and process.
      known = client.codeSource
        .findFirst({ where: { id: row.repositoryId, organizationId: row.organizationId }, select: { provider: true } })
        .then((s) => s?.provider === 'GITHUB' || s?.provider === 'GITHUB_ENTERPRISE');
      known.catch(() => this.onGithub.delete(row.id));
      this.onGithub.set(row.id, known);
    }
    return known;
  }
}
