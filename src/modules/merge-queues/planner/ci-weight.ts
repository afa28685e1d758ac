import { ewma } from './batch-depth';

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
const SEEN_HEAVY_IF_HEAVY = 0.85;
const SEEN_HEAVY_IF_LIGHT = 0.1;

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
export function posteriorAfterRun(
  probabilities: readonly (number | null)[],
  seenHeavy: boolean,
  model: CiDurationModel,
): number[] {
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
  alpha = 0.1,
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
export function observeLandedWeight(model: CiDurationModel, probability: number | null, alpha = 0.05): CiDurationModel {
  if (probability === null) return model;
  return { ...model, heavyRate: ewma(model.heavyRate, alpha, probability) };
}

/**
 * Spread of one class of run durations, as the sigma of a lognormal. Only the conditional remaining
 * time below depends on it, and only roughly.
 */
const DURATION_SIGMA = 0.5;

/**
 * Expected time until a run that started at `ciStartedAt` over PRs of these heavy probabilities
 * ends, given that it is still running: a run still going long after a light one would have ended
 * is most likely heavy, and a lognormal run that has gone on long has a long tail left.
 */
export function expectedRemainingMs(
  now: number,
  ciStartedAt: number,
  probabilities: readonly (number | null)[],
  model: CiDurationModel,
): number {
  const elapsed = Math.max(0, now - ciStartedAt);
  const heavy = runHeavyProbability(probabilities, model);
  const h = lognormalTail(model.heavyCiMs, elapsed);
  const l = lognormalTail(model.lightCiMs, elapsed);
  const wHeavy = heavy * h.survival;
  const wLight = (1 - heavy) * l.survival;
  if (wHeavy + wLight <= 0) return 0.25 * model.heavyCiMs;
  return (wHeavy * h.remaining + wLight * l.remaining) / (wHeavy + wLight);
}

/** P(D > t) and E[D - t | D > t] for a lognormal duration D with this mean and DURATION_SIGMA. */
function lognormalTail(mean: number, t: number): { survival: number; remaining: number } {
  if (t <= 0) return { survival: 1, remaining: mean };
  const sigma = DURATION_SIGMA;
  const mu = Math.log(mean) - (sigma * sigma) / 2;
  const survival = normalCdf((mu - Math.log(t)) / sigma);
  if (survival < 1e-9) return { survival: 0, remaining: 0.25 * mean };
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
