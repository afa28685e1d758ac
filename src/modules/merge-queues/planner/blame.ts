import { clearAndWithdraw, releaseSiblingSuspects } from './bisection';
import { blameByPosterior, exonerateParts, failuresOf } from './posterior';
import { recordChainOutcome } from './chain';
import { ewma } from './ewma';
import { heldOvertakenBy } from './order';
import { settleScreen } from './screening';
import { childrenOf, type Ctx, entriesOf, isFinalBatch, isSealed, nextId, outcome, setBatchStatus } from './step';
import type { BatchState, EntryState } from './types';
import { issueCleanup, releaseEntry, withdraw } from './withdrawal';

/*
 * Failure and blame: what a candidate's result means. A failed candidate built directly on the
 * base blames its own PRs; batches built on a failed candidate are withdrawn; a candidate on a
 * base that moved is stale. A single PR is judged by the posterior rule (posterior.ts), or by the
 * fixed flaky budget where the queue sets `flakyRetries`; a larger blamed batch becomes a suspect
 * group for bisection (bisection.ts).
 */

/**
 * Applies one consequence of the batches' results and returns whether it did; the reducer calls
 * it until nothing is left, so each step sees the state the previous one left.
 */
export function settleOnce(ctx: Ctx): boolean {
  const { s } = ctx;
  for (const b of s.batches) {
    if (isFinalBatch(b) || isSealed(b)) continue;
    if (b.role === 'screen') {
      if (settleScreen(ctx, b)) return true;
      continue;
    }
    const root = b.parentId === null;
    const stale = root && b.baseSha !== s.baseSha;
    const result = outcome(ctx, b);
    // A passing part answers for its PRs at once, whatever becomes of it: they are not suspected
    // again for the failure they were probed for (posterior.ts).
    if (result === 'passed' && b.role === 'part') exonerateParts(ctx, b);
    if (stale) {
      // A stale probe still answers for its own PRs (its base passed CI and landed); a stale
      // chain root is only withdrawn, and its PRs are planned again on the new base.
      if (b.role === 'part' && b.status === 'testing' && result === 'pending') continue;
      if (b.role === 'part' && result === 'failed') {
        blame(ctx, b);
        return true;
      }
      if (b.role === 'part' && result === 'passed') clearAndWithdraw(ctx, b, 'base moved before it could land');
      else withdraw(ctx, b, 'base moved before it could land');
      return true;
    }
    if (result === 'failed') {
      const children = childrenOf(ctx, b);
      for (const child of children) withdraw(ctx, child, `built on failing ${b.id}`);
      if (root) {
        blame(ctx, b);
        return true;
      }
      if (children.length > 0) return true;
    }
    if (result === 'passed' && b.status === 'testing') {
      setBatchStatus(ctx, b, 'ready');
      return true;
    }
    // Queue order (order.ts): a chain batch that would land PRs queued behind a PR a bisection
    // holds can never land before it; it is withdrawn (with what is built on it) and planned again
    // behind the held PRs.
    if (b.role === 'chain') {
      const held = heldOvertakenBy(s, b);
      if (held.length > 0) {
        withdraw(ctx, b, `queue order: waits behind #${held.map((e) => e.number).join(', #')} of a bisected batch`);
        return true;
      }
    }
    if (result === 'passed' && b.role === 'part' && s.batches.some((c) => c.role === 'chain' && !isFinalBatch(c))) {
      clearAndWithdraw(ctx, b, 'probe passed while the chain was landing');
      return true;
    }
  }
  return false;
}

/**
 * A failed candidate built directly on the base: its own PRs are to blame. With `flakyRetries`
 * set, the fixed flaky budget: a single PR is retried alone until the budget is spent, then
 * `failed`. Otherwise the posterior rule (posterior.ts). Either way a larger batch becomes a
 * suspect group that the planner bisects into parts, and its PRs are suspected for the run's
 * failures (the failing tests, or the failing checks where CI named none).
 */
function blame(ctx: Ctx, b: BatchState): void {
  const { s } = ctx;
  setBatchStatus(ctx, b, 'failed');
  b.operation = null;
  s.stats.failedBatches += 1;
  if (b.role === 'chain') recordChainOutcome(ctx, true, b.screened === true);
  const entries = entriesOf(ctx, b).filter((e) => e.batchId === b.id && e.status === 'testing');
  const failures = failuresOf(ctx, b);
  if (s.config.flakyRetries === null) {
    blameByPosterior(ctx, b, entries, failures);
    issueCleanup(ctx, b);
    return;
  }
  if (b.role === 'part') releaseSiblingSuspects(ctx, entries);
  if (entries.length === 1) {
    const e = entries[0];
    e.failuresAlone += 1;
    e.cleared = false;
    e.suspectGroup = null;
    e.suspectedFor = failures;
    if (e.failuresAlone > s.config.flakyRetries) {
      s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 1);
      releaseEntry(ctx, e, 'failed');
    } else {
      // A PR that failed alone loses its place (order.ts): its retry is queued at the back.
      toBackOfLine(ctx, e);
      releaseEntry(ctx, e, 'queued');
    }
  } else {
    const group = nextId(ctx, 'group');
    for (const e of entries) {
      e.suspectGroup = group;
      e.suspectedFor = failures;
      e.cleared = false;
      releaseEntry(ctx, e, 'queued');
    }
  }
  issueCleanup(ctx, b);
}

/** Gives `e` the next arrival position: it is planned after every PR queued so far. */
export function toBackOfLine(ctx: Ctx, e: EntryState): void {
  ctx.s.counters.entry += 1;
  e.position = ctx.s.counters.entry;
  ctx.changed = true;
}
