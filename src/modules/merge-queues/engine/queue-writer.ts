import { Injectable } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { failpointThrow } from '@/common/faults/failpoints';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueue, MergeQueueBatch as BatchRow } from '@/generated/prisma/client';
import { Prisma } from '@/generated/prisma/client';
import { AuditService } from '@/modules/audit/audit.service';
import { SHOWN_POSITIONS } from '../commit-statuses/commit-statuses';
import { MergeQueueErrors } from '../merge-queues.errors';
import {
  frontHolds,
  type MergeQueueEvent,
  type MergeQueueOperation,
  type MergeQueueState,
  namedBy,
  reduceMergeQueue,
  type StatusTransition,
  WHOLE_STATE_EVENTS,
  type WindowEdge,
  windowHolds,
} from '../planner';
import { MergeQueueAfterCommit, type Wake } from './after-commit';
import { batchRowId } from './ids';
import { type Lease, LeaseLost } from './lease';
import { nextWakeAt } from './wake';
import { batchRow, documentOf, entryRow, eventDetail, rowKey, sameEntry, SEQ_PER_REVISION } from './store/queue-state-codec';
import { assembleState, assembleWindow, type Window, withNamedEntries } from './store/queue-state-loaders';
import { QueueTransaction } from './store/queue-transaction';
import { ENTRY_VIEW_OMIT, type EntryView, type QueueView, readQueueView } from './store/queue-view';

/** A queue row with a planner state: as an event wrote them (`after`, the answer). */
export interface AppliedQueue {
  row: MergeQueue;
  state: MergeQueueState;
}

/** The queue row, locked, with the planner state it holds (what `build` decides from). */
export interface LockedQueue extends AppliedQueue {
  /**
   * The state is a window of it (planner/window.ts): every entry but the plain waiting ones, and
   * the first of those in planning order. A callback that needs an entry by id or PR number asks
   * `QueueTransaction` when the state does not hold it.
   */
  window: Window;
}

/** What an event did: the state before and after, the operations issued and the status steps. */
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
  /** Decides the events from the locked state (reading more under the lock through `q` if needed); may throw an AppError to refuse the request. */
  build: (queue: LockedQueue, q: QueueTransaction) => MergeQueueEvent[] | Promise<MergeQueueEvent[]>;
  /** An event that changed nothing leaves no trail (periodic ticks). */
  quietWhenUnchanged?: boolean;
  /** Small facts for the event trail (the operation answered, the entry, the reason). */
  detail?: Record<string, unknown>;
  /** Runs in the same transaction after the state is written (audit records, operation bookkeeping). */
  after?: (q: QueueTransaction, queue: AppliedQueue, outcome: ApplyOutcome) => Promise<T>;
  /**
   * What to start once the transaction committed: `executor` (the default) kicks the queue's
   * executor when the planner issued operations and schedules its check-timeout tick; `timers`
   * only the tick (the executor itself, which picks up new operations as it runs); `none` nothing.
   */
  wake?: Wake['wake'];
  /**
   * The executor's lease: the event is applied only while the queue row (locked) still names this
   * holder and epoch; otherwise LeaseLost is thrown and nothing is written (fencing).
   */
  lease?: Lease;
  /** Kick the executor even when no operation was issued (a base-ref move it finishes). */
  startExecutor?: boolean;
  /**
   * The callbacks read waiting entries of the state by these PR numbers (provider events): a window
   * loads the live entries of those numbers too.
   */
  numbers?: readonly number[];
  /** Rows to hand back as the transaction left them (the caller's answer; no read after the commit). */
  returning?: { entryId?: string; batchId?: string; view?: boolean };
}

export interface Applied<T> {
  queue: AppliedQueue;
  outcome: ApplyOutcome;
  result: T;
  entry?: EntryView | null;
  batch?: BatchRow | null;
  view?: QueueView;
}

/**
 * The one writer of a queue. Every event is applied under `SELECT ... FOR UPDATE` on the queue row,
 * in one transaction that loads the planner state (a window of it), reduces, and writes back what
 * changed: the entry and batch rows that reads use, the queue row with the rest of the state and
 * its revision, the operations the planner asked for (the outbox the executor drains) and the event
 * trail. Two writers of one queue therefore run one after the other, and a crash leaves either all
 * of an event or none of it. Once the transaction committed, the writer hands the outcome to
 * MergeQueueAfterCommit (the executor's kick and the check-timeout tick, commit-status jobs,
 * metrics), so that no caller can forget to. A request names the queue's organization, or null for
 * the worker, which works for every organization.
 */
@Injectable()
export class MergeQueueWriter {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly afterCommit: MergeQueueAfterCommit,
  ) {}

  async apply<T = void>(request: ApplyRequest<T>): Promise<Applied<T>> {
    const applied = await this.prisma.$transaction(async (tx) => {
      const locked = await this.lock(tx, request.organizationId, request.queueId);
      if (request.lease) assertHolds(locked.row, request.lease);
      if (request.numbers?.length) Object.assign(locked, await withNamedEntries(tx, locked.row, locked.state, locked.window, { numbers: request.numbers }));
      const q = new QueueTransaction(tx, this.audit, locked.row.id, locked.row.organizationId);
      const events = await request.build(locked, q);
      // A window is reduced when every event keeps to it (planner/window.ts), and for a queue that
      // posts commit statuses when it also holds the front of the line; otherwise the whole state is.
      let before = locked.state;
      let reduced: ReturnType<typeof reduceEvents> = null;
      const { window } = locked;
      if (!events.some((e) => WHOLE_STATE_EVENTS.includes(e.type))) {
        ({ state: before } = await withNamedEntries(tx, locked.row, locked.state, window, namedBy(events)));
        reduced = reduceEvents(locked.row.id, before, events, window.edge);
        const front = (state: MergeQueueState) => frontHolds(state, window.edge, window.frontEdge, SHOWN_POSITIONS);
        if (reduced !== null && !(front(before) && front(reduced.state))) reduced = null;
      }
      if (reduced === null) {
        before = await assembleState(tx, locked.row);
        reduced = reduceEvents(locked.row.id, before, events, null) as NonNullable<ReturnType<typeof reduceEvents>>;
      }
      const { state, operations, transitions } = reduced;
      const outcome: ApplyOutcome = { before, state, operations, transitions, changed: state !== before };
      let row = locked.row;
      const written = { entries: new Map<string, EntryView>(), batches: new Map<string, BatchRow>() };
      // A tick has seen every moment up to its time: those are done, the sweep waits for the next.
      const ticked = events.reduce<number | null>((t, e) => (e.type === 'tick' ? Math.max(t ?? e.at, e.at) : t), null);
      const wakeMs = nextWakeAt(state, ticked);
      const wakeAt = wakeMs === null ? null : new Date(wakeMs);
      if (outcome.changed) row = await this.persist(tx, locked, outcome, written, wakeAt);
      else if ((row.nextWakeAt?.getTime() ?? null) !== wakeMs) row = await tx.mergeQueue.update({ where: { id: row.id }, data: { nextWakeAt: wakeAt } });
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
            transitions: (last
              ? transitions.map((t) => (t.subject === 'batch' ? { ...t, id: batchRowId(row.id, t.id) } : t))
              : []) as unknown as Prisma.InputJsonArray,
            operations: (last
              ? operations.map((o) => ({ id: o.id, kind: o.kind, batchId: batchRowId(row.id, o.batchId) }))
              : []) as unknown as Prisma.InputJsonArray,
          },
        });
      }
      const queue = { row, state };
      const result = request.after ? await request.after(q, queue, outcome) : (undefined as T);
      const out: Applied<T> = { queue, outcome, result };
      const wanted = request.returning;
      if (wanted?.entryId !== undefined) {
        out.entry =
          written.entries.get(wanted.entryId) ??
          (await tx.mergeQueueEntry.findFirst({ where: { id: wanted.entryId, queueId: row.id, organizationId: row.organizationId }, omit: ENTRY_VIEW_OMIT }));
      }
      // The batch is read again when a callback wrote to it (a checks URL).
      if (wanted?.batchId !== undefined)
        out.batch = await tx.mergeQueueBatch.findFirst({ where: { id: wanted.batchId, queueId: row.id, organizationId: row.organizationId } });
      if (wanted?.view) out.view = (await readQueueView(tx, row.organizationId, row.id)) ?? undefined;
      return out;
    });
    await this.afterCommit.committed(applied.queue.row, applied.outcome, { wake: request.wake ?? 'executor', startExecutor: request.startExecutor ?? false });
    return applied;
  }

  /**
   * Locks the queue row for the rest of the transaction and reads it with a window of its planner
   * state. A queue that posts commit statuses also loads the front of the line they number
   * (set-aside PRs count there): what follows the commit renders it.
   */
  private async lock(tx: Prisma.TransactionClient, organizationId: string | null, queueId: string): Promise<LockedQueue> {
    const found =
      organizationId === null
        ? await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "MergeQueue" WHERE "id" = ${queueId} FOR UPDATE`
        : await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "MergeQueue" WHERE "id" = ${queueId} AND "organizationId" = ${organizationId} FOR UPDATE`;
    if (found.length === 0) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id: queueId } });
    const row = await tx.mergeQueue.findUniqueOrThrow({ where: { id: queueId } });
    const { state, window } = await assembleWindow(tx, row, await this.afterCommit.frontToLoad(row, tx));
    return { row, state, window };
  }

  /**
   * Writes what the event changed, and only that: the entry and batch rows whose row fields or
   * planner part changed (new ones placed after every row the state holds), the rows the planner's
   * history dropped (their planner part cleared: the row stays, as history), the operations issued,
   * and the queue row with the small rest of the state (counters, stats, config, cleanups, hold).
   */
  private async persist(
    tx: Prisma.TransactionClient,
    locked: LockedQueue,
    outcome: ApplyOutcome,
    written: { entries: Map<string, EntryView>; batches: Map<string, BatchRow> },
    wakeAt: Date | null,
  ): Promise<MergeQueue> {
    const { row } = locked;
    const { before, state } = outcome;
    // New rows of this event go after the existing ones, in the order the state lists them.
    const seqBase = BigInt(state.revision) * SEQ_PER_REVISION;
    let added = 0n;
    const oldBatches = new Map(before.batches.map((b) => [b.id, rowKey(batchRow(row, state, b), b)]));
    for (const b of state.batches) {
      const data = batchRow(row, state, b);
      const old = oldBatches.get(b.id);
      oldBatches.delete(b.id);
      if (old === rowKey(data, b)) continue;
      const { id, ...rest } = data;
      const planner = b as unknown as Prisma.InputJsonObject;
      const create = { ...data, planner, ...(old === undefined && { plannerSeq: seqBase + added++ }) };
      written.batches.set(
        id,
        await tx.mergeQueueBatch.upsert({ where: { id }, create, update: { ...rest, planner, ...(old === undefined && { plannerSeq: create.plannerSeq }) } }),
      );
    }
    // An entry's row is derived from its state alone, so equal states (compared field by field: all primitives) mean an equal row.
    const oldEntries = new Map(before.entries.map((e) => [e.id, e]));
    for (const e of state.entries) {
      const old = oldEntries.get(e.id);
      oldEntries.delete(e.id);
      if (old !== undefined && sameEntry(old, e)) continue;
      const data = entryRow(row, e);
      const { id, ...rest } = data;
      const planner = e as unknown as Prisma.InputJsonObject;
      const create = { ...data, planner, ...(old === undefined && { plannerSeq: seqBase + added++ }) };
      written.entries.set(
        id,
        await tx.mergeQueueEntry.upsert({
          where: { id },
          create,
          update: { ...rest, planner, ...(old === undefined && { plannerSeq: create.plannerSeq }) },
          omit: ENTRY_VIEW_OMIT,
        }),
      );
    }
    // Dropped by the planner's history: out of the state, kept as rows.
    if (oldBatches.size)
      await tx.mergeQueueBatch.updateMany({
        where: { queueId: row.id, id: { in: [...oldBatches.keys()].map((k) => batchRowId(row.id, k)) } },
        data: { planner: Prisma.DbNull, plannerSeq: null },
      });
    if (oldEntries.size)
      await tx.mergeQueueEntry.updateMany({
        where: { queueId: row.id, id: { in: [...oldEntries.keys()] } },
        data: { planner: Prisma.DbNull, plannerSeq: null },
      });
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
      data: {
        plannerState: documentOf(state),
        revision: BigInt(state.revision),
        status: state.status,
        batchDepth: state.batchDepth,
        quarantined: state.hold?.kind === 'quarantined',
        nextWakeAt: wakeAt,
        // A hold cleared (resume, enable): the failures in a row start again from zero.
        ...(before.hold && !state.hold && { failureCount: 0, retryAt: null }),
      },
    });
  }
}

/** The locked queue row still names the lease's holder and epoch; else LeaseLost (the write is dropped). */
function assertHolds(row: MergeQueue, lease: Lease): void {
  if (row.leaseHolder === lease.holder && row.leaseEpoch === lease.epoch) return;
  throw new LeaseLost(lease, row.leaseEpoch === lease.epoch ? 'the lease was given back' : `the queue is at epoch ${row.leaseEpoch}`);
}
/**
 * Reduces the events in order from `from`; with a window's `edge`, null as soon as one event
 * would read past it (planner/window.ts windowHolds): the caller reduces the whole state instead.
 */
function reduceEvents(
  queueId: string,
  from: MergeQueueState,
  events: readonly MergeQueueEvent[],
  edge: WindowEdge | null,
): { state: MergeQueueState; operations: MergeQueueOperation[]; transitions: StatusTransition[] } | null {
  let state = from;
  const operations: MergeQueueOperation[] = [];
  const transitions: StatusTransition[] = [];
  for (const event of events) {
    if (edge !== null && !windowHolds(state, edge)) return null;
    // A bug in one queue's planner (a test arms it for one queue id): that queue fails, the others go on.
    failpointThrow('merge-queue.reduce', queueId);
    const step = reduceMergeQueue(state, event);
    state = step.state;
    operations.push(...step.operations);
    transitions.push(...step.transitions);
  }
  return { state, operations, transitions };
}
