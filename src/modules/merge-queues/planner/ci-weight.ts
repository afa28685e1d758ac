import { ewma } from './ewma';
import { type Ctx, outcome } from './step';
import type { BatchState } from './types';
import { withdraw } from './withdrawal';

/**
 * CI weight: how long CI runs with a PR in the candidate. CI time depends on what a candidate
 * holds (a PR that touches a core library runs the whole suite), and a speculative candidate runs
 * the tests of every unlanded PR ahead of it too, so one heavy PR slows every candidate stacked on
 * it. The planner learns from run durations alone, with a two-level model: a run is light or
 * heavy (longer than `factor` times the light mean), and it is heavy exactly when it holds at
 * least one heavy PR. Each entry carries the probability that it is heavy (null: nothing seen yet,
 * the learned prior applies), updated by Bayes' rule from every run that held it.
 */
export interface CiDurationModel {
  /** EWMA of the durations of passing runs within the heavy threshold. */
  lightCiMs: number;
  /** EWMA of the durations of passing runs past it. */
  heavyCiMs: number;
  /** Prior probability that a PR is heavy: EWMA of the posteriors of the PRs that landed. */
  heavyRate: number;
}

/**
 * Durations are noisy, so a light run is sometimes seen past the threshold and a heavy one within
 * it: the likelihoods of "seen heavy" (for lognormal spread around 0.5 and a 3x heavy factor these
 * are about right; the update only needs them roughly).
 */
export const SEEN_HEAVY_IF_HEAVY = 0.85;
export const SEEN_HEAVY_IF_LIGHT = 0.1;

/** EWMA weight of each passing run in the light and heavy means. */
export const RUN_CLASS_EWMA_ALPHA = 0.1;
/** EWMA weight of each landed PR's posterior in the prior `heavyRate`. */
export const HEAVY_RATE_EWMA_ALPHA = 0.05;
/** EWMA weight of each passing run in `ciDurationMs` (the mean the ETA uses). */
export const CI_DURATION_EWMA_ALPHA = 0.1;

/** A run longer than this is heavy: `factor` times the light mean (sqrt(3) splits 1x from 3x). */
export function heavyThresholdMs(model: CiDurationModel, factor: number): number {
  return factor * model.lightCiMs;
}

function prior(p: number | null, model: CiDurationModel): number {
  return clamp01(p ?? model.heavyRate);
}

/** Probability that a run over PRs of these heavy probabilities is heavy. */
export function runHeavyProbability(probabilities: readonly (number | null)[], model: CiDurationModel): number {
  let allLight = 1;
  for (const p of probabilities) allLight *= 1 - prior(p, model);
  return 1 - allLight;
}

/** Expected CI duration of a candidate holding PRs of these heavy probabilities. */
export function expectedCiMs(probabilities: readonly (number | null)[], model: CiDurationModel): number {
  const heavy = runHeavyProbability(probabilities, model);
  return model.lightCiMs + heavy * (model.heavyCiMs - model.lightCiMs);
}

/**
 * Posterior heavy probabilities of the PRs a run held, once the run was seen light or heavy. A PR
 * that is heavy makes the run heavy, so P(i heavy | seen) = p_i * P(seen | heavy run) / P(seen).
 */
export function posteriorAfterRun(probabilities: readonly (number | null)[], seenHeavy: boolean, model: CiDurationModel): number[] {
  const runHeavy = runHeavyProbability(probabilities, model);
  const ifHeavy = seenHeavy ? SEEN_HEAVY_IF_HEAVY : 1 - SEEN_HEAVY_IF_HEAVY;
  const ifLight = seenHeavy ? SEEN_HEAVY_IF_LIGHT : 1 - SEEN_HEAVY_IF_LIGHT;
  const seen = ifHeavy * runHeavy + ifLight * (1 - runHeavy);
  return probabilities.map((p) => clamp01((prior(p, model) * ifHeavy) / seen));
}

/** Learns durations from one passing run: returns the new model and whether it was seen heavy. */
export function observePassingRun(
  model: CiDurationModel,
  durationMs: number,
  factor: number,
  alpha = RUN_CLASS_EWMA_ALPHA,
): { model: CiDurationModel; heavy: boolean } {
  const heavy = durationMs > heavyThresholdMs(model, factor);
  return {
    heavy,
    model: heavy
      ? { ...model, heavyCiMs: Math.max(ewma(model.heavyCiMs, alpha, durationMs), model.lightCiMs) }
      : { ...model, lightCiMs: ewma(model.lightCiMs, alpha, durationMs) },
  };
}

/** Learns the prior from a PR that landed after at least one run told something about it. */
export function observeLandedWeight(model: CiDurationModel, probability: number | null, alpha = HEAVY_RATE_EWMA_ALPHA): CiDurationModel {
  if (probability === null) return model;
  return { ...model, heavyRate: ewma(model.heavyRate, alpha, probability) };
}

/**
 * Spread of one class of run durations, as the sigma of a lognormal. Only the conditional remaining
 * time below depends on it, and only roughly.
 */
export const DURATION_SIGMA = 0.5;

/**
 * A run that has gone on past every plausible end of its class is expected to end within this
 * share of the class mean (the lognormal tail no longer says anything useful there).
 */
export const OVERDUE_REMAINING_SHARE = 0.25;

/**
 * Expected time until a run that started at `ciStartedAt` over PRs of these heavy probabilities
 * ends, given that it is still running: a run still going long after a light one would have ended
 * is most likely heavy, and a lognormal run that has gone on long has a long tail left.
 */
export function expectedRemainingMs(now: number, ciStartedAt: number, probabilities: readonly (number | null)[], model: CiDurationModel): number {
  const elapsed = Math.max(0, now - ciStartedAt);
  const heavy = runHeavyProbability(probabilities, model);
  const h = lognormalTail(model.heavyCiMs, elapsed);
  const l = lognormalTail(model.lightCiMs, elapsed);
  const wHeavy = heavy * h.survival;
  const wLight = (1 - heavy) * l.survival;
  if (wHeavy + wLight <= 0) return OVERDUE_REMAINING_SHARE * model.heavyCiMs;
  return (wHeavy * h.remaining + wLight * l.remaining) / (wHeavy + wLight);
}

/** P(D > t) and E[D - t | D > t] for a lognormal duration D with this mean and DURATION_SIGMA. */
function lognormalTail(mean: number, t: number): { survival: number; remaining: number } {
  if (t <= 0) return { survival: 1, remaining: mean };
  const sigma = DURATION_SIGMA;
  const mu = Math.log(mean) - (sigma * sigma) / 2;
  const survival = normalCdf((mu - Math.log(t)) / sigma);
  if (survival < 1e-9) return { survival: 0, remaining: OVERDUE_REMAINING_SHARE * mean };
  const partial = mean * normalCdf((mu + sigma * sigma - Math.log(t)) / sigma);
  return { survival, remaining: Math.max(0, partial / survival - t) };
}

/** Standard normal CDF (Abramowitz and Stegun 7.1.26, error below 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

// ---------------------------------------------------------------------------------------------
// The planner's use of the model: learning from runs, and restarting runs of landed work.

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

/** A run passed after `durationMs`: learn the CI means, and (once per run) the weights of its PRs. */
export function learnFromPassingRun(ctx: Ctx, b: BatchState, durationMs: number): void {
  const { stats, config } = ctx.s;
  stats.ciDurationMs = ewma(stats.ciDurationMs, CI_DURATION_EWMA_ALPHA, durationMs);
  const learned = observePassingRun(durationModel(ctx), durationMs, config.heavyCiFactor);
  Object.assign(stats, learned.model);
  // A run already seen heavy while it was running has taught its entries that once.
  if (!b.ciSeenHeavy) learnWeights(ctx, b, learned.heavy);
}

/** A PR landed: its heavy posterior teaches the prior `heavyRate`. */
export function learnFromLandedEntry(ctx: Ctx, heavyProbability: number | null): void {
  Object.assign(ctx.s.stats, observeLandedWeight(durationModel(ctx), heavyProbability));
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
 * Restart after a heavy PR lands. A speculative candidate whose CI started while PRs ahead of it
 * were unlanded runs their tests too. Once those PRs have landed, the same candidate rebuilt on
 * the new base would run only the rest: when the learned durations say a fresh run ends sooner
 * than the running one by `restartMargin` (heavy PRs have landed, the rest are light), the batch
 * is withdrawn and its PRs planned again at once.
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
