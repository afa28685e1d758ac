import { Injectable, Optional } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueue, Prisma } from '@/generated/prisma/client';
import {
  type BatchState,
  type EntryState,
  FINAL_BATCH_STATUSES,
  type MergeQueueEvent,
  type MergeQueueOperation,
  type MergeQueueState,
  reduceMergeQueue,
  type StatusTransition,
} from '../planner';
import { MergeQueueErrors } from '../merge-queues.errors';
import { batchRowId } from './merge-queue-ids';
import { MergeQueueMetrics } from '../merge-queue-metrics';

/** The queue row, locked, with the planner state it holds. */
export interface LockedQueue {
  row: MergeQueue;
  state: MergeQueueState;
}

export interface ApplyOutcome {
  before: MergeQueueState;
  state: MergeQueueState;
  operations: MergeQueueOperation[];
  transitions: StatusTransition[];
  changed: boolean;
}

export interface ApplyRequest<T> {
  /** Null: any organization (the worker); otherwise the queue must belong to it. */
  organizationId: string | null;
  queueId: string;
  /** Decides the events from the locked state (reading more under the lock through `tx` if needed); may throw an AppError to refuse the request. */
  build: (queue: LockedQueue, tx: Prisma.TransactionClient) => MergeQueueEvent[] | Promise<MergeQueueEvent[]>;
  /** An event that changed nothing leaves no trail (periodic ticks). */
  quietWhenUnchanged?: boolean;
  /** Small facts for the event trail (the operation answered, the entry, the reason). */
  detail?: Record<string, unknown>;
  /** Runs in the same transaction after the state is written (audit records, outbox bookkeeping). */
  after?: (tx: Prisma.TransactionClient, queue: LockedQueue, outcome: ApplyOutcome) => Promise<T>;
}

const LIVE_BATCH = (b: BatchState) => !FINAL_BATCH_STATUSES.includes(b.status);

/**
 * The one writer of a merge queue. Every event is applied under `SELECT ... FOR UPDATE` on the
 * queue row, in one transaction that loads the planner state, reduces, and writes back the state,
 * the entry and batch rows that reads use, the revision, the operations the planner asked for (the
 * outbox the executor drains) and the event trail. Two writers of one queue therefore run one
 * after the other, and a crash leaves either all of an event or none of it.
 */
@Injectable()
export class MergeQueueStore {
  constructor(
    private readonly prisma: PrismaService,
    @Optional() private readonly metrics?: MergeQueueMetrics,
  ) {}

  async apply<T = void>(request: ApplyRequest<T>): Promise<{ queue: LockedQueue; outcome: ApplyOutcome; result: T }> {
    const applied = await this.transaction(request);
    // Metrics count committed events only (landings, CI runs per landed PR, bisections).
    this.metrics?.applied(applied.queue.row.id, applied.outcome.before, applied.outcome.state);
    return applied;
  }

  private transaction<T>(request: ApplyRequest<T>): Promise<{ queue: LockedQueue; outcome: ApplyOutcome; result: T }> {
    return this.prisma.$transaction(async (tx) => {
      const locked = await this.lock(tx, request.organizationId, request.queueId);
      const events = await request.build(locked, tx);
      let state = locked.state;
      const operations: MergeQueueOperation[] = [];
      const transitions: StatusTransition[] = [];
      for (const event of events) {
        const step = reduceMergeQueue(state, event);
        state = step.state;
        operations.push(...step.operations);
        transitions.push(...step.transitions);
      }
      const outcome: ApplyOutcome = { before: locked.state, state, operations, transitions, changed: state !== locked.state };
      let row = locked.row;
      if (outcome.changed) row = await this.persist(tx, locked, outcome);
      for (const [i, event] of events.entries()) {
        if (!outcome.changed && request.quietWhenUnchanged) break;
        // The status steps and operations of the whole request are listed once, on its last event.
        const last = i === events.length - 1;
        await tx.mergeQueueEvent.create({
          data: {
            organizationId: row.organizationId,
            queueId: row.id,
            revision: BigInt(state.revision),
            type: event.type,
            detail: { ...eventDetail(row.id, event), ...(request.detail ?? {}) } as Prisma.InputJsonObject,
            transitions: (last ? transitions.map((t) => (t.subject === 'batch' ? { ...t, id: batchRowId(row.id, t.id) } : t)) : []) as unknown as Prisma.InputJsonArray,
            operations: (last ? operations.map((o) => ({ id: o.id, kind: o.kind, batchId: batchRowId(row.id, o.batchId) })) : []) as unknown as Prisma.InputJsonArray,
          },
        });
      }
      const queue = { row, state };
      const result = request.after ? await request.after(tx, queue, outcome) : (undefined as T);
      return { queue, outcome, result };
    });
  }

  /** Locks the queue row for the rest of the transaction and reads it. */
  async lock(tx: Prisma.TransactionClient, organizationId: string | null, queueId: string): Promise<LockedQueue> {
    const found = organizationId === null
      ? await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "MergeQueue" WHERE "id" = ${queueId} FOR UPDATE`
      : await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "MergeQueue" WHERE "id" = ${queueId} AND "organizationId" = ${organizationId} FOR UPDATE`;
    if (found.length === 0) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id: queueId } });
    const row = await tx.mergeQueue.findUniqueOrThrow({ where: { id: queueId } });
    return { row, state: row.plannerState as unknown as MergeQueueState };
  }

  private async persist(tx: Prisma.TransactionClient, locked: LockedQueue, outcome: ApplyOutcome): Promise<MergeQueue> {
    const { row } = locked;
    const { before, state } = outcome;
    const oldBatches = new Map(before.batches.map((b) => [b.id, JSON.stringify(batchRow(row, state, b))]));
    for (const b of state.batches) {
      const data = batchRow(row, state, b);
      if (oldBatches.get(b.id) === JSON.stringify(data)) continue;
      const { id, ...rest } = data;
      await tx.mergeQueueBatch.upsert({ where: { id }, create: data, update: rest });
    }
    const oldEntries = new Map(before.entries.map((e) => [e.id, JSON.stringify(entryRow(row, e))]));
    for (const e of state.entries) {
      const data = entryRow(row, e);
      if (oldEntries.get(e.id) === JSON.stringify(data)) continue;
      const { id, ...rest } = data;
      await tx.mergeQueueEntry.upsert({ where: { id }, create: data, update: rest });
    }
    if (outcome.operations.length) {
      await tx.mergeQueueOperation.createMany({
        data: outcome.operations.map((op, ordinal) => ({
          queueId: row.id,
          batchId: batchRowId(row.id, op.batchId),
          kind: op.kind,
          outcome: 'pending' as const,
          payload: op as unknown as Prisma.InputJsonObject,
          idempotencyKey: `${row.id}/${op.id}`,
          plannerKey: op.id,
          revision: BigInt(state.revision),
          ordinal,
        })),
      });
    }
    return tx.mergeQueue.update({
      where: { id: row.id },
      data: { plannerState: state as unknown as Prisma.InputJsonObject, revision: BigInt(state.revision), status: state.status, batchDepth: state.batchDepth },
    });
  }
}

/** A batch as its row holds it (also how changes are detected: rows are written only when this changes). */
function batchRow(queue: MergeQueue, state: MergeQueueState, b: BatchState) {
  return {
    id: batchRowId(queue.id, b.id),
    organizationId: queue.organizationId,
    queueId: queue.id,
    plannerKey: b.id,
    position: b.position,
    prNumbers: b.prNumbers,
    status: b.status,
    requiredChecks: state.config.requiredChecks.map((name) => ({ name, state: b.checks.find((c) => c.name === name)?.state ?? 'pending' })),
    headSha: b.candidateSha,
    baseSha: b.baseSha,
    operationKind: LIVE_BATCH(b) ? (b.operation?.kind ?? null) : null,
    operationOutcome: LIVE_BATCH(b) ? (b.operation?.outcome ?? null) : null,
  };
}

function entryRow(queue: MergeQueue, e: EntryState) {
  return {
    id: e.id,
    organizationId: queue.organizationId,
    queueId: queue.id,
    number: e.number,
    headSha: e.headSha,
    url: e.url,
    title: e.title,
    status: e.status,
    position: e.position,
    priority: e.priority,
    setAside: e.setAside,
    batchId: e.batchId === null ? null : batchRowId(queue.id, e.batchId),
    block: e.block,
  };
}

/** What the trail keeps of an event: its ids (batch ids as the API shows them) and small facts. */
function eventDetail(queueId: string, event: MergeQueueEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const e = event as unknown as Record<string, unknown>;
  for (const key of ['operationId', 'entryId', 'reason', 'name', 'state', 'headSha', 'priority', 'setAside', 'baseSha', 'candidateSha']) {
    if (e[key] !== undefined) out[key] = e[key];
  }
  if (typeof e.batchId === 'string') out.batchId = batchRowId(queueId, e.batchId);
  if (event.type === 'enqueue') Object.assign(out, { entryId: event.entry.id, number: event.entry.number, headSha: event.entry.headSha });
  return out;
}
