import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { CommitStatusesJob, QueueName } from '@/common/queues/queue-names';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueue, Prisma } from '@/generated/prisma/client';
import { type CommitStatus, statusChanges } from './commit-statuses';
import type { MergeQueueState } from './planner';

export interface PostCommitStatusJob {
  queueId: string;
  /** The queue's revision the status was decided at: an older one is never posted over a newer one. */
  revision: number;
  status: CommitStatus;
}

/** Attempts and backoff of a status post: about 17 minutes in all, then the status is dropped (logged). */
export const STATUS_POST_ATTEMPTS = 10;
export const STATUS_POST_BACKOFF_MS = 2_000;

/**
 * Decides, after every committed queue change, which commit statuses changed (commit-statuses.ts)
 * and hands each to a `commit-statuses` job. Only queues on GitHub post (what a queue runs on never
 * changes, so it is looked up once per queue). Nothing here is awaited by the queue, and a failure
 * to enqueue is logged, never thrown: statuses never block or fail a queue.
 */
@Injectable()
export class MergeQueueStatusOut {
  private readonly logger = new Logger(MergeQueueStatusOut.name);
  private readonly onGithub = new Map<string, Promise<boolean>>();

  constructor(
    private readonly prisma: PrismaService,
    @InjectQueue(QueueName.CommitStatuses) private readonly queue: Queue,
  ) {}

  applied(row: MergeQueue, before: MergeQueueState, after: MergeQueueState): void {
    if (before === after) return;
    void this.post(row, before, after).catch((error: unknown) => this.logger.warn({ err: error, queueId: row.id }, 'merge-queue commit statuses not enqueued'));
  }

  private async post(row: MergeQueue, before: MergeQueueState, after: MergeQueueState): Promise<void> {
    if (!(await this.postsStatuses(row))) return;
    const changes = statusChanges(before, after);
    for (const [i, status] of changes.entries()) {
      await this.queue.add(CommitStatusesJob.Post, { queueId: row.id, revision: after.revision, status } satisfies PostCommitStatusJob, {
        jobId: `status-${row.id}-${after.revision}-${i}`,
        attempts: STATUS_POST_ATTEMPTS,
        backoff: { type: 'exponential', delay: STATUS_POST_BACKOFF_MS },
        removeOnComplete: true,
        removeOnFail: { age: 24 * 3600 },
      });
    }
  }

  /**
   * The queue posts commit statuses (its code source is on GitHub): each change needs the queue's
   * whole planner state. `client`: the transaction asking (the repository, under the queue's lock,
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
