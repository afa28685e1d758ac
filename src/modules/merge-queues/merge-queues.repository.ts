import { Injectable, Optional } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { failpointThrow } from '@/common/faults/failpoints';
import { fromModel, newestFirst, type Page, paginate, type PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type {
  CodeSource,
  MergeQueue,
  MergeQueueBatch as BatchRow,
  MergeQueueEntry as EntryRow,
  MergeQueueEvent as EventRow,
  MergeQueueOperation as OperationRow,
} from '@/generated/prisma/client';
import { Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { type AuditRecord, AuditService } from '@/modules/audit/audit.service';
import { RECENT_FINAL } from './dto/merge-queue.dto';
import { batchRowId } from './engine/merge-queue-ids';
import { type Lease, LeaseLost } from './engine/merge-queue-lease';
import { MergeQueueScheduler } from './engine/merge-queue-scheduler';
import { nextWakeAt } from './engine/merge-queue-wake';
import { LACKS_PATHS_SQL, LIVE_ENTRY_STATUSES, LIVE_STATUSES_SQL, QUEUES_WITH_PATH_GROUPS_SQL, WANTED_HEAD_SQL } from './merge-queue-entry-sql';
import { MergeQueueMetrics } from './merge-queue-metrics';
import { SHOWN_POSITIONS, statusFront } from './commit-statuses';
import { MergeQueueStatusOut } from './merge-queue-status-out';
import { MergeQueueErrors } from './merge-queues.errors';
import {
  type BatchState,
  type ChangedPaths,
  type EntryState,
  FINAL_BATCH_STATUSES,
  MERGE_QUEUE_BATCH_STATUSES,
  type MergeQueueBatchStatus,
  type MergeQueueEntryStatus,
  type MergeQueueEvent,
  type MergeQueueOperation,
  type MergeQueueOperationKind,
  type MergeQueueState,
  isPlainWaiting,
  frontHolds,
  laneMatcher,
  type PathGroup,
  pathGroupsOf,
  namedBy,
  reduceMergeQueue,
  type StatusTransition,
  WHOLE_STATE_EVENTS,
  type WindowEdge,
  windowHolds,
  windowSize,
} from './planner';

/** An entry's stored status (also one the planner's history has dropped), or null when the queue has no such entry. */
async function storedEntryStatus(
  client: Prisma.TransactionClient,
  organizationId: string,
  queueId: string,
  entryId: string,
): Promise<MergeQueueEntryStatus | null> {
  return (await client.mergeQueueEntry.findFirst({ where: { id: entryId, queueId, organizationId }, select: { status: true } }))?.status ?? null;
}

/** Batches not yet landed, failed or withdrawn. */
export const LIVE_BATCH_STATUSES: readonly MergeQueueBatchStatus[] = MERGE_QUEUE_BATCH_STATUSES.filter((s) => !FINAL_BATCH_STATUSES.includes(s));
/** Operations the executor starts before the rest: they finish batches (and a readBack runs alone). */
export const URGENT_OPERATION_KINDS: readonly MergeQueueOperationKind[] = ['land', 'readBack'];

/** The lists' keysets: queues and event trails, newest first. */
export const QUEUES_ORDER = newestFirst<MergeQueue>('mergeQueues');
export const EVENTS_ORDER = newestFirst<EventRow>('mergeQueueEvents');

/** A queue row with its code source. */
export type QueueWithSource = MergeQueue & { repository: CodeSource };

/** What the API renders a queue from: the row, its live entries and batches and the most recent final ones. */
export interface QueueView {
  row: QueueWithSource;
  entries: EntryRow[];
  batches: BatchRow[];
}

/** The queue row, locked, with the planner state it holds. */
export interface LockedQueue {
  row: MergeQueue;
  /**
   * The planner state, or a window of it (`window` set; planner/window.ts): every entry but the
   * plain waiting ones, and the first of those in planning order. A callback that needs an entry
   * by id or PR number asks `QueueTransaction` when the state does not hold it.
   */
  state: MergeQueueState;
  window?: Window;
}

/**
 * A window's edge (null: it left nothing out), for a queue that posts commit statuses the edge of
 * the front it loaded (planner/window.ts frontHolds; null: none or nothing left out), and each
 * entry's place in the state's list (`plannerSeq`), in the window's order.
 */
interface Window {
  edge: WindowEdge | null;
  frontEdge: WindowEdge | null;
  seqs: number[];
}

export interface ApplyOutcome {
  before: MergeQueueState;
  state: MergeQueueState;
  operations: MergeQueueOperation[];
  transitions: StatusTransition[];
  changed: boolean;
}

/** Who an audit record names: a caller, or the system. */
type AuditActor = Parameters<AuditService['record']>[1];

/**
 * What an event's callbacks may read and write inside its transaction (under the queue lock),
 * beside the planner state: every statement is here, none in the callers.
 */
export class QueueTransaction {
  constructor(
    private readonly tx: Prisma.TransactionClient,
    private readonly auditService: AuditService,
    readonly queueId: string,
    readonly organizationId: string,
  ) {}

  /** The stored status of an entry of this queue (also one the planner's history has dropped), or null. */
  storedEntryStatus(entryId: string): Promise<MergeQueueEntryStatus | null> {
    return storedEntryStatus(this.tx, this.organizationId, this.queueId, entryId);
  }

  /**
   * What enqueueing PR `number` must know, in one statement: the live entry (not merged, removed or
   * failed) that already holds the PR, if any, and how many live entries the queue holds, counted up
   * to `atMost` (a cap's check need not count past it).
   */
  async liveEntries(number: number, atMost: number): Promise<{ duplicateId: string | null; live: number }> {
    const rows = await this.tx.$queryRaw<{ duplicateId: string | null; live: number }[]>(Prisma.sql`
      SELECT
        (SELECT "id" FROM "MergeQueueEntry"
          WHERE "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId} AND "number" = ${number}
            AND "status" IN (${LIVE_STATUSES_SQL}) LIMIT 1) AS "duplicateId",
        (SELECT count(*)::int FROM (SELECT 1 FROM "MergeQueueEntry"
          WHERE "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId}
            AND "status" IN (${LIVE_STATUSES_SQL}) LIMIT ${atMost}) AS capped) AS "live"`);
    return rows[0];
  }

  /** Row fields the planner does not hold: the settings as given, the base ref and the one being moved to. */
  async setQueueFields(data: { settings?: Prisma.InputJsonObject; baseRef?: string; pendingBaseRef?: string | null }): Promise<void> {
    await this.tx.mergeQueue.update({ where: { id: this.queueId }, data });
  }

  /**
   * Keeps the paths a PR changes on its entry row (null: not known), the head they were asked for
   * (null: not asked), and the lanes they touch under the queue's path groups (planner/lanes.ts);
   * returns the row as it now is.
   */
  async setEntryPaths(entryId: string, head: string | null, paths: ChangedPaths, groups: readonly PathGroup[]): Promise<EntryRow> {
    return this.tx.mergeQueueEntry.update({
      where: { id: entryId, queueId: this.queueId, organizationId: this.organizationId },
      data: {
        changedPaths: paths === null ? Prisma.DbNull : [...paths],
        pathsHead: head,
        lanes: groups.length ? laneMatcher(groups)(paths) : Prisma.DbNull,
      },
    });
  }

  /**
   * The path groups changed: every live entry's lanes are worked out again from the paths its row
   * keeps, when they were asked for the head it is to be tested with (WANTED_HEAD_SQL); otherwise
   * it is in every lane until the worker asks them (MergeQueuePaths.fill). Without groups no entry
   * of the queue has lanes, final ones included. One statement per distinct set of lanes.
   */
  async relane(groups: readonly PathGroup[]): Promise<void> {
    if (groups.length === 0) {
      await this.tx.mergeQueueEntry.updateMany({ where: { queueId: this.queueId, organizationId: this.organizationId }, data: { lanes: Prisma.DbNull } });
      return;
    }
    const lanesOf = laneMatcher(groups);
    const bySet = new Map<string, string[]>();
    const rows = await this.tx.$queryRaw<{ id: string; changedPaths: unknown; current: boolean }[]>(Prisma.sql`
      SELECT "id", "changedPaths", "pathsHead" IS NOT DISTINCT FROM ${WANTED_HEAD_SQL} AS "current"
        FROM "MergeQueueEntry"
       WHERE "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId} AND "status" IN (${LIVE_STATUSES_SQL})`);
    for (const row of rows) {
      const key = JSON.stringify(lanesOf(row.current && Array.isArray(row.changedPaths) ? (row.changedPaths as string[]) : null));
      bySet.set(key, [...(bySet.get(key) ?? []), row.id]);
    }
    for (const [lanes, ids] of bySet) {
      await this.tx.mergeQueueEntry.updateMany({ where: { id: { in: ids }, queueId: this.queueId }, data: { lanes: JSON.parse(lanes) as string[] } });
    }
  }

  async setChecksUrl(batchId: string, url: string): Promise<void> {
    await this.tx.mergeQueueBatch.updateMany({ where: { id: batchId, queueId: this.queueId, organizationId: this.organizationId }, data: { checksUrl: url } });
  }

  /** The operation row is still pending and unfinished (nobody claimed it). */
  async operationClaimable(operationRowId: string): Promise<boolean> {
    const current = await this.tx.mergeQueueOperation.findFirst({
      where: { id: operationRowId, queueId: this.queueId },
      select: { outcome: true, finishedAt: true },
    });
    return current?.outcome === 'pending' && current.finishedAt === null;
  }

  /** Marks a pending operation `running`, owned by `lease`; false when another executor took it first. */
  async claimOperation(operationRowId: string, lease?: Lease): Promise<boolean> {
    const owner = lease ? { ownerHolder: lease.holder, ownerEpoch: lease.epoch } : {};
    return (
      (
        await this.tx.mergeQueueOperation.updateMany({
          where: { id: operationRowId, queueId: this.queueId, outcome: 'pending', finishedAt: null },
          data: { outcome: 'running', ...owner },
        })
      ).count === 1
    );
  }

  /** Finishes a pending operation the planner no longer waits for, without performing it. */
  async supersedeOperation(operationRowId: string): Promise<void> {
    await this.tx.mergeQueueOperation.updateMany({
      where: { id: operationRowId, queueId: this.queueId, outcome: 'pending', finishedAt: null },
      data: { finishedAt: new Date(), result: { superseded: true } },
    });
  }

  /** Records how an operation ended; one already finished (reconciled meanwhile) keeps its outcome. */
  async finishOperation(operationRowId: string, outcome: 'succeeded' | 'failed' | 'unknown', result: Prisma.InputJsonObject): Promise<void> {
    await this.tx.mergeQueueOperation.updateMany({
      where: { id: operationRowId, queueId: this.queueId, finishedAt: null },
      data: { outcome, finishedAt: new Date(), result },
    });
  }

  /** The executor completed an operation: its failures in a row are over (see engine/failure-policy.ts). */
  async resetFailures(): Promise<void> {
    await this.tx.mergeQueue.update({ where: { id: this.queueId }, data: { failureCount: 0, retryAt: null } });
  }

  /** An audit record in the event's transaction. */
  async audit(actor: AuditActor, record: Omit<AuditRecord, 'organizationId' | 'targetType' | 'targetId'>): Promise<void> {
    await this.auditService.record(this.tx, actor, { ...record, organizationId: this.organizationId, targetType: 'mergeQueue', targetId: this.queueId });
  }
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
  after?: (q: QueueTransaction, queue: LockedQueue, outcome: ApplyOutcome) => Promise<T>;
  /**
   * What to start once the transaction committed: `executor` (the default) kicks the queue's
   * executor when the planner issued operations and schedules its check-timeout tick; `timers`
   * only the tick (the executor itself, which picks up new operations as it runs); `none` nothing.
   */
  wake?: 'executor' | 'timers' | 'none';
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
  queue: LockedQueue;
  outcome: ApplyOutcome;
  result: T;
  entry?: EntryRow | null;
  batch?: BatchRow | null;
  view?: QueueView;
}

/**
 * Every Prisma statement of the merge queues: the API's reads, the executor's outbox, the
 * worker's sweep, and the one writer of a queue, `apply`. Every event is applied under
 * `SELECT ... FOR UPDATE` on the queue row, in one transaction that loads the planner state,
 * reduces, and writes back the state, the entry and batch rows that reads use, the revision, the
 * operations the planner asked for (the outbox the executor drains) and the event trail. Two writers
 * of one queue therefore run one after the other, and a crash leaves either all of an event or
 * none of it. After the commit, `apply` starts the executor and the check-timeout tick itself, so
 * that no caller can forget to. Reads of tenant data take the organization id; the worker's
 * (which works for every organization) say so with a null one or by their name.
 */
@Injectable()
export class MergeQueuesRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly scheduler: MergeQueueScheduler,
    @Optional() private readonly metrics?: MergeQueueMetrics,
    @Optional() private readonly statusOut?: MergeQueueStatusOut,
  ) {}

  // ---------------------------------------------------------------- the one writer

  async apply<T = void>(request: ApplyRequest<T>): Promise<Applied<T>> {
    const applied = await this.prisma.$transaction(async (tx) => {
      const locked = await this.lock(tx, request.organizationId, request.queueId);
      if (request.lease) assertHolds(locked.row, request.lease);
      if (locked.window && request.numbers?.length)
        Object.assign(locked, await withNamedEntries(tx, locked.row, locked.state, locked.window, { numbers: request.numbers }));
      const q = new QueueTransaction(tx, this.audit, locked.row.id, locked.row.organizationId);
      const events = await request.build(locked, q);
      // A window is reduced when every event keeps to it (planner/window.ts), and for a queue that
      // posts commit statuses when it also holds the front of the line; otherwise the whole state is.
      let before = locked.state;
      let reduced: ReturnType<typeof reduceEvents> = null;
      const { window } = locked;
      if (window && !events.some((e) => WHOLE_STATE_EVENTS.includes(e.type))) {
        ({ state: before } = await withNamedEntries(tx, locked.row, locked.state, window, namedBy(events)));
        reduced = reduceEvents(locked.row.id, before, events, window.edge);
        const front = (state: MergeQueueState) => frontHolds(state, window.edge, window.frontEdge, SHOWN_POSITIONS);
        if (reduced !== null && !(front(before) && front(reduced.state))) reduced = null;
      }
      if (reduced === null) {
        if (locked.window) before = await assembleState(tx, locked.row);
        reduced = reduceEvents(locked.row.id, before, events, null) as NonNullable<ReturnType<typeof reduceEvents>>;
      }
      const { state, operations, transitions } = reduced;
      const outcome: ApplyOutcome = { before, state, operations, transitions, changed: state !== before };
      let row = locked.row;
      const written = { entries: new Map<string, EntryRow>(), batches: new Map<string, BatchRow>() };
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
          (await tx.mergeQueueEntry.findFirst({ where: { id: wanted.entryId, queueId: row.id, organizationId: row.organizationId } }));
      }
      // The batch is read again when a callback wrote to it (a checks URL).
      if (wanted?.batchId !== undefined)
        out.batch = await tx.mergeQueueBatch.findFirst({ where: { id: wanted.batchId, queueId: row.id, organizationId: row.organizationId } });
      if (wanted?.view) out.view = (await this.view(tx, row.organizationId, row.id)) ?? undefined;
      return out;
    });
    const { state } = applied.queue;
    // Metrics count committed events only (landings, CI runs per landed PR, bisections).
    this.metrics?.applied(applied.queue.row.id, applied.outcome.before, state);
    // Commit statuses on the provider: handed to their own jobs, never awaited by the queue.
    this.statusOut?.applied(applied.queue.row, applied.outcome.before, state);
    const wake = request.wake ?? 'executor';
    if (wake === 'executor') await this.scheduler.afterCommit(request.queueId, state, applied.outcome.operations.length);
    if (wake === 'timers') await this.scheduler.scheduleTimers(request.queueId, state);
    // A hold cleared (resume, enable): the executor takes up the operations it left waiting.
    if (request.startExecutor || (applied.outcome.before.hold && !state.hold)) await this.scheduler.kick(request.queueId);
    return applied;
  }

  /**
   * Locks the queue row for the rest of the transaction and reads it with its planner state: a
   * window of it. A queue that posts commit
   * statuses also loads the front of the line they number (set-aside PRs count there).
   */
  private async lock(tx: Prisma.TransactionClient, organizationId: string | null, queueId: string): Promise<LockedQueue> {
    const found =
      organizationId === null
        ? await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "MergeQueue" WHERE "id" = ${queueId} FOR UPDATE`
        : await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "MergeQueue" WHERE "id" = ${queueId} AND "organizationId" = ${organizationId} FOR UPDATE`;
    if (found.length === 0) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id: queueId } });
    const row = await tx.mergeQueue.findUniqueOrThrow({ where: { id: queueId } });
    const posts = (await this.statusOut?.postsStatuses(row, tx)) ?? false;
    const { state, window } = await assembleWindow(tx, row, posts ? statusFront(row.plannerState as unknown as MergeQueueState) : 0);
    return { row, state, window };
  }

  /** The queue's planner state as the last event left it (one snapshot), or null when there is no such queue. */
  async plannerState(organizationId: string, queueId: string): Promise<MergeQueueState | null> {
    return this.prisma.$transaction(
      async (tx) => {
        const row = await tx.mergeQueue.findFirst({ where: { id: queueId, organizationId } });
        return row ? assembleState(tx, row) : null;
      },
      { isolationLevel: 'RepeatableRead' },
    );
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
    written: { entries: Map<string, EntryRow>; batches: Map<string, BatchRow> },
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
        await tx.mergeQueueEntry.upsert({ where: { id }, create, update: { ...rest, planner, ...(old === undefined && { plannerSeq: create.plannerSeq }) } }),
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

  // ---------------------------------------------------------------- the API's reads and the create

  /**
   * Creates a queue with its first planner state, audited, and returns it as the API renders it;
   * a 422 naming the limit when the organization already has `limit` queues.
   */
  async create(
    actor: Principal,
    data: { organizationId: string; repositoryId: string; baseRef: string; state: MergeQueueState },
    limit: number,
  ): Promise<QueueView> {
    const { organizationId, repositoryId, baseRef, state } = data;
    return this.prisma.$transaction(async (tx) => {
      // The organization's row serializes creations, so two at once cannot both take the last place.
      await tx.$queryRaw`SELECT id FROM "Organization" WHERE id = ${organizationId} FOR UPDATE`;
      if ((await tx.mergeQueue.count({ where: { organizationId } })) >= limit) {
        throw new AppError(MergeQueueErrors.QUEUE_LIMIT_REACHED, {
          message: `The organization already has ${limit} merge queues, the most this server allows (MERGE_QUEUE_MAX_PER_ORGANIZATION).`,
          metadata: { limit },
        });
      }
      const queue = await tx.mergeQueue.create({
        data: {
          organizationId,
          repositoryId,
          baseRef,
          revision: BigInt(state.revision),
          status: state.status,
          batchDepth: state.batchDepth,
          settings: state.config as unknown as Prisma.InputJsonObject,
          plannerState: documentOf(state),
        },
      });
      await new QueueTransaction(tx, this.audit, queue.id, organizationId).audit(actor, {
        action: AuditAction.MergeQueueCreated,
        metadata: { repositoryId, baseRef },
      });
      return this.render(tx, { ...queue, repository: await tx.codeSource.findUniqueOrThrow({ where: { id: repositoryId } }) });
    });
  }

  /** The organization's code source, or null. */
  codeSource(organizationId: string, id: string): Promise<CodeSource | null> {
    return this.prisma.codeSource.findFirst({ where: { id, organizationId } });
  }

  /** The organization's queues on the given repository (`owner/name`) connected through `integrationId` (provider webhooks). */
  queuesOfRepository(organizationId: string, integrationId: string, nameWithOwner: string): Promise<{ id: string; baseRef: string; settings: unknown }[]> {
    return this.prisma.mergeQueue.findMany({
      where: { organizationId, repository: { integrationId, nameWithOwner } },
      select: { id: true, baseRef: true, settings: true },
      orderBy: { createdAt: 'asc' },
      take: 100,
    });
  }

  /** Another queue of the repository that has `baseRef` as its base ref or is moving to it (`except`: the queue asking). */
  async baseRefTaken(
    organizationId: string,
    repositoryId: string,
    baseRef: string,
    options: { except?: string; pendingOnly?: boolean } = {},
  ): Promise<boolean> {
    const ref = options.pendingOnly ? { pendingBaseRef: baseRef } : { OR: [{ baseRef }, { pendingBaseRef: baseRef }] };
    const taken = await this.prisma.mergeQueue.findFirst({
      where: { organizationId, repositoryId, ...(options.except !== undefined && { id: { not: options.except } }), ...ref },
      select: { id: true },
    });
    return taken !== null;
  }

  /** The organization's queue with its code source, or a 404. */
  async find(organizationId: string, id: string): Promise<QueueWithSource> {
    const row = await this.prisma.mergeQueue.findFirst({ where: { id, organizationId }, include: { repository: true } });
    if (!row) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }

  /** Live entries of the queue whose kept paths are not those of the head they are to be tested with, in arrival order, with that head. */
  entriesWithoutPaths(queueId: string, atMost: number): Promise<{ id: string; head: string }[]> {
    return this.prisma.$queryRaw<{ id: string; head: string }[]>(Prisma.sql`
      SELECT "id", ${WANTED_HEAD_SQL} AS "head"
        FROM "MergeQueueEntry"
       WHERE "queueId" = ${queueId} AND ${LACKS_PATHS_SQL}
       ORDER BY "position"
       LIMIT ${atMost}`);
  }

  /**
   * Keeps paths asked outside the queue's lock, under it: for each entry still live, still to be
   * tested with the head they were asked for, and with no paths kept for that head meanwhile (a
   * request that moved the head asked its own), with the lanes of the groups the queue has now.
   * Returns how many entries took them.
   */
  async keepAskedPaths(queueId: string, asked: readonly { id: string; head: string; paths: ChangedPaths }[]): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ settings: unknown }[]>`SELECT "settings" FROM "MergeQueue" WHERE "id" = ${queueId} FOR UPDATE`;
      const groups = rows[0] ? pathGroupsOf(rows[0]) : [];
      if (groups.length === 0) return 0;
      const lanesOf = laneMatcher(groups);
      let kept = 0;
      for (const entry of asked) {
        const paths = entry.paths === null ? null : JSON.stringify(entry.paths);
        kept += await tx.$executeRaw(Prisma.sql`
          UPDATE "MergeQueueEntry"
             SET "changedPaths" = ${paths}::jsonb, "pathsHead" = ${entry.head}, "lanes" = ${JSON.stringify(lanesOf(entry.paths))}::jsonb
           WHERE "id" = ${entry.id} AND "queueId" = ${queueId} AND "status" IN (${LIVE_STATUSES_SQL})
             AND ${WANTED_HEAD_SQL} = ${entry.head} AND "pathsHead" IS DISTINCT FROM ${entry.head}`);
      }
      return kept;
    });
  }

  /**
   * Queues with path groups that hold a live entry with no paths kept for the head it is to be
   * tested with (the paths sweep): each queue with groups is looked at through its entries' index.
   */
  async queuesMissingPaths(): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>(Prisma.sql`
      SELECT g."id" FROM (${QUEUES_WITH_PATH_GROUPS_SQL}) g
       WHERE EXISTS (SELECT 1 FROM "MergeQueueEntry" WHERE "queueId" = g."id" AND ${LACKS_PATHS_SQL})
       ORDER BY g."id"`);
    return rows.map((r) => r.id);
  }

  /** The PR has a live entry in the queue (a provider event asks before calling the provider for it). */
  async hasLiveEntry(queueId: string, number: number): Promise<boolean> {
    return (await this.prisma.mergeQueueEntry.count({ where: { queueId, number, status: { in: [...LIVE_ENTRY_STATUSES] } } })) > 0;
  }

  /** An entry's stored status in the organization's queue, or null when there is none. */
  entryStatus(organizationId: string, queueId: string, entryId: string): Promise<MergeQueueEntryStatus | null> {
    return storedEntryStatus(this.prisma, organizationId, queueId, entryId);
  }

  /** The lanes of these entries of the queue (those that have some), by entry id. */
  async entryLanes(organizationId: string, queueId: string, entryIds: readonly string[]): Promise<Map<string, string[]>> {
    if (entryIds.length === 0) return new Map();
    const rows = await this.prisma.mergeQueueEntry.findMany({
      where: { organizationId, queueId, id: { in: [...entryIds] } },
      select: { id: true, lanes: true },
    });
    return new Map(rows.filter((r) => Array.isArray(r.lanes)).map((r) => [r.id, r.lanes as string[]]));
  }

  /** The organization's queue as the API renders it, or a 404. */
  async findView(organizationId: string, id: string): Promise<QueueView> {
    // One snapshot: the queue, its entries and its batches are read at once, so a land committed
    // between two of the reads never shows an entry `merged` beside its batch still `merging`.
    const view = await this.prisma.$transaction((tx) => this.view(tx, organizationId, id), { isolationLevel: 'RepeatableRead' });
    if (!view) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id } });
    return view;
  }

  /** A page of the organization's queues, newest first, each as the API renders it (the page's queues in one query). */
  async list(organizationId: string, query: PaginationQueryDto): Promise<Page<QueueView>> {
    const page = await paginate(fromModel(this.prisma.mergeQueue, { organizationId }), QUEUES_ORDER, query, (row) => row.id);
    const rows = new Map(
      (await this.prisma.mergeQueue.findMany({ where: { id: { in: page.data }, organizationId }, include: { repository: true } })).map((row) => [row.id, row]),
    );
    const data = await Promise.all(page.data.flatMap((id) => (rows.has(id) ? [this.render(this.prisma, rows.get(id)!)] : [])));
    return { ...page, data };
  }

  /** Batch rows of the organization's queue by id. */
  batches(organizationId: string, queueId: string, ids: readonly string[]): Promise<BatchRow[]> {
    return this.prisma.mergeQueueBatch.findMany({ where: { organizationId, queueId, id: { in: [...ids] } } });
  }

  /** A page of the queue's event trail, newest first. */
  events<R>(organizationId: string, queueId: string, query: PaginationQueryDto, map: (row: EventRow) => R): Promise<Page<R>> {
    return paginate(fromModel(this.prisma.mergeQueueEvent, { organizationId, queueId }), EVENTS_ORDER, query, map);
  }

  private async view(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<QueueView | null> {
    const row = await client.mergeQueue.findFirst({ where: { id, organizationId }, include: { repository: true } });
    return row ? this.render(client, row) : null;
  }

  /** Live entries and batches, plus the RECENT_FINAL most recent final ones of each. */
  private async render(client: Prisma.TransactionClient, row: QueueWithSource): Promise<QueueView> {
    const where = { queueId: row.id, organizationId: row.organizationId };
    const recent = { orderBy: [{ updatedAt: 'desc' as const }, { position: 'desc' as const }], take: RECENT_FINAL };
    const [liveEntries, finalEntries, liveBatches, finalBatches] = await Promise.all([
      client.mergeQueueEntry.findMany({ where: { ...where, status: { in: [...LIVE_ENTRY_STATUSES] } } }),
      client.mergeQueueEntry.findMany({ where: { ...where, status: { notIn: [...LIVE_ENTRY_STATUSES] } }, ...recent }),
      client.mergeQueueBatch.findMany({ where: { ...where, status: { in: [...LIVE_BATCH_STATUSES] } } }),
      client.mergeQueueBatch.findMany({ where: { ...where, status: { notIn: [...LIVE_BATCH_STATUSES] } }, ...recent }),
    ]);
    const entries = [...liveEntries, ...finalEntries].sort((a, b) => a.position - b.position);
    const batches = [...liveBatches, ...finalBatches].sort((a, b) => a.position - b.position);
    return { row, entries, batches };
  }

  // ---------------------------------------------------------------- the executor's lease

  /**
   * Takes the queue's lease for `holder` when it is free or expired (the database's clock decides),
   * growing the epoch; null when another executor holds it. Waits for a write under the queue lock
   * to finish, so no write of the previous holder can commit after the take.
   */
  async takeLease(queueId: string, holder: string, leaseMs: number): Promise<Lease | null> {
    const rows = await this.prisma.$queryRaw<{ leaseEpoch: bigint }[]>`
      UPDATE "MergeQueue" SET "leaseHolder" = ${holder}, "leaseEpoch" = "leaseEpoch" + 1,
        "leaseExpiresAt" = (now() AT TIME ZONE 'UTC') + ${leaseMs} * interval '1 millisecond'
      WHERE "id" = ${queueId} AND ("leaseHolder" IS NULL OR "leaseExpiresAt" IS NULL OR "leaseExpiresAt" <= (now() AT TIME ZONE 'UTC'))
      RETURNING "leaseEpoch"`;
    return rows.length === 1 ? { queueId, holder, epoch: BigInt(rows[0].leaseEpoch) } : null;
  }

  /** Extends the lease by `leaseMs` from now; false when it is no longer this holder's (taken over). */
  async renewLease(lease: Lease, leaseMs: number): Promise<boolean> {
    const count = await this.prisma.$executeRaw`
      UPDATE "MergeQueue" SET "leaseExpiresAt" = (now() AT TIME ZONE 'UTC') + ${leaseMs} * interval '1 millisecond'
      WHERE "id" = ${lease.queueId} AND "leaseHolder" = ${lease.holder} AND "leaseEpoch" = ${lease.epoch}`;
    return count === 1;
  }

  /** Gives the lease back (the epoch stays: the next take grows it); nothing when it is not held any more. */
  async releaseLease(lease: Lease): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE "MergeQueue" SET "leaseHolder" = NULL, "leaseExpiresAt" = NULL
      WHERE "id" = ${lease.queueId} AND "leaseHolder" = ${lease.holder} AND "leaseEpoch" = ${lease.epoch}`;
  }

  /** When the queue's lease (held by someone) expires, in milliseconds from now by the database's clock; null when free. */
  async leaseRemainingMs(queueId: string): Promise<number | null> {
    const rows = await this.prisma.$queryRaw<{ ms: number | null }[]>`
      SELECT CASE WHEN "leaseHolder" IS NULL THEN NULL ELSE GREATEST(0, EXTRACT(EPOCH FROM ("leaseExpiresAt" - (now() AT TIME ZONE 'UTC'))) * 1000)::float8 END AS ms
      FROM "MergeQueue" WHERE "id" = ${queueId}`;
    return rows[0]?.ms ?? null;
  }

  // ---------------------------------------------------------------- the worker (every organization)

  /** A queue with its code source, for its executor (any organization: the worker works for all). */
  queueForWorker(queueId: string): Promise<QueueWithSource | null> {
    return this.prisma.mergeQueue.findUnique({ where: { id: queueId }, include: { repository: true } });
  }

  /** Pending operations in the order the planner issued them, `kinds` in or out, leaving `exclude` out. */
  pendingOperations(
    queueId: string,
    filter: { kinds: readonly MergeQueueOperationKind[]; not?: boolean },
    exclude: readonly string[],
    take: number,
  ): Promise<OperationRow[]> {
    const kind = filter.not ? { notIn: [...filter.kinds] } : { in: [...filter.kinds] };
    return this.prisma.mergeQueueOperation.findMany({
      where: { queueId, finishedAt: null, outcome: 'pending', id: { notIn: [...exclude] }, kind },
      orderBy: [{ revision: 'asc' }, { ordinal: 'asc' }],
      take,
    });
  }

  /**
   * Puts an operation the executor claimed back to `pending` without an outcome: the provider
   * could not perform it now, or refused it (it did not happen; a land that may have happened is
   * safe to repeat, see MergeQueueExecutor.perform). It is performed again after the backoff, or
   * when the queue is resumed. The planner still holds it as started, which changes nothing.
   */
  async releaseOperation(queueId: string, operationRowId: string, lease: Lease): Promise<void> {
    // Only the claim of this lease: one a newer executor reconciled meanwhile is its own.
    await this.prisma.mergeQueueOperation.updateMany({
      where: { id: operationRowId, queueId, outcome: 'running', finishedAt: null, ownerHolder: lease.holder, ownerEpoch: lease.epoch },
      data: { outcome: 'pending' },
    });
  }

  /**
   * Operations marked `running` and not finished by an earlier lease than `lease` (whose holder
   * therefore lost it: it expired or was given back), in the order the planner issued them.
   */
  orphanedOperations(lease: Lease): Promise<OperationRow[]> {
    return this.prisma.mergeQueueOperation.findMany({
      where: { queueId: lease.queueId, finishedAt: null, outcome: 'running', OR: [{ ownerEpoch: null }, { ownerEpoch: { lt: lease.epoch } }] },
      orderBy: [{ revision: 'asc' }, { ordinal: 'asc' }],
    });
  }

  /**
   * What an executor run would find, in one statement and without the lease: the kinds of the
   * queue's unfinished operations and whether it is moving to a new base ref; null when the queue
   * is gone or quarantined (nothing to do until it is resumed).
   */
  async executorWork(queueId: string): Promise<{ kinds: MergeQueueOperationKind[]; moving: boolean } | null> {
    const rows = await this.prisma.$queryRaw<{ moving: boolean; kinds: MergeQueueOperationKind[] }[]>`
      SELECT q."pendingBaseRef" IS NOT NULL AS "moving",
        ARRAY(SELECT DISTINCT o."kind"::text FROM "MergeQueueOperation" o WHERE o."queueId" = q."id" AND o."finishedAt" IS NULL) AS "kinds"
      FROM "MergeQueue" q WHERE q."id" = ${queueId} AND NOT q."quarantined"`;
    return rows.length === 1 ? rows[0] : null;
  }

  /** The queue has unfinished operations, or is moving to a new base ref (a quarantined queue has no work until resumed). */
  async unfinishedWork(queueId: string): Promise<{ operations: number; moving: boolean }> {
    const queue = await this.prisma.mergeQueue.findUnique({ where: { id: queueId }, select: { pendingBaseRef: true, quarantined: true } });
    if (!queue || queue.quarantined) return { operations: 0, moving: false };
    const operations = await this.prisma.mergeQueueOperation.count({ where: { queueId, finishedAt: null } });
    return { operations, moving: queue.pendingBaseRef !== null };
  }

  /** How long the queue's executor still waits after its last failure (0: it may run). */
  async retryWaitMs(queueId: string, now = Date.now()): Promise<number> {
    const queue = await this.prisma.mergeQueue.findUnique({ where: { id: queueId }, select: { retryAt: true } });
    return queue?.retryAt ? Math.max(0, queue.retryAt.getTime() - now) : 0;
  }

  /** Counts one more executor failure in a row; returns the count. */
  async recordFailure(queueId: string): Promise<number> {
    const rows = await this.prisma.$queryRaw<
      { failureCount: number }[]
    >`UPDATE "MergeQueue" SET "failureCount" = "failureCount" + 1 WHERE "id" = ${queueId} RETURNING "failureCount"`;
    return rows[0]?.failureCount ?? 0;
  }

  /** The executor does not run before `at` (its backoff). */
  async setRetryAt(queueId: string, at: Date): Promise<void> {
    await this.prisma.mergeQueue.updateMany({ where: { id: queueId }, data: { retryAt: at } });
  }

  /**
   * What the sweep restarts: queues with unfinished operations, queues moving base ref (neither
   * quarantined), and queues with something due by now (`nextWakeAt`: a check deadline or a heavy-
   * run threshold of running CI; the list keeps its old name); each list by queue id. Every query
   * goes through a partial index, so idle queues cost nothing.
   */
  async sweepTargets(): Promise<{ unfinished: string[]; moving: string[]; ciRunning: string[] }> {
    const unfinished = await this.prisma.$queryRaw<{ queueId: string }[]>`
      SELECT DISTINCT o."queueId" FROM "MergeQueueOperation" o JOIN "MergeQueue" q ON q."id" = o."queueId"
      WHERE o."finishedAt" IS NULL AND NOT q."quarantined" ORDER BY o."queueId"`;
    const moving = await this.prisma.mergeQueue.findMany({
      where: { pendingBaseRef: { not: null }, quarantined: false },
      orderBy: { id: 'asc' },
      select: { id: true },
    });
    const due = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "MergeQueue" WHERE "nextWakeAt" IS NOT NULL AND "nextWakeAt" <= (now() AT TIME ZONE 'UTC') ORDER BY "id"`;
    return { unfinished: unfinished.map((r) => r.queueId), moving: moving.map((r) => r.id), ciRunning: due.map((r) => r.id) };
  }
}

/** The locked queue row still names the lease's holder and epoch; else LeaseLost (the write is dropped). */
function assertHolds(row: MergeQueue, lease: Lease): void {
  if (row.leaseHolder === lease.holder && row.leaseEpoch === lease.epoch) return;
  throw new LeaseLost(lease, row.leaseEpoch === lease.epoch ? 'the lease was given back' : `the queue is at epoch ${row.leaseEpoch}`);
}

/** A batch as its row holds it (also how changes are detected: rows are written only when this changes). */
function batchRow(queue: MergeQueue, state: MergeQueueState, b: BatchState) {
  const live = LIVE_BATCH_STATUSES.includes(b.status);
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
    operationKind: live ? (b.operation?.kind ?? null) : null,
    operationOutcome: live ? (b.operation?.outcome ?? null) : null,
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
    plannerPlain: isPlainWaiting(e),
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

/** Room for the new rows of one revision in `plannerSeq` (revision * this + index). */
const SEQ_PER_REVISION = 1n << 20n;

/** What a row is compared by: its row fields and its planner part (written only when this changes). */
function rowKey(data: object, planner: object): string {
  return JSON.stringify(data) + JSON.stringify(planner);
}

/** The queue row's document: the planner state without its entries and batches (they are rows). */
function documentOf(state: MergeQueueState): Prisma.InputJsonObject {
  const { entries: _entries, batches: _batches, ...rest } = state;
  return rest as unknown as Prisma.InputJsonObject;
}

/** The planner state of a queue row: its document with the entries and batches the state holds, in the state's order. */
async function assembleState(tx: Prisma.TransactionClient, row: MergeQueue): Promise<MergeQueueState> {
  // One round trip, each list as one JSON text (a row per entry through the raw-result mapping costs
  // several times more at 1,000 entries).
  const [lists] = await tx.$queryRaw<{ entries: string; batches: string }[]>`
    SELECT
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "MergeQueueEntry" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL)::text AS "entries",
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "MergeQueueBatch" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL)::text AS "batches"`;
  const doc = row.plannerState as unknown as MergeQueueState;
  return { ...doc, entries: JSON.parse(lists.entries) as EntryState[], batches: JSON.parse(lists.batches) as BatchState[] };
}

/**
 * A window of the queue's planner state (planner/window.ts), in one round trip: the document, every
 * entry the state holds that is not plain waiting (`MergeQueueEntry_hot_idx`), the first
 * `windowSize` plain waiting ones not set aside in planning order (`MergeQueueEntry_line_idx`;
 * one more tells whether any was left out), with `front` the first `front` plain waiting ones set
 * aside or not (the same, and `MergeQueueEntry_aside_idx`), all in the state's order, and every batch.
 */
async function assembleWindow(tx: Prisma.TransactionClient, row: MergeQueue, front: number): Promise<{ state: MergeQueueState; window: Window }> {
  const doc = row.plannerState as unknown as MergeQueueState;
  const size = windowSize(doc.config);
  const [lists] = await tx.$queryRaw<{ entries: string; seqs: string; edge: string | null; frontEdge: string | null; batches: string }[]>`
    WITH "line" AS (
      SELECT "planner", "plannerSeq", "priority", "position", row_number() OVER (ORDER BY "priority" DESC, "position") AS "n"
      FROM (SELECT "planner", "plannerSeq", "priority", "position" FROM "MergeQueueEntry"
            WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL AND "plannerPlain" AND NOT "setAside"
            ORDER BY "priority" DESC, "position" LIMIT ${Math.max(size, front) + 1}) AS "head"
    ), "front" AS (
      SELECT "planner", "plannerSeq", "priority", "position", row_number() OVER (ORDER BY "priority" DESC, "position") AS "n"
      FROM (SELECT "planner", "plannerSeq", "priority", "position" FROM "line"
            UNION ALL
            (SELECT "planner", "plannerSeq", "priority", "position" FROM "MergeQueueEntry"
             WHERE ${front} > 0 AND "queueId" = ${row.id} AND "planner" IS NOT NULL AND "plannerPlain" AND "setAside"
             ORDER BY "priority" DESC, "position" LIMIT ${front + 1})) AS "both"
      WHERE ${front} > 0
    ), "win" AS (
      -- The head of the line and the front overlap: each entry once, by its place in the state's list.
      SELECT DISTINCT ON ("plannerSeq") "planner", "plannerSeq" FROM (
        SELECT "planner", "plannerSeq" FROM "MergeQueueEntry" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL AND NOT "plannerPlain"
        UNION ALL
        SELECT "planner", "plannerSeq" FROM "line" WHERE "n" <= ${size}
        UNION ALL
        SELECT "planner", "plannerSeq" FROM "front" WHERE "n" <= ${front}
      ) AS "parts"
      ORDER BY "plannerSeq"
    )
    SELECT
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "win")::text AS "entries",
      (SELECT coalesce(json_agg("plannerSeq" ORDER BY "plannerSeq"), '[]') FROM "win")::text AS "seqs",
      (SELECT json_build_object('priority', l."priority", 'position', l."position") FROM "line" l
        WHERE l."n" = ${size} AND EXISTS (SELECT 1 FROM "line" WHERE "n" = ${size + 1}))::text AS "edge",
      (SELECT json_build_object('priority', f."priority", 'position', f."position") FROM "front" f
        WHERE f."n" = ${front} AND EXISTS (SELECT 1 FROM "front" WHERE "n" = ${front + 1}))::text AS "frontEdge",
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "MergeQueueBatch" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL)::text AS "batches"`;
  return {
    state: { ...doc, entries: JSON.parse(lists.entries) as EntryState[], batches: JSON.parse(lists.batches) as BatchState[] },
    window: {
      edge: lists.edge === null ? null : (JSON.parse(lists.edge) as WindowEdge),
      frontEdge: lists.frontEdge === null ? null : (JSON.parse(lists.frontEdge) as WindowEdge),
      seqs: JSON.parse(lists.seqs) as number[],
    },
  };
}

/** The window with the entries named by id, or live by PR number, that it left out, in the state's order (and their places). */
async function withNamedEntries(
  tx: Prisma.TransactionClient,
  row: MergeQueue,
  state: MergeQueueState,
  window: Window,
  { ids = [], numbers = [] }: { ids?: readonly string[]; numbers?: readonly number[] },
): Promise<{ state: MergeQueueState; window: Window }> {
  if (ids.length === 0 && numbers.length === 0) return { state, window };
  // Every entry left out is plain waiting, and therefore live.
  const found = await tx.$queryRaw<{ planner: EntryState; seq: bigint }[]>`
    SELECT "planner", "plannerSeq" AS "seq" FROM "MergeQueueEntry"
    WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL AND "plannerPlain" AND ("id" = ANY(${ids}::text[]) OR "number" = ANY(${numbers}::int[]))`;
  const held = new Set(state.entries.map((e) => e.id));
  const added = found.filter((f) => !held.has(f.planner.id));
  if (added.length === 0) return { state, window };
  const all = [...state.entries.map((e, i) => ({ e, seq: window.seqs[i] })), ...added.map((f) => ({ e: f.planner, seq: Number(f.seq) }))].sort(
    (a, b) => a.seq - b.seq,
  );
  return { state: { ...state, entries: all.map((x) => x.e) }, window: { ...window, seqs: all.map((x) => x.seq) } };
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

/** Two entry states hold the same values: field by field (today all primitives; a structured field is compared as JSON). */
function sameEntry(a: EntryState, b: EntryState): boolean {
  const [x, y] = [a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>];
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const k of keys) {
    if (x[k] === y[k]) continue;
    if (typeof x[k] !== 'object' || typeof y[k] !== 'object' || x[k] === null || y[k] === null || JSON.stringify(x[k]) !== JSON.stringify(y[k])) return false;
  }
  return true;
}
