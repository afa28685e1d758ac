import { Injectable, Optional } from '@nestjs/common';
import { failpoint } from '@/common/faults/failpoints';
import type { MergeQueue, Prisma } from '@/generated/prisma/client';
import { CommitStatusJobs } from '../commit-statuses/commit-status-jobs';
import { statusFront } from '../commit-statuses/commit-statuses';
import type { MergeQueueOperation, MergeQueueState } from '../planner';
import { MergeQueueMetrics } from './metrics';
import { MergeQueueScheduler } from './scheduler';

/** What the writer starts once an event committed (ApplyRequest's `wake` and `startExecutor`). */
export interface Wake {
  wake: 'executor' | 'timers' | 'none';
  startExecutor: boolean;
}

/**
 * What follows a committed event, in one place: the metrics count it, its commit statuses are
 * handed to their own jobs, and the queue's worker is woken (the executor when operations were
 * issued, the check-timeout tick). None of it can undo the event: a failure here is logged or
 * left to the sweep, never thrown back into a request after its transaction committed. Before the
 * event, under the queue's lock, the writer asks it what of the line that work will read
 * (`frontToLoad`), so the window the event is reduced over holds it.
 */
@Injectable()
export class MergeQueueAfterCommit {
  constructor(
    private readonly scheduler: MergeQueueScheduler,
    private readonly statuses: CommitStatusJobs,
    @Optional() private readonly metrics?: MergeQueueMetrics,
  ) {}

  /**
   * How many plain waiting PRs at the front of the line an event must load for what follows it:
   * the positions a queue's commit statuses show, when it posts them (its code source is on GitHub);
   * 0 otherwise. Asked under the queue's lock with its transaction (`client`).
   */
  async frontToLoad(row: MergeQueue, client: Prisma.TransactionClient): Promise<number> {
    return (await this.statuses.postsStatuses(row, client)) ? statusFront(row.plannerState as unknown as MergeQueueState) : 0;
  }

  async committed(row: MergeQueue, outcome: { before: MergeQueueState; state: MergeQueueState; operations: MergeQueueOperation[] }, wake: Wake): Promise<void> {
    const { before, state } = outcome;
    // Metrics count committed events only (landings, CI runs per landed PR, bisections).
    this.metrics?.applied(row.id, before, state);
    // Commit statuses on the provider: handed to their own jobs, never awaited by the queue.
    this.statuses.applied(row, before, state);
    if (wake.wake === 'executor') {
      // The event is committed and its operations are in the outbox; dying here loses the kick only.
      failpoint('merge-queue.after-commit', row.id);
      if (outcome.operations.length > 0) await this.scheduler.kick(row.id);
      await this.scheduler.scheduleTimers(row.id, state);
    }
    if (wake.wake === 'timers') await this.scheduler.scheduleTimers(row.id, state);
    // A hold cleared (resume, enable): the executor takes up the operations it left waiting.
    if (wake.startExecutor || (before.hold && !state.hold)) await this.scheduler.kick(row.id);
  }
}
