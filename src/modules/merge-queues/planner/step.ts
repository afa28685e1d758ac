import { newBatchState } from './batch-state';
import { assertBatchTransition, assertEntryTransition, assertQueueTransition } from './transitions';
import type {
  BatchRole,
  BatchState,
  EntryState,
  MergeQueueBatchStatus,
  MergeQueueEntryStatus,
  MergeQueueOperation,
  MergeQueueState,
  MergeQueueStatus,
  StatusTransition,
} from './types';

/*
 * One reducer step: the state it works on (`Ctx`, a private copy of the queue) and the few
 * primitives every rule uses to change it. Status changes go only through the asserting setters,
 * which record each step; operations go out only through `issue`. Nothing here decides anything.
 */

export interface Ctx {
  s: MergeQueueState;
  ops: MergeQueueOperation[];
  /** Every status step taken in this event, recorded by the asserting setters. */
  transitions: StatusTransition[];
  changed: boolean;
  at: number;
  entryById: Map<string, EntryState>;
  batchById: Map<string, BatchState>;
}

export const LIVE_ENTRY: readonly MergeQueueEntryStatus[] = ['queued', 'testing', 'blocked', 'merging'];
const FINAL_BATCH: readonly MergeQueueBatchStatus[] = ['landed', 'failed', 'withdrawn'];

/** A required check's combined result on the batch's candidate. */
export function batchOutcome(batch: BatchState, requiredChecks: readonly string[]): 'pending' | 'passed' | 'failed' {
  let allPassed = requiredChecks.length > 0;
  for (const name of requiredChecks) {
    const check = batch.checks.find((c) => c.name === name);
    if (check?.state === 'failure') return 'failed';
    if (check?.state !== 'success') allPassed = false;
  }
  return allPassed ? 'passed' : 'pending';
}

export function isFinalBatch(batch: BatchState): boolean {
  return FINAL_BATCH.includes(batch.status);
}

/** A batch whose land is in flight, or whose last operation ended unknown: it waits for the truth. */
export function isSealed(b: BatchState): boolean {
  return b.status === 'merging' || b.status === 'reconciling';
}

export function outcome(ctx: Ctx, b: BatchState): 'pending' | 'passed' | 'failed' {
  return batchOutcome(b, ctx.s.config.requiredChecks);
}

export function nextId(ctx: Ctx, kind: 'batch' | 'operation' | 'group'): string {
  ctx.s.counters[kind] += 1;
  const prefix = kind === 'batch' ? 'b' : kind === 'operation' ? 'op' : 'g';
  return `${prefix}${ctx.s.counters[kind]}`;
}

export function setQueueStatus(ctx: Ctx, to: MergeQueueStatus): void {
  if (ctx.s.status === to) return;
  assertQueueTransition(ctx.s.status, to);
  ctx.transitions.push({ subject: 'queue', id: 'queue', from: ctx.s.status, to });
  ctx.s.status = to;
  ctx.changed = true;
}

export function setBatchStatus(ctx: Ctx, b: BatchState, to: MergeQueueBatchStatus): void {
  if (b.status === to) return;
  assertBatchTransition(b.status, to, b.id);
  ctx.transitions.push({ subject: 'batch', id: b.id, from: b.status, to });
  b.status = to;
  ctx.changed = true;
}

export function setEntryStatus(ctx: Ctx, e: EntryState, to: MergeQueueEntryStatus): void {
  if (e.status === to) return;
  assertEntryTransition(e.status, to, e.id);
  ctx.transitions.push({ subject: 'entry', id: e.id, from: e.status, to });
  e.status = to;
  ctx.changed = true;
}

/** Records that the base branch's head is now `sha` (a land, an outside push, a readBack). */
export function moveBase(ctx: Ctx, sha: string): void {
  if (ctx.s.baseSha === sha) return;
  ctx.s.baseSha = sha;
  ctx.changed = true;
}

export function liveBatches(ctx: Ctx): BatchState[] {
  return ctx.s.batches.filter((b) => !isFinalBatch(b));
}

export function childrenOf(ctx: Ctx, b: BatchState): BatchState[] {
  return ctx.s.batches.filter((c) => c.parentId === b.id && !isFinalBatch(c));
}

export function entriesOf(ctx: Ctx, b: BatchState): EntryState[] {
  return b.entryIds.map((id) => ctx.entryById.get(id)).filter((e): e is EntryState => !!e);
}

export function findByOperation(ctx: Ctx, operationId: string): BatchState | undefined {
  return ctx.s.batches.find((b) => b.operation?.id === operationId && !isFinalBatch(b));
}

/** Sends an operation for `b`; it becomes the batch's current (unfinished) operation. */
export function issue(ctx: Ctx, b: BatchState, op: MergeQueueOperation): void {
  b.operation = { id: op.id, kind: op.kind, outcome: 'pending' };
  ctx.ops.push(op);
  ctx.changed = true;
}

/** A new batch in `preparing`, holding `entries` (which become `testing`), built on `parent` or the base. */
export function createBatch(ctx: Ctx, role: BatchRole, entries: EntryState[], parent: BatchState | null): BatchState {
  const b = addBatch(ctx, role, entries, parent);
  for (const e of entries) {
    setEntryStatus(ctx, e, 'testing');
    e.batchId = b.id;
  }
  return b;
}

/** A new batch in `preparing` naming `entries`, built on `parent` or the base; the entries are left as they are. */
export function addBatch(ctx: Ctx, role: BatchRole, entries: EntryState[], parent: BatchState | null): BatchState {
  const b = newBatchState({
    id: nextId(ctx, 'batch'),
    position: ctx.s.counters.batch,
    entryIds: entries.map((e) => e.id),
    prNumbers: entries.map((e) => e.number),
    role,
    parentId: parent ? parent.id : null,
    baseSha: parent ? null : ctx.s.baseSha,
  });
  ctx.s.batches.push(b);
  ctx.batchById.set(b.id, b);
  ctx.changed = true;
  return b;
}

/** The unlanded batches `b` is built on, nearest the base first. */
export function liveAncestors(ctx: Ctx, b: BatchState): BatchState[] {
  const out: BatchState[] = [];
  for (let id = b.parentId; id !== null;) {
    const parent = ctx.batchById.get(id);
    if (!parent || parent.status === 'landed') break;
    out.unshift(parent);
    id = parent.parentId;
  }
  return out;
}
