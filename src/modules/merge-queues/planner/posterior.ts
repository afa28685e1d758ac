import { releaseSiblingSuspects } from './bisection';
import { ewma } from './ewma';
import { checkFailure, flakeRate, keysOf } from './flakes';
import { isNamed } from './named-suspects';
import { type Ctx, entriesOf, nextId, outcome } from './step';
import type { BatchState, CheckFailure, EntryState, MergeQueueState } from './types';
import { releaseEntry } from './withdrawal';

/*
 * Blame that knows flakiness (issue 40, point 4): the posterior rule, the default (a queue that
 * sets `flakyRetries` keeps the fixed flaky budget of blame.ts). Each PR of a failed candidate
 * carries the probability that its head is bad (`badProbability`), updated by Bayes' rule with
 * every failing run that held it since it became a suspect:
 *
 *   odds(bad) <- odds(bad) * P(the run fails | PR bad) / P(the run fails | PR good)
 *             =  odds(bad) / (1 - (1 - p)^(n - 1) * (1 - r))
 *
 * where n is the run's PR count, p the queue's learned PR failure rate (the prior of a PR with no
 * such run, stats.failureRate) and r the flake rate of the run's failure (flakes.ts; the largest of
 * its keys' rates, the least telling). A run of one PR (a solo run) divides the odds by r.
 * Failure details are evidence only: a PR whose lanes hold the path group of a failing test's file
 * (or target) is *named*, which multiplies its odds by NAMED_LIKELIHOOD_RATIO and gets it tested
 * alone first (bisection.ts); the rest of its group waits and is bisected as before if it passes.
 *
 * - A solo run that fails reproducing a failure it is suspected for (the same key: check and test,
 *   or the check where CI names no test) fails the PR when its posterior reaches BLAME_THRESHOLD;
 *   otherwise it is run alone once more (failuresAlone, at the back of the line as before), at
 *   most MAX_SOLO_RUNS runs alone per head. A failure that does not reproduce is a new failure:
 *   the PR is suspected for it, from the prior again.
 * - At the cap the PR is failed when its last solo run reproduced the failure it is suspected for
 *   and the posterior is at least 1/2; else it is exonerated (a failure seen once alone, on a test
 *   never seen flaky, is no proof at the cap).
 * - A passing part exonerates its PRs for the failures they were suspected for: a PR is not
 *   suspected again for a failure whose every key it passed without. When every PR of a failed
 *   batch is exonerated for it, all are suspects again (else nothing would be).
 * - The livelock guard: a PR is failed at the MAX_FAILING_RUNS-th failing run that holds it as a
 *   suspect, so no PR sits in more.
 */

/** The posterior a PR must reach to be failed before its solo runs are spent. */
export const BLAME_THRESHOLD = 0.99;
/** Runs of one head alone at most (the cap). */
export const MAX_SOLO_RUNS = 2;
/** At the cap, a PR whose last solo run reproduced its failure is failed when its posterior is at least this. */
export const CAP_BLAME_THRESHOLD = 0.5;
/** How much likelier a failing test in a PR's lanes is when the PR is bad than when it is good. */
export const NAMED_LIKELIHOOD_RATIO = 4;
/** The livelock guard: failing runs a PR may sit in. */
export const MAX_FAILING_RUNS = 10;
/** Failure keys an entry remembers being exonerated for at most (the oldest are forgotten first). */
export const MAX_EXONERATIONS = 50;

/**
 * What a failed candidate failed for: the failing tests CI named, and each failed required check
 * that named none (a check-level failure: checkFailure).
 */
export function failuresOf(ctx: Ctx, b: BatchState): CheckFailure[] {
  const named = b.failures ?? [];
  const out = [...named];
  for (const c of b.checks) {
    if (c.state === 'failure' && !named.some((f) => f.check === c.name)) out.push(checkFailure(c.name));
  }
  if (out.length === 0) out.push(...ctx.s.config.requiredChecks.map(checkFailure));
  return out;
}

/** The PR failure rate the posterior starts from, kept off 0 and 1. */
function prPrior(s: MergeQueueState): number {
  return Math.min(0.5, Math.max(1e-4, s.stats.failureRate));
}

const toOdds = (p: number) => p / Math.max(1e-12, 1 - p);
const toProbability = (odds: number) => (Number.isFinite(odds) ? odds / (1 + odds) : 1);

/** The largest flake rate of `keys` (kept off 0). */
function runFlakeRate(s: MergeQueueState, keys: readonly string[]): number {
  return Math.max(1e-6, ...keys.map((k) => flakeRate(s, k)));
}

/** The failed candidate `b` holding `entries` (its PRs still testing in it), under the posterior rule. */
export function blameByPosterior(ctx: Ctx, b: BatchState, entries: EntryState[], failures: CheckFailure[]): void {
  const { s } = ctx;
  const keys = keysOf(failures);
  if (entries.length === 1) {
    entries[0].failingRuns = (entries[0].failingRuns ?? 0) + 1;
    const reproduced = reproducedKeys(entries[0], keys);
    // A part that reproduced its failure located a culprit: its group's other PRs are released.
    if (b.role === 'part' && reproduced.length > 0) releaseSiblingSuspects(ctx, entries);
    soloFailure(ctx, entries[0], failures, keys, reproduced);
    return;
  }
  if (b.role === 'part') releaseSiblingSuspects(ctx, entries);
  let suspects = entries.filter((e) => !keys.every((k) => e.exonerations?.includes(k)));
  if (suspects.length === 0) suspects = entries;
  // The livelock guard counts the failing runs a PR was a suspect in, not those it was cleared of.
  for (const e of suspects) e.failingRuns = (e.failingRuns ?? 0) + 1;
  const p = prPrior(s);
  const goodFails = 1 - Math.pow(1 - p, entries.length - 1) * (1 - runFlakeRate(s, keys));
  const group = nextId(ctx, 'group');
  for (const e of entries) {
    e.cleared = false;
    if (!suspects.includes(e)) {
      clearSuspicion(e);
      e.suspectGroup = null;
      releaseEntry(ctx, e, 'queued');
      continue;
    }
    if ((e.failingRuns ?? 0) >= MAX_FAILING_RUNS) {
      failEntry(ctx, e);
      continue;
    }
    let odds = toOdds(e.badProbability ?? p);
    if (isNamed(s, e, failures)) odds *= NAMED_LIKELIHOOD_RATIO;
    e.badProbability = toProbability(odds / Math.max(1e-6, goodFails));
    e.suspectGroup = group;
    e.suspectedFor = failures;
    releaseEntry(ctx, e, 'queued');
  }
}

function reproducedKeys(e: EntryState, keys: readonly string[]): string[] {
  const suspected = keysOf(e.suspectedFor ?? []);
  return keys.filter((k) => suspected.includes(k));
}

/** A run of `e` alone failed with `failures`: blame, run it alone once more, or (at the cap) exonerate it. */
function soloFailure(ctx: Ctx, e: EntryState, failures: CheckFailure[], keys: string[], reproduced: string[]): void {
  const { s } = ctx;
  e.soloRuns = (e.soloRuns ?? 0) + 1;
  e.cleared = false;
  e.suspectGroup = null;
  const p = prPrior(s);
  let odds: number;
  if (reproduced.length > 0) odds = toOdds(e.badProbability ?? p);
  else {
    // A new failure: suspected for it from the prior again.
    odds = toOdds(p) * (isNamed(s, e, failures) ? NAMED_LIKELIHOOD_RATIO : 1);
    e.suspectedFor = failures;
  }
  const posterior = toProbability(odds / runFlakeRate(s, reproduced.length > 0 ? reproduced : keys));
  e.badProbability = posterior;
  const atCap = e.soloRuns >= MAX_SOLO_RUNS;
  const guard = (e.failingRuns ?? 0) >= MAX_FAILING_RUNS;
  if ((reproduced.length > 0 && posterior >= BLAME_THRESHOLD) || (atCap && reproduced.length > 0 && posterior >= CAP_BLAME_THRESHOLD) || guard) {
    failEntry(ctx, e);
    return;
  }
  if (atCap) {
    exonerate(e, [...keys, ...keysOf(e.suspectedFor ?? [])]);
    e.failuresAlone = 0;
  } else {
    e.failuresAlone += 1;
  }
  // It failed alone: it loses its place (order.ts), as under the flaky budget.
  ctx.s.counters.entry += 1;
  e.position = ctx.s.counters.entry;
  releaseEntry(ctx, e, 'queued');
}

function failEntry(ctx: Ctx, e: EntryState): void {
  const { s } = ctx;
  s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 1);
  releaseEntry(ctx, e, 'failed');
}

/** Forgets what `e` is suspected for. */
function clearSuspicion(e: EntryState): void {
  delete e.suspectedFor;
  delete e.badProbability;
}

/** `e` is not suspected again for `keys`, and no longer suspected for what it was. */
function exonerate(e: EntryState, keys: readonly string[]): void {
  const kept = [...new Set([...(e.exonerations ?? []), ...keys])];
  e.exonerations = kept.slice(-MAX_EXONERATIONS);
  clearSuspicion(e);
}

/**
 * Part `b` passed: each PR it holds that was suspected passed without the rest of its batch, so
 * it is exonerated for those failures; a part of one is a solo run of its head.
 */
export function exonerateParts(ctx: Ctx, b: BatchState): void {
  if (outcome(ctx, b) !== 'passed') return;
  const own = entriesOf(ctx, b).filter((e) => e.batchId === b.id && e.suspectedFor !== undefined);
  for (const e of own) {
    if (b.entryIds.length === 1) e.soloRuns = (e.soloRuns ?? 0) + 1;
    exonerate(e, keysOf(e.suspectedFor ?? []));
    ctx.changed = true;
  }
}

/**
 * A screen of `e` alone failed (screening.ts): a solo run of its head. Screens never change an
 * entry's status, so this only records the suspicion; the solo retry that follows decides.
 */
export function noteScreenSoloFailure(ctx: Ctx, e: EntryState, b: BatchState): void {
  const failures = failuresOf(ctx, b);
  if (ctx.s.config.flakyRetries !== null) {
    e.suspectedFor = failures;
    return;
  }
  const keys = keysOf(failures);
  const reproduced = reproducedKeys(e, keys);
  e.soloRuns = (e.soloRuns ?? 0) + 1;
  e.failingRuns = (e.failingRuns ?? 0) + 1;
  let odds: number;
  if (reproduced.length > 0) odds = toOdds(e.badProbability ?? prPrior(ctx.s));
  else {
    odds = toOdds(prPrior(ctx.s)) * (isNamed(ctx.s, e, failures) ? NAMED_LIKELIHOOD_RATIO : 1);
    e.suspectedFor = failures;
  }
  e.badProbability = toProbability(odds / runFlakeRate(ctx.s, reproduced.length > 0 ? reproduced : keys));
}
