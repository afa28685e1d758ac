import { nextBatchSize } from './batch-depth';
import { bisectFailedTip, isolationUnits, planProbes } from './bisection';
import { type CiDurationModel, durationModel, expectedCiMs, expectedRemainingMs, heavyProbabilities } from './ci-weight';
import { ewma } from './ewma';
import { aheadOfBarrier, chainBarrier } from './order';
import { byPlanningOrder } from './priority';
import { batchOutcome, childrenOf, createBatch, type Ctx, isFinalBatch, liveAncestors, outcome } from './step';
import type { BatchState, EntryState, PlannerConfig } from './types';

/*
 * Chain and speculation: which batches start next. The chain is a line of `chain` batches;
 * candidate k is the base plus batches 1..k. Free runners go to isolation probes first (within
 * their share, see bisection.ts), then the chain grows at its tip while the speculation depth
 * allows it and stacking is expected to pay.
 */

/** EWMA weight of each chain batch outcome (failed or landed at the head) in F. */
export const CHAIN_FAILURE_EWMA_ALPHA = 0.1;

/**
 * Runner accounting: a batch holds a runner while it is preparing, testing with no result yet,
 * or reconciling a step before its CI result (it will resume there). A batch with a result, or
 * one whose land is in flight, does not.
 */
export function holdsRunner(b: BatchState, requiredChecks: readonly string[]): boolean {
  if (b.status === 'preparing') return true;
  if (b.status === 'testing') return batchOutcome(b, requiredChecks) === 'pending';
  return b.status === 'reconciling' && b.interruptedKind !== 'land' && batchOutcome(b, requiredChecks) === 'pending';
}

/**
 * Speculation depth: a chain of `chainLength` batches may grow by one only while the chance that
 * every batch ahead passes, `(1 - F)^k`, stays at or above `minChainSuccess`.
 */
export function mayExtendChain(chainLength: number, batchFailureRate: number, config: PlannerConfig): boolean {
  if (chainLength === 0) return true;
  return Math.pow(1 - Math.min(0.999, Math.max(0, batchFailureRate)), chainLength) >= config.minChainSuccess;
}

/** Teaches F a chain batch's fate when its turn to land came: it failed, or it landed. */
export function recordChainOutcome(ctx: Ctx, failed: boolean): void {
  const { stats } = ctx.s;
  stats.batchFailureRate = ewma(stats.batchFailureRate, CHAIN_FAILURE_EWMA_ALPHA, failed ? 1 : 0);
}

/** Starts new batches on the free runners: isolation probes first, then the chain. */
export function planNewBatches(ctx: Ctx): void {
  const { s } = ctx;
  const required = s.config.requiredChecks;
  const live = s.batches.filter((b) => !isFinalBatch(b));
  let free = s.config.maxParallel - live.filter((b) => holdsRunner(b, required)).length;
  if (free <= 0) return;
  // A chain batch that failed behind one still testing is bisected at once, on runners the chain
  // cannot use past it (bisection.ts); its PRs are then a barrier for the chain like any suspects.
  free -= bisectFailedTip(ctx, free);
  if (free <= 0) return;
  const waiting = s.entries.filter((e) => e.status === 'queued' && !e.setAside).sort(byPlanningOrder);
  if (waiting.length === 0) return;

  const { units, normal } = isolationUnits(waiting);
  // Queue order (order.ts): the chain takes no PR queued behind a suspect still being probed.
  const takeable = aheadOfBarrier(normal, chainBarrier(s.entries));
  if (units.length > 0) {
    const probing = live.filter((b) => b.role === 'part' && holdsRunner(b, required)).length;
    free -= planProbes(ctx, units, free, probing, takeable.length);
  }
  // A probe that is landing by itself moves the base: the chain waits for it.
  if (live.some((b) => b.role === 'part' && b.status === 'merging')) return;
  extendChain(ctx, live, takeable, free);
}

/** Grows the chain at its tip with batches of the waiting PRs, one runner each. */
function extendChain(ctx: Ctx, live: readonly BatchState[], waiting: EntryState[], free: number): void {
  const { s } = ctx;
  const root = live.find((b) => b.role === 'chain' && b.parentId === null && b.baseSha === s.baseSha);
  let tip: BatchState | null = null;
  let chainLength = 0;
  for (let cursor = root ?? null; cursor;) {
    tip = cursor;
    chainLength += 1;
    // A failed candidate behind one still testing ends the chain: whoever is to blame, its PRs
    // come before every later PR (queue order, order.ts), so nothing is stacked past it until
    // the batch ahead has resolved (then it is blamed and bisected, or withdrawn).
    const kids = childrenOf(ctx, cursor).filter((k) => k.role === 'chain');
    cursor = kids.length > 0 ? kids[0] : null;
  }
  let queue = waiting;
  while (free > 0 && queue.length > 0) {
    if (tip && outcome(ctx, tip) === 'failed') break;
    if (!mayExtendChain(chainLength, s.stats.batchFailureRate, s.config)) break;
    let size = nextBatchSize(queue.length, free, s.batchDepth, s.config.minBatch);
    // PRs cleared by an isolation probe ride together, up to maxBatch.
    let cleared = 0;
    while (cleared < queue.length && queue[cleared].cleared) cleared += 1;
    size = Math.max(size, Math.min(cleared, s.config.maxBatch));
    const taken = queue.slice(0, size);
    if (tip && !speculationPays(ctx, tip, taken)) break;
    queue = queue.slice(size);
    tip = createBatch(ctx, 'chain', taken, tip);
    chainLength += 1;
    free -= 1;
  }
}

/**
 * Speculate only when it pays: whether stacking `taken` on the chain ending at `tip` is expected
 * to land it sooner than waiting for the chain to land and testing it on the new base. A
 * candidate on the chain runs the tests of every unlanded PR ahead, so behind a heavy PR it is
 * heavy too; then waiting is often sooner (and frees the runner). Estimates come from the learned
 * CI weights (ci-weight.ts).
 */
function speculationPays(ctx: Ctx, tip: BatchState, taken: readonly EntryState[]): boolean {
  const model = durationModel(ctx);
  let chainLand = ctx.at;
  const held: string[] = [];
  for (const b of [...liveAncestors(ctx, tip), tip]) {
    held.push(...b.entryIds);
    chainLand = Math.max(chainLand, ctx.at + expectedWaitUntilPassed(ctx, b, held, model));
  }
  const own = taken.map((e) => e.heavyProbability);
  const stacked = Math.max(chainLand, ctx.at + expectedCiMs([...heavyProbabilities(ctx, held), ...own], model));
  const waited = chainLand + expectedCiMs(own, model);
  // Stacking keeps a runner busy and can be undone (restartRunsOfLandedWork), so it wins ties.
  return stacked <= waited + ctx.s.config.speculationTolerance * model.lightCiMs;
}

/** Expected time from now until batch `b` (whose candidate holds `held`) has passed. */
function expectedWaitUntilPassed(ctx: Ctx, b: BatchState, held: readonly string[], model: CiDurationModel): number {
  const result = outcome(ctx, b);
  if (result === 'passed' || b.status === 'ready' || b.status === 'merging') return 0;
  if (b.status === 'testing' && b.ciStartedAt !== null && result === 'pending') {
    const running = heavyProbabilities(ctx, b.ciContentIds);
    return expectedRemainingMs(ctx.at, b.ciStartedAt, running, model);
  }
  return expectedCiMs(heavyProbabilities(ctx, held), model);
}
