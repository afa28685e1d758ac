import type { MergeQueue, Prisma } from '@/generated/prisma/client';
import { batchRowId } from '../ids';
import {
  type BatchState,
  type EntryState,
  FINAL_BATCH_STATUSES,
  FINAL_ENTRY_STATUSES,
  isPlainWaiting,
  MERGE_QUEUE_BATCH_STATUSES,
  MERGE_QUEUE_ENTRY_STATUSES,
  type MergeQueueBatchStatus,
  type MergeQueueEntryStatus,
  type MergeQueueEvent,
  type MergeQueueState,
} from '../../planner';

/*
 * A queue's rows and its planner state, both ways, and the status lists every statement and read
 * shares (pure: no client, no I/O). The queue row keeps the planner state without its entries and
 * batches (`documentOf`); each entry and batch is a row of its own, its planner part (`planner`)
 * beside the columns the API reads and filters on (`entryRow`, `batchRow`); `stateOf` puts the
 * state back together from the document and the planner parts, in the state's order.
 */

/** Entries still in the queue (the planner's final statuses are the rest). */
export const LIVE_ENTRY_STATUSES: readonly MergeQueueEntryStatus[] = MERGE_QUEUE_ENTRY_STATUSES.filter((s) => !FINAL_ENTRY_STATUSES.includes(s));
/** Batches not yet landed, failed or withdrawn. */
export const LIVE_BATCH_STATUSES: readonly MergeQueueBatchStatus[] = MERGE_QUEUE_BATCH_STATUSES.filter((s) => !FINAL_BATCH_STATUSES.includes(s));

/** The queue a row belongs to. */
type QueueIds = Pick<MergeQueue, 'id' | 'organizationId'>;

/** A batch as its row holds it (also how changes are detected: rows are written only when this changes). */
export function batchRow(queue: QueueIds, state: MergeQueueState, b: BatchState) {
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

/** An entry as its row holds it. */
export function entryRow(queue: QueueIds, e: EntryState) {
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
export function eventDetail(queueId: string, event: MergeQueueEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const e = event as unknown as Record<string, unknown>;
  for (const key of ['operationId', 'entryId', 'reason', 'name', 'state', 'headSha', 'priority', 'setAside', 'baseSha', 'candidateSha', 'title', 'lanes']) {
    if (e[key] !== undefined) out[key] = e[key];
  }
  if (typeof e.batchId === 'string') out.batchId = batchRowId(queueId, e.batchId);
  if (event.type === 'enqueue') Object.assign(out, { entryId: event.entry.id, number: event.entry.number, headSha: event.entry.headSha });
  return out;
}

/** Room for the new rows of one revision in `plannerSeq` (revision * this + index). */
export const SEQ_PER_REVISION = 1n << 20n;

/** What a row is compared by: its row fields and its planner part (written only when this changes). */
export function rowKey(data: object, planner: object): string {
  return JSON.stringify(data) + JSON.stringify(planner);
}

/** The queue row's document: the planner state without its entries and batches (they are rows). */
export function documentOf(state: MergeQueueState): Prisma.InputJsonObject {
  const { entries: _entries, batches: _batches, ...rest } = state;
  return rest as unknown as Prisma.InputJsonObject;
}

/** The planner state of a queue row: its document with the entries and batches given (the planner parts of their rows, in the state's order). */
export function stateOf(row: Pick<MergeQueue, 'plannerState'>, entries: EntryState[], batches: BatchState[]): MergeQueueState {
  const doc = row.plannerState as unknown as MergeQueueState;
  return { ...doc, entries, batches };
}

/** Two entry states hold the same values: field by field (today all primitives; a structured field is compared as JSON). */
export function sameEntry(a: EntryState, b: EntryState): boolean {
  const [x, y] = [a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>];
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const k of keys) {
    if (x[k] === y[k]) continue;
    if (typeof x[k] !== 'object' || typeof y[k] !== 'object' || x[k] === null || y[k] === null || JSON.stringify(x[k]) !== JSON.stringify(y[k])) return false;
  }
  return true;
}
