import { clearAndWithdraw, releaseSiblingSuspects } from './bisection';
import { prefixPartSize, recordChainOutcome } from './chain';
import { failedAlone } from './alone';
import { heldOvertakenBy } from './order';
import { childrenOf, type Ctx, entriesOf, isFinalBatch, isSealed, nextId, outcome, setBatchStatus } from './step';
import type { BatchState, EntryState } from './types';
import { issueCleanup, releaseEntry, withdraw } from './withdrawal';

/*
 * Failure and blame: what a candidate's result means. A failed candidate built directly on the
 * base blames its own PRs; batches built on a failed candidate are withdrawn; a candidate on a
 * base that moved is stale. A single PR is retried alone within the flaky budget; a larger
 * blamed batch becomes a suspect group for bisection (bisection.ts).
 */

/**
 * Applies one consequence of the batches' results and returns whether it did; the reducer calls
 * it until nothing is left, so each step sees the state the previous one left.
 */
export function settleOnce(ctx: Ctx): boolean {
  const { s } = ctx;
  for (const b of s.batches) {
    if (isFinalBatch(b) || isSealed(b)) continue;
    const root = b.parentId === null;
    const stale = root && b.baseSha !== s.baseSha;
    const result = outcome(ctx, b);
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
      // Prefix bisection: a failing chain batch holds the culprit of the set being bisected
      // (or fails because of a batch ahead, which then holds it); the rest of the set is cleared.
      if (b.role === 'chain' && s.config.bisectParts >= 2) releaseOtherPrefixSuspects(ctx, entriesOf(ctx, b));
      const children = childrenOf(ctx, b);
      for (const child of children) withdraw(ctx, child, `built on failing ${b.id}`);
      if (root) {
        blame(ctx, b);
        return true;
      }
      if (b.role === 'chain' && b.status === 'testing' && b.entryIds.length > 1 && s.config.bisectParts >= 2) {
        bisectAhead(ctx, b);
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
 * A failed candidate built directly on the base: its own PRs are to blame. A single PR is retried
 * alone until the flaky budget is spent, then `failed`; a larger batch becomes a suspect group
 * that the planner bisects into parts.
 */
function blame(ctx: Ctx, b: BatchState): void {
  const { s } = ctx;
  setBatchStatus(ctx, b, 'failed');
  b.operation = null;
  s.stats.failedBatches += 1;
  if (b.role === 'chain') recordChainOutcome(ctx, true);
  const entries = entriesOf(ctx, b).filter((e) => e.batchId === b.id && e.status === 'testing');
  if (b.role === 'part') releaseSiblingSuspects(ctx, entries);
  if (entries.length === 1) {
    failedAlone(ctx, entries[0]);
  } else if (b.role === 'chain' && s.config.bisectParts >= 2) {
    bisectByPrefixes(ctx, entries);
  } else {
    const group = nextId(ctx, 'group');
    for (const e of entries) {
      e.suspectGroup = group;
      e.cleared = false;
      releaseEntry(ctx, e, 'queued');
    }
  }
  issueCleanup(ctx, b);
}

/**
 * Prefix bisection: the failed batch's PRs go back to the head of the queue, marked so that the
 * chain re-plans them as `bisectParts` smaller batches stacked on one another: candidate k is the
 * base plus parts 1..k, so the longest passing prefix lands in order at once and only the first
 * failing part is split again. PRs of an earlier failed batch still marked (they were behind
 * this part, withdrawn with it) are no more suspect than any other: the culprit is found here.
 */
function bisectByPrefixes(ctx: Ctx, entries: EntryState[]): void {
  releaseOtherPrefixSuspects(ctx, entries);
  const size = prefixPartSize(entries.length, ctx.s.config.bisectParts);
  for (const e of entries) {
    e.suspectGroup = null;
    e.cleared = false;
    releaseEntry(ctx, e, 'queued');
    if (e.status === 'queued') e.bisectSize = size;
  }
}

/**
 * A chain batch failed behind one still testing: whoever is to blame, its PRs come next in queue
 * order. Rather than leave the runners idle until the batch ahead resolves, the batch is withdrawn
 * and its PRs are bisected by prefixes stacked on the batch ahead (speculative bisection). If that
 * batch fails too, everything built on it is withdrawn and the culprit is looked for there.
 */
function bisectAhead(ctx: Ctx, b: BatchState): void {
  const entries = entriesOf(ctx, b).filter((e) => e.batchId === b.id && e.status === 'testing');
  recordChainOutcome(ctx, true);
  releaseOtherPrefixSuspects(ctx, entries);
  withdraw(ctx, b, `failed behind ${b.parentId}: bisected by prefixes on it`);
  const size = prefixPartSize(entries.length, ctx.s.config.bisectParts);
  for (const e of entries) if (e.status === 'queued') e.bisectSize = size;
}

/** Queued PRs still marked by an earlier bisection are no more suspect: the culprit is elsewhere. */
function releaseOtherPrefixSuspects(ctx: Ctx, failing: readonly EntryState[]): void {
  const ids = new Set(failing.map((e) => e.id));
  for (const e of ctx.s.entries) {
    if (!ids.has(e.id) && e.bisectSize != null && e.status === 'queued') {
      e.bisectSize = null;
      ctx.changed = true;
    }
  }
}
