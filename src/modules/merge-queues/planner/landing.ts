import { recordChainOutcome } from './chain';
import { learnFromLandedEntry } from './ci-weight';
import { ewma } from './ewma';
import { landKeepsOrder } from './order';
import { childrenOf, type Ctx, entriesOf, isFinalBatch, issue, nextId, outcome, setBatchStatus, setEntryStatus } from './step';
import type { BatchState } from './types';
import { issueCleanup } from './withdrawal';

/*
 * Landing: one land at a time, in order. `issueLand` decides when a `land` goes out; `markLanded`
 * records a land that happened (its success, or a readBack that found the candidate on the base).
 * A rejected land (the base moved) withdraws the batch (operation-outcomes.ts); a land that ended
 * unknown is settled by reconciliation.ts.
 */

/**
 * Issues the `land` of the next batch, if any: one that is `ready`, whose parent is the current
 * base, and whose candidate passed every required check; nothing may be merging or reconciling.
 * While the chain is live only chain batches land (a passing probe's PRs ride in the chain).
 * Nothing lands before a PR queued ahead of it that a bisection holds (order.ts).
 */
export function issueLand(ctx: Ctx): void {
  const { s } = ctx;
  if (s.batches.some((b) => b.status === 'merging' || b.status === 'reconciling')) return;
  const landable = (b: BatchState) =>
    b.role !== 'screen' &&
    b.status === 'ready' &&
    b.parentId === null &&
    b.baseSha === s.baseSha &&
    b.candidateSha !== null &&
    outcome(ctx, b) === 'passed' &&
    landKeepsOrder(s, b);
  const chainLive = s.batches.some((b) => b.role === 'chain' && !isFinalBatch(b));
  const next = chainLive ? s.batches.find((b) => b.role === 'chain' && landable(b)) : s.batches.find((b) => landable(b));
  if (!next || next.candidateSha === null) return;
  setBatchStatus(ctx, next, 'merging');
  for (const e of entriesOf(ctx, next)) setEntryStatus(ctx, e, 'merging');
  issue(ctx, next, {
    id: nextId(ctx, 'operation'),
    kind: 'land',
    batchId: next.id,
    candidateSha: next.candidateSha,
    expectedBaseSha: s.baseSha,
    prNumbers: [...next.prNumbers],
  });
}

/**
 * Records that `b` landed and the base is now `newBase`: its PRs are merged (a removal or head
 * update deferred during the land is dropped: the PR is merged), the failure rates and CI weights
 * learn from it, and the batch built on it is re-parented onto the base.
 */
export function markLanded(ctx: Ctx, b: BatchState, newBase: string | null): void {
  const { s } = ctx;
  setBatchStatus(ctx, b, 'landed');
  b.operation = null;
  b.withdrawOnResolve = false;
  if (newBase !== null) s.baseSha = newBase;
  for (const e of entriesOf(ctx, b)) {
    e.pendingHeadSha = null;
    e.pendingRemoval = false;
    delete e.removal;
    setEntryStatus(ctx, e, 'merged');
    s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 0);
    learnFromLandedEntry(ctx, e.heavyProbability);
  }
  if (b.role === 'chain') recordChainOutcome(ctx, false, b.screened === true);
  s.stats.landedBatches += 1;
  for (const child of childrenOf(ctx, b)) {
    child.parentId = null;
    child.baseSha = child.baseSha ?? b.candidateSha;
  }
  issueCleanup(ctx, b);
}
