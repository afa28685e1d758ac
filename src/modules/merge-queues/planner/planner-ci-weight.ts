import { ewma } from './batch-depth';
import {
  type CiDurationModel,
  expectedCiMs,
  expectedRemainingMs,
  heavyThresholdMs,
  observePassingRun,
  posteriorAfterRun,
} from './ci-weight';
import type { BatchState } from './merge-queue.types';
import { type Ctx, outcome, withdraw } from './planner-context';

// ---------------------------------------------------------------------------------------------
// CI weight: which PRs make the runs that hold them long (see ci-weight.ts)

export function durationModel(ctx: Ctx): CiDurationModel {
  const { lightCiMs, heavyCiMs, heavyRate } = ctx.s.stats;
  return { lightCiMs, heavyCiMs, heavyRate };
}

export function heavyProbabilities(ctx: Ctx, ids: readonly string[]): (number | null)[] {
  return ids.map((id) => ctx.entryById.get(id)?.heavyProbability ?? null);
}

/** Bayes' update of the entries a run held, once the run was seen light or heavy. */
function learnWeights(ctx: Ctx, b: BatchState, seenHeavy: boolean): void {
  const posterior = posteriorAfterRun(heavyProbabilities(ctx, b.ciContentIds), seenHeavy, durationModel(ctx));
  b.ciContentIds.forEach((id, i) => {
    const e = ctx.entryById.get(id);
    if (e) e.heavyProbability = posterior[i];
  });
  ctx.changed = true;
}

export function learnFromPassingRun(ctx: Ctx, b: BatchState, durationMs: number): void {
  const { stats, config } = ctx.s;
  stats.ciDurationMs = ewma(stats.ciDurationMs, 0.1, durationMs);
  const learned = observePassingRun(durationModel(ctx), durationMs, config.heavyCiFactor);
  Object.assign(stats, learned.model);
  // A run already seen heavy while it was running has taught its entries that once.
  if (!b.ciSeenHeavy) learnWeights(ctx, b, learned.heavy);
}

/** A run still pending past the heavy threshold already says that something it holds is heavy. */
export function noteLongRuns(ctx: Ctx): void {
  const threshold = heavyThresholdMs(durationModel(ctx), ctx.s.config.heavyCiFactor);
  for (const b of ctx.s.batches) {
    if (b.status !== 'testing' || b.ciStartedAt === null || b.ciSeenHeavy) continue;
    if (ctx.at - b.ciStartedAt <= threshold || outcome(ctx, b) !== 'pending') continue;
    learnWeights(ctx, b, true);
    b.ciSeenHeavy = true;
  }
}

/**
 * A speculative candidate whose CI started while PRs ahead of it were unlanded runs their tests
 * too. Once those PRs have landed, the same candidate rebuilt on the new base would run only the
 * rest: when the learned durations say a fresh run ends sooner than the running one (heavy PRs
 * have landed, the rest are light), the batch is withdrawn and its PRs planned again at once.
 */
export function restartRunsOfLandedWork(ctx: Ctx): void {
  const model = durationModel(ctx);
  const { restartMargin } = ctx.s.config;
  for (const b of ctx.s.batches) {
    if (b.role !== 'chain' || b.status !== 'testing' || b.ciStartedAt === null) continue;
    if (outcome(ctx, b) !== 'pending' || b.operation !== null) continue;
    const landed = b.ciContentIds.filter((id) => ctx.entryById.get(id)?.status === 'merged');
    if (landed.length === 0) continue;
    const fresh = b.ciContentIds.filter((id) => !landed.includes(id));
    const running = heavyProbabilities(ctx, b.ciContentIds);
    const remaining = expectedRemainingMs(ctx.at, b.ciStartedAt, running, model);
    if (remaining <= expectedCiMs(heavyProbabilities(ctx, fresh), model) * restartMargin) continue;
    const numbers = landed.map((id) => `#${ctx.entryById.get(id)?.number}`).join(', ');
    ctx.s.stats.restartedBatches += 1;
    withdraw(ctx, b, `restarted on the new base: its CI was still running the tests of ${numbers}, which landed`);
  }
}
