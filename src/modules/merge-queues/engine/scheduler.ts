import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { JobQueue } from '@/common/queues/job-handlers';
import { MergeQueuesJob, QueueName } from '@/common/queues/queue-names';
import type { MergeQueueState } from '../planner';
import type { MergeQueuesPayloads } from './jobs';

/**
 * Puts the engine's work on the merge-queues BullMQ queue after a transaction committed: the executor of a
 * queue (job id = queue id, so BullMQ never holds two at once) and delayed ticks for check
 * timeouts. Losing one of these (Redis down at that moment) delays work but loses none: the sweep
 * finds unfinished operations in the database and starts their executor again.
 */
@Injectable()
export class MergeQueueScheduler {
  private readonly logger = new Logger(MergeQueueScheduler.name);

  constructor(@InjectQueue(QueueName.MergeQueues) private readonly queue: JobQueue<MergeQueuesPayloads>) {}

  async kick(queueId: string, delayMs = 0): Promise<void> {
    try {
      await this.queue.add(
        MergeQueuesJob.Execute,
        { queueId },
        {
          jobId: executorJobId(queueId),
          delay: delayMs,
          attempts: 1,
          removeOnComplete: true,
          removeOnFail: true,
        },
      );
    } catch (error) {
      this.logger.warn({ err: error, queueId }, 'merge-queue executor not enqueued; the sweep will start it');
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
      await this.queue.add(
        MergeQueuesJob.Tick,
        { queueId },
        {
          jobId: `tick-${queueId}-${deadline}`,
          delay: Math.max(0, deadline - now + 50),
          attempts: 3,
          removeOnComplete: true,
          removeOnFail: true,
        },
      );
    } catch (error) {
      this.logger.warn({ err: error, queueId }, 'merge-queue tick not scheduled; the sweep ticks queues with running CI');
    }
  }
}

export function executorJobId(queueId: string): string {
  return `execute-${queueId}`;
}
