import { nextBatchSize } from './batch-depth';
import { isolationUnits, planProbes } from './bisection';
import { type CiDurationModel, durationModel, expectedCiMs, expectedRemainingMs, heavyProbabilities } from './ci-weight';
import { ewma } from './ewma';
import { INITIAL_CHAIN_BATCH_SIZE } from './config';
import { aheadOfBarrier, chainBarrier } from './order';
import { byPlanningOrder } from './priority';
import { holdsRunner } from './runners';
import { failureProbability, isScreened, planScreens } from './screening';
import { childrenOf, createBatch, type Ctx, isFinalBatch, liveAncestors, outcome } from './step';
import type { BatchState, EntryState, MergeQueueState, PlannerConfig } from './types';

/*
 * Chain and speculation: which batches start next. The chain is a line of `chain` batches;
 * candidate k is the base plus batches 1..k. Free runners go to isolation probes first (within
 * their share, see bisection.ts), then the chain grows at its tip while the speculation depth
 * allows it and stacking is expected to pay.
 */

/** EWMA weight of each chain batch outcome (failed or landed at the head) in F. */
export const CHAIN_FAILURE_EWMA_ALPHA = 0.1;

/**
 * Speculation depth: a chain of `chainLength` batches may grow by one only while the chance that
 * every batch ahead passes, `(1 - F)^k`, stays at or above `minChainSuccess`.
 */
export function mayExtendChain(chainLength: number, batchFailureRate: number, config: PlannerConfig): boolean {
  if (chainLength === 0) return true;
  return Math.pow(1 - Math.min(0.999, Math.max(0, batchFailureRate)), chainLength) >= config.minChainSuccess;
}

/**
 * Teaches F a chain batch's fate when its turn to land came: it failed, or it landed. A batch of
 * screened PRs teaches its own rate (screening.ts), so F stays the rate of unscreened batches.
 */
export function recordChainOutcome(ctx: Ctx, failed: boolean, screened = false): void {
  const { stats } = ctx.s;
  if (screened) {
    stats.screenedBatchFailureRate = ewma(screenedBatchFailureRate(ctx.s), CHAIN_FAILURE_EWMA_ALPHA, failed ? 1 : 0);
    return;
  }
  stats.batchFailureRate = ewma(stats.batchFailureRate, CHAIN_FAILURE_EWMA_ALPHA, failed ? 1 : 0);
}

/** F of chain batches of screened PRs; until one is learned, the prior of a batch of INITIAL_CHAIN_BATCH_SIZE screened PRs. */
export function screenedBatchFailureRate(s: MergeQueueState): number {
  return s.stats.screenedBatchFailureRate ?? 1 - Math.pow(1 - s.config.screenedFailureRate, INITIAL_CHAIN_BATCH_SIZE);
}

/** The chance a chain batch passes when its turn comes, from the learned rate of its kind (screened or not). */
function batchPassChance(s: MergeQueueState, b: BatchState): number {
  return 1 - Math.min(0.999, Math.max(0, b.screened ? screenedBatchFailureRate(s) : s.stats.batchFailureRate));
}

/** Starts new batches on the free runners: isolation probes first, then the chain, then screens on what is left. */
export function planNewBatches(ctx: Ctx): void {
  planChainAndProbes(ctx);
  planScreens(ctx);
}

function planChainAndProbes(ctx: Ctx): void {
  const { s } = ctx;
  const required = s.config.requiredChecks;
  const live = s.batches.filter((b) => !isFinalBatch(b));
  // Screens take only runners nothing else can use: the chain and probes plan as if they did not
  // exist, and planScreens cancels the youngest screens when they need the runner.
  let free = s.config.maxParallel - live.filter((b) => b.role !== 'screen' && holdsRunner(b, required)).length;
  if (free <= 0) return;
  const waiting = s.entries.filter((e) => e.status === 'queued' && !e.setAside).sort(byPlanningOrder);
  if (waiting.length === 0) return;

  const { units, normal } = isolationUnits(waiting, s);
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
  // With screening, each chain batch counts with the failure rate of its kind (screened or not).
  let chainSuccess = 1;
  const screening = s.config.screening;
  for (let cursor = root ?? null; cursor;) {
    tip = cursor;
    chainLength += 1;
    chainSuccess *= batchPassChance(s, cursor);
    // A failed candidate behind one still testing ends the chain: whoever is to blame, its PRs
    // come before every later PR (queue order, order.ts), so nothing is stacked past it until
    // the batch ahead has resolved (then it is blamed and bisected, or withdrawn).
    const kids = childrenOf(ctx, cursor);
    cursor = kids.length > 0 ? kids[0] : null;
  }
  let queue = waiting;
  while (free > 0 && queue.length > 0) {
    if (tip && outcome(ctx, tip) === 'failed') break;
    if (screening ? chainLength > 0 && chainSuccess < s.config.minChainSuccess : !mayExtendChain(chainLength, s.stats.batchFailureRate, s.config)) break;
    let size = screening ? batchSizeByPrior(ctx, queue, free) : nextBatchSize(queue.length, free, s.batchDepth, s.config.minBatch);
    // PRs cleared by an isolation probe ride together, up to maxBatch.
    let cleared = 0;
    while (cleared < queue.length && queue[cleared].cleared) cleared += 1;
    size = Math.max(size, Math.min(cleared, s.config.maxBatch));
    const taken = queue.slice(0, size);
    if (tip && !speculationPays(ctx, tip, taken)) break;
    queue = queue.slice(size);
    tip = createBatch(ctx, 'chain', taken, tip);
    if (screening && taken.every(isScreened)) tip.screened = true;
    chainLength += 1;
    chainSuccess *= batchPassChance(s, tip);
    free -= 1;
  }
}

/**
 * Batch depth with per-PR priors (screening.ts): the next batch takes PRs in order while the
 * chance that all of them are good stays at or above `targetBatchSuccess`, spread over the free
 * runners like nextBatchSize and within [minBatch, maxBatch]. With no PR screened this is the
 * adaptive batch depth; screened PRs weigh far less, so their batches are larger.
 */
function batchSizeByPrior(ctx: Ctx, queue: readonly EntryState[], free: number): number {
  const { s } = ctx;
  const { minBatch, maxBatch, targetBatchSuccess } = s.config;
  const limit = Math.min(queue.length, Math.min(maxBatch, Math.max(minBatch, Math.ceil(queue.length / Math.max(1, free)))));
  let pass = 1;
  let n = 0;
  while (n < limit) {
    const next = pass * (1 - Math.min(0.999, Math.max(1e-6, failureProbability(s, queue[n]))));
    if (n >= minBatch && next < targetBatchSuccess) break;
    pass = next;
    n += 1;
  }
  return n;
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
