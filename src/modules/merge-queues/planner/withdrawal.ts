import { childrenOf, type Ctx, entriesOf, isFinalBatch, isSealed, nextId, setBatchStatus, setEntryStatus } from './step';
import type { BatchState, EntryState } from './types';

/*
 * Withdrawal: dropping a batch without blame, and what becomes of its entries and its candidate.
 * A batch is withdrawn with everything built on it. A sealed batch (land in flight, or
 * reconciling) is only marked (`withdrawOnResolve`) and withdrawn once the truth is known.
 * Entries leave a batch through `releaseEntry`, which applies a removal or head update that was
 * deferred while the batch was sealed. Every candidate that existed is cleaned up.
 */

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
    if (e.screenId === b.id) e.screenId = null;
    if (e.batchId === b.id && (e.status === 'testing' || e.status === 'merging')) {
      releaseEntry(ctx, e, 'queued');
    }
  }
  if (hadArtifacts) issueCleanup(ctx, b);
}

/** Takes an entry out of its batch, applying a removal or head update deferred while sealed. */
export function releaseEntry(ctx: Ctx, e: EntryState, to: 'queued' | 'failed'): void {
  e.batchId = null;
  ctx.changed = true;
  if (e.pendingRemoval) {
    e.pendingRemoval = false;
    e.pendingHeadSha = null;
    if (e.removal !== undefined) applyRemoval(e, e.removal);
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

/** The reason and head a removal with a reason leaves the entry with. */
export function applyRemoval(e: EntryState, removal: { reason: string; headSha?: string }): void {
  e.block = removal.reason;
  if (removal.headSha !== undefined) e.headSha = removal.headSha;
  delete e.removal;
}

/** A new head (or a conflict) makes what was learned about the old one worthless. */
export function resetEvidence(e: EntryState): void {
  e.failuresAlone = 0;
  e.suspectGroup = null;
  e.cleared = false;
  e.heavyProbability = null;
  delete e.suspectedFor;
  delete e.exonerations;
  delete e.soloRuns;
  delete e.badProbability;
  delete e.failingRuns;
  if (e.screened) e.screened = false;
  if (e.screenGroup) e.screenGroup = null;
  if (e.screenBlocked) e.screenBlocked = false;
}

/** Asks the executor to delete the batch's candidate ref and cancel its CI (idempotent). */
export function issueCleanup(ctx: Ctx, b: BatchState): void {
  const id = nextId(ctx, 'operation');
  ctx.s.cleanups.push({ operationId: id, batchId: b.id, candidateSha: b.candidateSha });
  ctx.ops.push({ id, kind: 'cleanup', batchId: b.id, candidateSha: b.candidateSha });
  ctx.changed = true;
}

/** A cleanup's success forgets it; returns false when `operationId` is not a pending cleanup. */
export function cleanupSucceeded(ctx: Ctx, operationId: string): boolean {
  const i = ctx.s.cleanups.findIndex((c) => c.operationId === operationId);
  if (i < 0) return false;
  ctx.s.cleanups.splice(i, 1);
  ctx.changed = true;
  return true;
}

/**
 * A cleanup that failed or ended unknown is issued again under a new id; returns false when
 * `operationId` is not a pending cleanup.
 */
export function cleanupUnfinished(ctx: Ctx, operationId: string): boolean {
  const i = ctx.s.cleanups.findIndex((c) => c.operationId === operationId);
  if (i < 0) return false;
  const old = ctx.s.cleanups[i];
  ctx.s.cleanups.splice(i, 1);
  const id = nextId(ctx, 'operation');
  ctx.s.cleanups.push({ operationId: id, batchId: old.batchId, candidateSha: old.candidateSha });
  ctx.ops.push({ id, kind: 'cleanup', batchId: old.batchId, candidateSha: old.candidateSha });
  ctx.changed = true;
  return true;
}
