import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { failpoint } from '@/common/faults/failpoints';
import { MergeQueuesJob, QueueName } from '@/common/queues/queue-names';
import type { MergeQueueState } from '../planner';
import { PathsAsks } from './paths-asks';

export interface ExecuteJob {
  queueId: string;
}

export interface TickJob {
  queueId: string;
}

export interface AskPathsJob {
  queueId: string;
}

/** Retry delay for an executor whose job failed (a git error, a lost database): the next one reconciles. */
export const EXECUTOR_RETRY_DELAY_MS = 2_000;

/**
 * Puts work on the merge-queues BullMQ queue after a transaction committed: the executor of a
 * queue (job id = queue id, so BullMQ never holds two at once) and delayed ticks for check
 * timeouts. Losing one of these (Redis down at that moment) delays work but loses none: the sweep
 * finds unfinished operations in the database and starts their executor again.
 */
@Injectable()
export class MergeQueueScheduler {
  private readonly logger = new Logger(MergeQueueScheduler.name);

  constructor(
    @InjectQueue(QueueName.MergeQueues) private readonly queue: Queue,
    private readonly asks: PathsAsks,
  ) {}

  async kick(queueId: string, delayMs = 0): Promise<void> {
    try {
      await this.queue.add(MergeQueuesJob.Execute, { queueId } satisfies ExecuteJob, {
        jobId: executorJobId(queueId),
        delay: delayMs,
        attempts: 1,
        removeOnComplete: true,
        removeOnFail: true,
      });
    } catch (error) {
      this.logger.warn({ err: error, queueId }, 'merge-queue executor not enqueued; the sweep will start it');
    }
  }

  /**
   * Asks, in the worker, the changed paths of the queue's live entries that have none kept (path
   * groups were just set, or a provider call for them failed). One job per request (`key`: the
   * queue's revision, the entry, the delivery; `sweep` for the paths sweep, so it never holds two for
   * one queue); a lost one (Redis down) leaves those entries in every lane until the worker's paths
   * sweep finds them (MergeQueuesProcessor.sweepPaths), which leaves the queue alone while a job is
   * on its way (PathsAsks). The sweep's own job is tried once: the next sweep is its retry.
   */
  async askPaths(queueId: string, key: string): Promise<void> {
    // Claimed first: a quick job may have finished (and dropped the claim) before a claim taken after it.
    await this.asks.claim(queueId);
    try {
      await this.queue.add(MergeQueuesJob.AskPaths, { queueId } satisfies AskPathsJob, {
        jobId: `paths-${queueId}-${key}`,
        ...(key === PATHS_SWEEP_KEY ? { attempts: 1 } : { attempts: 3, backoff: { type: 'exponential', delay: 2_000 } }),
        removeOnComplete: true,
        removeOnFail: true,
      });
    } catch (error) {
      this.logger.warn({ err: error, queueId }, 'merge-queue changed paths not asked; entries without kept paths stay in every lane');
    }
  }

  /** Schedules a tick at the earliest check deadline of the state's running CI, if any. */
  async scheduleTimers(queueId: string, state: MergeQueueState, now = Date.now()): Promise<void> {
    let deadline = Infinity;
    for (const b of state.batches) {
      if ((b.status === 'testing' || b.status === 'reconciling') && b.ciStartedAt !== null)
        deadline = Math.min(deadline, b.ciStartedAt + state.config.checkTimeoutMs);
    }
    if (!Number.isFinite(deadline)) return;
    try {
      await this.queue.add(MergeQueuesJob.Tick, { queueId } satisfies TickJob, {
        jobId: `tick-${queueId}-${deadline}`,
        delay: Math.max(0, deadline - now + 50),
        attempts: 3,
        removeOnComplete: true,
        removeOnFail: true,
      });
    } catch (error) {
      this.logger.warn({ err: error, queueId }, 'merge-queue tick not scheduled; the sweep ticks queues with running CI');
    }
  }

  /** After a commit: start the executor when operations were issued, and keep the timers. */
  async afterCommit(queueId: string, state: MergeQueueState, operationsIssued: number): Promise<void> {
    // The event is committed and its operations are in the outbox; dying here loses the kick only.
    failpoint('merge-queue.after-commit', queueId);
    if (operationsIssued > 0) await this.kick(queueId);
    await this.scheduleTimers(queueId, state);
  }
}

/** The `key` of the paths sweep's jobs (askPaths). */
export const PATHS_SWEEP_KEY = 'sweep';

export function executorJobId(queueId: string): string {
  return `execute-${queueId}`;
}
