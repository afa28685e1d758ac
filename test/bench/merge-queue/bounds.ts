/*
 * The two bounds issue 40 asks beside every table (docs/research/merge-queue-bounds.md):
 *
 * - The counting bound (`countingBound`): what ANY design with pass/fail CI can reach, from the
 *   information a run carries and the runner time a run costs. Pure arithmetic.
 * - The charged search bound: one order-keeping chain (OracleChainPolicy, `charged`) whose culprit
 *   search is charged its information cost in CI runs (`searchRunsCharged`), swept over batch sizes
 *   and depths by bounds-sweep.ts (`npm run bench:merge-queue-bounds`), which writes the cell chosen
 *   on seeds 1-3 and its figure on the held-out seeds 4-9 to bounds-cache.json; `boundsFor` reads it
 *   so `bench:merge-queue` stays fast.
 *
 * No simulation is imported here: run.ts and oracle-policy.ts import this file.
 */
import cache from './bounds-cache.json';
import { LEGACY_MODEL, type Scenario } from './world';

/** Binary entropy in bits. */
export function entropy2(p: number): number {
  if (p <= 0 || p >= 1) return 0;
  return -p * Math.log2(p) - (1 - p) * Math.log2(1 - p);
}

/**
 * The most a pass/fail run can tell, in bits: a run fails when it holds a bad PR, and also, with
 * probability `f`, when it holds none (a spurious failure; a bad PR always fails it). That is a
 * Z-channel with crossover f, whose capacity is log2(1 + (1 - f) f^(f / (1 - f))): 1 bit at f = 0,
 * 0.930 at f = 2%, whatever the run holds and whatever the queue knows before it.
 */
export function bitsPerRun(f: number): number {
  if (f <= 0) return 1;
  if (f >= 1) return 0;
  return Math.log2(1 + (1 - f) * Math.pow(f, f / (1 - f)));
}

export interface CountingInput {
  ratePerHour: number;
  badRate: number;
  flakeRate: number;
  runners: number;
  /** Share of slow PRs (default 0.1) and how much slower a run holding one is (default 3). */
  slowRate?: number;
  slowFactor?: number;
  /** CI duration: lognormal, median in minutes (default 20) and sigma (default 0.5). */
  ciMedianMinutes?: number;
  ciSigma?: number;
}

export interface CountingBound {
  /** Highest throughput / X* any pass/fail design can keep: available / needed, at most 1. */
  value: number;
  runnerMinutesNeeded: number;
  /** Runners x 60. */
  available: number;
  /** Information the queue must gain per hour: rate x h(p). */
  bitsPerHour: number;
  bitsPerRun: number;
  /** Runs per hour at least: bitsPerHour / bitsPerRun. */
  runsPerHour: number;
  /** Runner-minutes a run costs at least, on average: E[CI] x (1 + (slowFactor - 1) x slowRate). */
  minutesPerRun: number;
}

/**
 * The counting bound. Every PR is bad with probability p, independently, so the queue must learn
 * rate x h(p) bits an hour (it lands no bad PR and fails almost no good one, so it must know which
 * is which). A run carries at most `bitsPerRun(f)` bits, so at least rate x h(p) / C runs an hour
 * finish, each costing E[CI] = median x exp(sigma^2 / 2) (22.7 min) on average at least (its draw does
 * not depend on what it holds). The slow PRs' own statuses (a share s of the bits) can only be
 * learned from runs that hold a slow PR, which cost slowFactor x E[CI]: given the other PRs'
 * statuses, a run without a slow PR says nothing about them. So at least s x rate x h(p) / C runs an
 * hour cost (slowFactor - 1) x E[CI] more, and the runner time needed is
 * rate x h(p) / C x E[CI] x (1 + (slowFactor - 1) s): 353 runner-minutes an hour at 30 PRs/h, p = 8%,
 * f = 2% (issue 40's figure), against runners x 60 available.
 */
export function countingBound(input: CountingInput): CountingBound {
  const slowRate = input.slowRate ?? 0.1;
  const slowFactor = input.slowFactor ?? 3;
  const sigma = input.ciSigma ?? 0.5;
  const meanCi = (input.ciMedianMinutes ?? 20) * Math.exp((sigma * sigma) / 2);
  const bitsPerHour = input.ratePerHour * entropy2(input.badRate);
  const perRun = bitsPerRun(input.flakeRate);
  const runsPerHour = perRun > 0 ? bitsPerHour / perRun : Infinity;
  const minutesPerRun = meanCi * (1 + (slowFactor - 1) * slowRate);
  const runnerMinutesNeeded = runsPerHour * minutesPerRun;
  const available = input.runners * 60;
  const value = runnerMinutesNeeded <= available ? 1 : available / runnerMinutesNeeded;
  return { value, runnerMinutesNeeded, available, bitsPerHour, bitsPerRun: perRun, runsPerHour, minutesPerRun };
}

/**
 * The information, in bits, that naming the culprit set (`k` PRs, or k = 0: "none, the failure was
 * spurious") of a failed batch of `n` carries: -log2 of its probability given what the search
 * starts from. Each PR is bad with probability p, independently; a batch with no bad PR fails
 * spuriously with probability f. Given that the batch failed, a culprit set of size k has
 * probability q^k / Z with q = p / (1 - p) and "spurious" f / Z, where Z = f + (1 + q)^n - 1 sums
 * every possible answer (each of the 2^n - 1 culprit sets and "spurious"). With `knownBad` the search
 * starts knowing the batch holds a culprit (the oracle chain knows it; bounds-sweep charges that
 * way, so the oracle is charged nothing for what it was told free): "spurious" drops out of Z. The
 * mean over the answers is the entropy of the answer, which no pass/fail search beats on average
 * (source coding: a search's runs spell a binary code word for its answer); a flaky run tells less
 * than a bit, so a real search needs more still. One culprit among n, p small: about log2(n).
 */
export function searchBits(n: number, k: number, p: number, f: number, knownBad = false): number {
  if (n <= 0 || p <= 0) return 0;
  if (k === 0 && knownBad) throw new Error('no culprit in a batch known to hold one');
  const q = p / (1 - p);
  const z = (knownBad ? 0 : f) + Math.pow(1 + q, n) - 1;
  const weight = k === 0 ? f : Math.pow(q, k);
  return Math.max(0, -Math.log2(weight / z));
}

/**
 * The CI runs a search is charged for naming `k` culprits among `n` (k = 0: the failure was
 * spurious): `searchBits`, one run per bit, rounded down or up at random (`u` uniform in [0, 1)) so
 * that the charge's mean is the entropy itself, never more.
 */
export function searchRunsCharged(n: number, k: number, p: number, f: number, u: number, knownBad = false): number {
  const bits = searchBits(n, k, p, f, knownBad);
  const whole = Math.floor(bits);
  return whole + (u < bits - whole ? 1 : 0);
}

/** One scenario's charged search bound, as bounds-sweep.ts wrote it to bounds-cache.json. */
export interface ChargedBound {
  /** Mean throughput / X* on the held-out seeds, of the cell chosen on the selection seeds. */
  value: number;
  /** The same cell's mean on the selection seeds (the figure the choice saw). */
  selection: number;
  batch: number;
  depth: number;
  edges: { batches: [number, number]; depths: [number, number] };
  /** The chosen cell lies on the grid's edge: the grid may not enclose the optimum. */
  onEdge: boolean;
  selectionSeeds: number[];
  heldOutSeeds: number[];
  prs: number;
}

export type BoundsScenario = Pick<Scenario, 'ratePerHour' | 'badRate' | 'flakeRate' | 'runners'> &
  Partial<Pick<Scenario, 'slowRate' | 'misattributionPer' | 'badPairRate' | 'flakeModel' | 'slowBreadthExponent' | 'reportsTests'>>;

/**
 * Which model of the world a scenario runs (the charged bound depends on it; the counting bound
 * does not, see docs/research/merge-queue-bounds.md): `issue-40` (world.ts's defaults), `legacy`
 * (LEGACY_MODEL, the model until issue 40) or `custom` (anything else: no cached charged bound).
 */
export function modelOf(s: BoundsScenario): 'issue-40' | 'legacy' | 'custom' {
  const keys = ['badPairRate', 'flakeModel', 'slowBreadthExponent'] as const;
  if (keys.every((k) => s[k] === undefined)) return 'issue-40';
  if (keys.every((k) => s[k] === LEGACY_MODEL[k])) return 'legacy';
  return 'custom';
}

export interface Bounds {
  charged: ChargedBound | null;
  counting: CountingBound;
}

interface CacheEntry extends ChargedBound {
  key: string;
}

/** The key of a scenario in bounds-cache.json. */
export function boundsKey(s: BoundsScenario): string {
  return `rate=${s.ratePerHour} p=${s.badRate} f=${s.flakeRate} runners=${s.runners} slow=${s.slowRate ?? 0.1} model=${modelOf(s)}`;
}

/**
 * The charged search bound (from the cache; null when the sweep never ran this scenario, or when
 * CI reports failing tests: both bounds are for pass/fail CI) and the counting bound.
 */
export function boundsFor(scenario: BoundsScenario): Bounds {
  const entries = (cache as unknown as { entries: CacheEntry[] }).entries;
  const hit = scenario.reportsTests ? null : (entries.find((e) => e.key === boundsKey(scenario)) ?? null);
  return { charged: hit, counting: countingBound(scenario) };
}

/** One line for a benchmark table: both bounds, with the charged bound's cell and grid edges. */
export function formatBounds(scenario: BoundsScenario): string {
  // both bounds are for pass/fail CI: a CI that reports failing tests may pass them
  if (scenario.reportsTests)
    return `Pass/fail CI's bounds (this CI reports failing tests, so they do not bind it): ${formatBounds({ ...scenario, reportsTests: false }).slice('Bounds: '.length)}`;
  const { charged, counting } = boundsFor(scenario);
  const c = charged
    ? `charged search bound ${charged.value.toFixed(3)} (one chain, batch ${charged.batch}, depth ${charged.depth}, chosen on seeds ${charged.selectionSeeds.join(',')}, ` +
      `held-out seeds ${charged.heldOutSeeds.join(',')}, ${charged.prs} PRs; grid batches ${charged.edges.batches.join('-')} x depths ${charged.edges.depths.join('-')}${charged.onEdge ? ', ON THE GRID EDGE' : ''})`
    : 'charged search bound: not computed for this scenario (npm run bench:merge-queue-bounds)';
  const n = `counting bound ${counting.value.toFixed(3)} (any pass/fail design: ${counting.runnerMinutesNeeded.toFixed(0)} runner-min/h needed, ${counting.available} available)`;
  return `Bounds: ${c}; ${n}`;
}
