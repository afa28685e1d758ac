import {
  assertBatchTransition,
  assertEntryTransition,
  assertQueueTransition,
} from './merge-queue.transitions';
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
} from './merge-queue.types';

/*
 * The state one reducer step works on (`Ctx`) and the small helpers every part of the planner
 * shares: ids, the asserting status setters, batch and entry look-ups, issuing operations,
 * releasing entries and withdrawing batches.
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
export function batchOutcome(
  batch: BatchState,
  requiredChecks: readonly string[],
): 'pending' | 'passed' | 'failed' {
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

// ---------------------------------------------------------------------------------------------
// Small helpers

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

export function liveBatches(ctx: Ctx): BatchState[] {
  return ctx.s.batches.filter((b) => !isFinalBatch(b));
}

export function childrenOf(ctx: Ctx, b: BatchState): BatchState[] {
  return ctx.s.batches.filter((c) => c.parentId === b.id && !isFinalBatch(c));
}

export function isSealed(b: BatchState): boolean {
  return b.status === 'merging' || b.status === 'reconciling';
}

export function entriesOf(ctx: Ctx, b: BatchState): EntryState[] {
  return b.entryIds.map((id) => ctx.entryById.get(id)).filter((e): e is EntryState => !!e);
}

export function outcome(ctx: Ctx, b: BatchState): 'pending' | 'passed' | 'failed' {
  return batchOutcome(b, ctx.s.config.requiredChecks);
}

export function issue(ctx: Ctx, b: BatchState, op: MergeQueueOperation): void {
  b.operation = { id: op.id, kind: op.kind, outcome: 'pending' };
  ctx.ops.push(op);
  ctx.changed = true;
}

export function issueCleanup(ctx: Ctx, b: BatchState): void {
  const id = nextId(ctx, 'operation');
  ctx.s.cleanups.push({ operationId: id, batchId: b.id, candidateSha: b.candidateSha });
  ctx.ops.push({ id, kind: 'cleanup', batchId: b.id, candidateSha: b.candidateSha });
  ctx.changed = true;
}

export function resetEvidence(e: EntryState): void {
  e.failuresAlone = 0;
  e.suspectGroup = null;
  e.cleared = false;
  e.heavyProbability = null;
}

/** Takes an entry out of its batch, applying a removal or head update deferred while sealed. */
export function releaseEntry(ctx: Ctx, e: EntryState, to: 'queued' | 'failed'): void {
  e.batchId = null;
  ctx.changed = true;
  if (e.pendingRemoval) {
    e.pendingRemoval = false;
    e.pendingHeadSha = null;
    setEntryStatus(ctx, e, 'removed');
    return;
  }
  if (e.pendingHeadSha !== null) {
    e.headSha = e.pendingHeadSha;
    e.pendingHeadSha = null;
    resetEvidence(e);
    setEntryStatus(ctx, e, 'queued');
    return;
  }
  setEntryStatus(ctx, e, to);
}

/** Withdraws a batch and everything built on it; sealed batches are withdrawn once resolved. */
export function withdraw(ctx: Ctx, b: BatchState, reason: string, resolved = false): void {
  if (isFinalBatch(b)) return;
  for (const child of childrenOf(ctx, b)) withdraw(ctx, child, `built on withdrawn ${b.id}`);
  if (isSealed(b) && !resolved) {
    if (!b.withdrawOnResolve) {
      b.withdrawOnResolve = true;
      ctx.changed = true;
    }
    return;
  }
  const hadArtifacts = b.operation !== null || b.candidateSha !== null;
  setBatchStatus(ctx, b, 'withdrawn');
  b.operation = null;
  b.failureReason = b.failureReason ?? reason;
  for (const e of entriesOf(ctx, b)) {
    if (e.batchId === b.id && (e.status === 'testing' || e.status === 'merging')) {
      releaseEntry(ctx, e, 'queued');
    }
  }
  if (hadArtifacts) issueCleanup(ctx, b);
}

export function createBatch(
  ctx: Ctx,
  role: BatchRole,
  entries: EntryState[],
  parent: BatchState | null,
): BatchState {
  const b: BatchState = {
    id: nextId(ctx, 'batch'),
    position: ctx.s.counters.batch,
    entryIds: entries.map((e) => e.id),
    prNumbers: entries.map((e) => e.number),
    status: 'preparing',
    role,
    parentId: parent ? parent.id : null,
    baseSha: parent ? null : ctx.s.baseSha,
    candidateSha: null,
    published: false,
    ciStartedAt: null,
    ciContentIds: [],
    ciSeenHeavy: false,
    checks: [],
    failureReason: null,
    operation: null,
    interruptedKind: null,
    withdrawOnResolve: false,
  };
  for (const e of entries) {
    setEntryStatus(ctx, e, 'testing');
    e.batchId = b.id;
  }
  ctx.s.batches.push(b);
  ctx.batchById.set(b.id, b);
  ctx.changed = true;
  return b;
}

export function findByOperation(ctx: Ctx, operationId: string): BatchState | undefined {
  return ctx.s.batches.find((b) => b.operation?.id === operationId && !isFinalBatch(b));
}
