import { Injectable, Logger } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueueOperation as OperationRow, Prisma } from '@/generated/prisma/client';
import type { MergeQueueEvent, MergeQueueOperation, MergeQueueState, ReadBackFacts } from '../planner';
import { candidateRef } from './merge-queue-ids';
import { fullRef, type MergeQueueGit } from './merge-queue-git';
import { MergeQueueGits } from './merge-queue-gits';
import { MergeQueueScheduler } from './merge-queue-scheduler';
import { MergeQueueStore } from './merge-queue-store';

/** How the executor reached an outcome; stored on the operation row. */
type Outcome = 'succeeded' | 'failed' | 'unknown';

/** Safety bound on one executor run; the next run (kicked at completion) continues. */
export const MAX_OPERATIONS_PER_RUN = 500;

/**
 * The outbox executor of one queue. BullMQ runs at most one per queue (job id per queue), so an
 * operation this executor finds `running` when it starts was left by an executor that is gone: it
 * becomes `operationUnknown`, and the planner asks for a `readBack`. Each pending operation, in
 * the order the planner issued them, is:
 *   1. marked `running` in its own committed transaction (operationStarted), just before
 *   2. its side effect, done idempotently (deterministic candidates and candidate refs, a
 *      compare-and-swap of the base), and then
 *   3. answered as a new event, which may issue more operations (the loop picks them up).
 * An operation the planner no longer waits for (its batch moved on) is skipped, never performed.
 * An unexpected error leaves the operation `running` and fails the job; the next executor
 * reconciles it, exactly as after a crash.
 */
@Injectable()
export class MergeQueueExecutor {
  private readonly logger = new Logger(MergeQueueExecutor.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly store: MergeQueueStore,
    private readonly gits: MergeQueueGits,
    private readonly scheduler: MergeQueueScheduler,
  ) {}

  /** Runs the queue's outbox until it is empty; returns how many operations were performed. */
  async drain(queueId: string): Promise<number> {
    const queue = await this.prisma.mergeQueue.findUnique({ where: { id: queueId }, include: { repository: true } });
    if (!queue) return 0;
    const git = await this.gits.forSource(queue.repository);
    await this.reconcileOrphans(queueId);
    let performed = 0;
    while (performed < MAX_OPERATIONS_PER_RUN) {
      const row = await this.prisma.mergeQueueOperation.findFirst({ where: { queueId, finishedAt: null, outcome: 'pending' }, orderBy: [{ revision: 'asc' }, { ordinal: 'asc' }] });
      if (!row) break;
      const op = row.payload as unknown as MergeQueueOperation;
      if (!(await this.markRunning(queueId, row, op))) continue;
      const event = await this.perform(queueId, git, queue.baseRef, op);
      await this.deliver(queueId, row, event, outcomeOf(event));
      performed++;
    }
    return performed;
  }

  /** Every operation still `running` belongs to an executor that is gone: its outcome is unknown. */
  async reconcileOrphans(queueId: string): Promise<number> {
    const orphans = await this.prisma.mergeQueueOperation.findMany({ where: { queueId, finishedAt: null, outcome: 'running' }, orderBy: [{ revision: 'asc' }, { ordinal: 'asc' }] });
    for (const row of orphans) {
      this.logger.warn({ queueId, operation: row.plannerKey, kind: row.kind }, 'operation left running by an executor that is gone; reconciling');
      await this.deliver(queueId, row, { type: 'operationUnknown', operationId: row.plannerKey, at: Date.now() }, 'unknown');
    }
    return orphans.length;
  }

  /** Step 1: commits `running` before the side effect; false when the planner no longer waits for it. */
  private async markRunning(queueId: string, row: OperationRow, op: MergeQueueOperation): Promise<boolean> {
    const { result } = await this.store.apply({
      organizationId: null,
      queueId,
      build: ({ state }) => (isAwaited(state, op) ? [{ type: 'operationStarted', operationId: op.id, at: Date.now() }] : []),
      after: async (tx, { state }) => {
        const awaited = isAwaited(state, op);
        await tx.mergeQueueOperation.update({ where: { id: row.id }, data: awaited ? { outcome: 'running' } : { finishedAt: new Date(), result: { superseded: true } } });
        return awaited;
      },
    });
    return result;
  }

  /** Step 3: the outcome as a new event, and the operation row finished, in one transaction. */
  private async deliver(queueId: string, row: OperationRow, event: MergeQueueEvent, outcome: Outcome): Promise<void> {
    const { queue, outcome: applied } = await this.store.apply({
      organizationId: null,
      queueId,
      build: () => [event],
      detail: { kind: row.kind },
      after: async (tx) => {
        await tx.mergeQueueOperation.update({ where: { id: row.id }, data: { outcome, finishedAt: new Date(), result: resultOf(event) } });
      },
    });
    await this.scheduler.scheduleTimers(queueId, queue.state);
    void applied;
  }

  /** Step 2: the side effect. Known refusals become `operationFailed`; anything unexpected propagates. */
  private async perform(queueId: string, git: MergeQueueGit, baseRef: string, op: MergeQueueOperation): Promise<MergeQueueEvent> {
    const at = () => Date.now();
    switch (op.kind) {
      case 'prepare': {
        const built = await git.buildCandidate(op.baseSha, op.heads, candidateRef(queueId, op.batchId));
        if (built.ok) return { type: 'operationSucceeded', operationId: op.id, candidateSha: built.candidateSha, at: at() };
        return { type: 'operationFailed', operationId: op.id, reason: built.reason, conflictEntryId: built.conflictEntryId, at: at() };
      }
      case 'publish':
        await git.publishRef(candidateRef(queueId, op.batchId), op.candidateSha);
        return { type: 'operationSucceeded', operationId: op.id, at: at() };
      case 'startCi':
        // CI is started by the published candidate ref (CI systems watch refs/heads/mq/...), and
        // reports through POST /merge-queues/{id}/batches/{batchId}/checks: nothing more to do.
        return { type: 'operationSucceeded', operationId: op.id, at: at() };
      case 'land': {
        if (await git.compareAndSwapRef(fullRef(baseRef), op.candidateSha, op.expectedBaseSha)) {
          return { type: 'operationSucceeded', operationId: op.id, at: at() };
        }
        const head = await git.readRef(baseRef);
        if (head !== null && (await git.isAncestor(op.candidateSha, head))) {
          // Landed already (an earlier attempt of this very operation): the land happened.
          return { type: 'operationSucceeded', operationId: op.id, at: at() };
        }
        return { type: 'operationFailed', operationId: op.id, reason: `the base moved to ${head ?? '(deleted)'}`, baseSha: head ?? undefined, at: at() };
      }
      case 'readBack':
        return { type: 'operationSucceeded', operationId: op.id, readBack: await this.readBack(queueId, git, baseRef, op), at: at() };
      case 'cleanup':
        await git.deleteRef(candidateRef(queueId, op.batchId));
        return { type: 'operationSucceeded', operationId: op.id, at: at() };
    }
  }

  private async readBack(queueId: string, git: MergeQueueGit, baseRef: string, op: Extract<MergeQueueOperation, { kind: 'readBack' }>): Promise<ReadBackFacts> {
    const baseSha = await git.readRef(baseRef);
    if (baseSha === null) throw new Error(`base ref ${baseRef} is missing; cannot read back`);
    const candidate = op.candidateSha !== null && (await git.hasCommit(op.candidateSha)) ? op.candidateSha : null;
    const published = candidate !== null && (await git.readRef(candidateRef(queueId, op.batchId))) === candidate;
    return {
      baseSha,
      candidateSha: candidate,
      candidateLanded: candidate !== null && (await git.isAncestor(candidate, baseSha)),
      published,
      // startCi has no side effect of its own (see perform): CI exists once the candidate is published.
      ciStarted: published,
    };
  }
}

/** The planner still waits for this operation: it is its batch's current one, or a pending cleanup. */
export function isAwaited(state: MergeQueueState, op: MergeQueueOperation): boolean {
  if (op.kind === 'cleanup') return state.cleanups.some((c) => c.operationId === op.id);
  return state.batches.some((b) => b.id === op.batchId && b.operation?.id === op.id);
}

function outcomeOf(event: MergeQueueEvent): Outcome {
  return event.type === 'operationSucceeded' ? 'succeeded' : event.type === 'operationFailed' ? 'failed' : 'unknown';
}

function resultOf(event: MergeQueueEvent): Prisma.InputJsonObject {
  const { type, at: _at, ...rest } = event as MergeQueueEvent & Record<string, unknown>;
  return { type, ...rest } as Prisma.InputJsonObject;
}
