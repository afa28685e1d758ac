import { boxMuller, exponential, hashInts, keyedUniform, lognormal, mulberry32 } from './prng';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export interface Scenario {
  name: string;
  ratePerHour: number;
  badRate: number;
  flakeRate: number;
  prs: number;
  conflictRate: number;
  /**
   * Order-dependent conflicts: each later PR among the next ORDER_WINDOW arrivals builds on this
   * PR's lines with this probability. Merged in queue order (this PR first) both are clean;
   * if the later one lands first (or is ahead of it in a candidate), this PR conflicts.
   */
  orderConflictRate: number;
  slowRate: number;
  runners: number;
  /** Probability that an executor operation of our policy ends with an unknown outcome. */
  crashRate: number;
  /**
   * Lanes (an upper bound, docs/merge-queue.md): each PR touches one of 8 top-level directories,
   * drawn by Zipf(1); the directories are grouped into this many lanes (greedy by weight), and
   * conflicts happen only between PRs of one lane. Absent or 0: one lane, the plain model.
   */
  lanes?: number;
  /**
   * With lanes: the share of PRs that also touch a second top-level directory, drawn by the same
   * Zipf(1) among the other seven. A PR whose two directories are in different lanes spans them: it
   * conflicts with PRs of either lane, waits until every PR ahead of it in its lanes has finished,
   * is tested on the real base and lands while its lanes wait (LanesPolicy). Absent or 0: none.
   */
  spanRate?: number;
  /**
   * Where a failure shows (GroupTestChainPolicy with attribution reads it): each PR touches one test
   * area (one of `testAreas`, drawn by Zipf(1); with 8, the default, its top-level directory). A bad
   * PR breaks the tests of its own area, except with probability `misattribution` (default 0.25),
   * when it breaks those of another one (drawn by Zipf(1) among the others); a spurious failure
   * breaks the tests of one area drawn by Zipf(1). A failed run names the areas whose tests failed.
   */
  testAreas?: number;
  /**
   * The share of bad PRs whose failing tests are in another test area than their own (default 0.25).
   * See `misattributionPer` for whether the wrong area is the PR's own, every run, or redrawn.
   */
  misattribution?: number;
  /**
   * Whether a misattributed bad PR names the same wrong tests on every run (`'pr'`, the default and
   * the honest model: a misnamed test is misnamed every time) or a wrong area redrawn on every run
   * (`'run'`, the model until issue 40, whose draws it reproduces). A bad PR breaks 1-3 tests
   * (60/30/10%) of its area; with `'pr'` they are the same tests on every run, keyed on the PR.
   */
  misattributionPer?: 'pr' | 'run';
  /**
   * The repository's tests: each test area holds this many tests (default 40), the test `k` of
   * area `a` named `dir<a>.t<k>` in the file `dir<a>/tests/t<k>.spec`. Failing runs name the tests
   * that failed (CiRun.actualFailedTests, reported as CiRun.failedTests when `reportsTests`).
   */
  testsPerArea?: number;
  /**
   * Whether CI reports failing tests (default false: pass/fail only). With true, CiRun.failedTests
   * names them and startCi honours fail-first hints (`failFirstFraction`); with false,
   * CiRun.failedTests is empty and hints are ignored (a pass/fail CI has no tests to run first).
   * Policies read it to decide whether to send failing tests and hints (planner-policy.ts).
   */
  reportsTests?: boolean;
  /**
   * Fail-first cost model: a run given fail-first hints (startCi's `failFirst`) that fails one of
   * the hinted tests stops after this fraction of its duration (default 0.5; issue 40 sweeps 0.25,
   * 0.5, 0.75). A run that passes, or fails none of its hinted tests, takes its whole time.
   */
  failFirstFraction?: number;
  /**
   * Bad pairs: each pair of good PRs among ORDER_WINDOW consecutive arrivals fails together with
   * this probability (default 0.0004, so ~1.6% of PRs are in such a pair): a candidate that holds
   * both (or holds one on a base that holds the other) fails one test of the later PR's area. Once
   * either has landed the other fails alone on the new base: it is then a culprit, and failing it
   * is right (see World.wronglyFailed). 0: none (the model until issue 40).
   */
  badPairRate?: number;
  /**
   * Spurious failures. `'per-test'` (default): each test has its own flake probability, most 0
   * and `flakyTestShare` of them heavy-tailed (lognormal, sigma 1.5), scaled so that a run fails
   * spuriously with probability `flakeRate` exactly; a spurious failure names the flaky tests that
   * failed, so the same ones recur and can be learnt. `'per-run'`: the model until issue 40, one
   * draw per run with probability `flakeRate`, naming one test of an area drawn by Zipf(1).
   */
  flakeModel?: 'per-test' | 'per-run';
  /** Per-test flakes: the share of tests that can flake at all (default 0.1). */
  flakyTestShare?: number;
  /**
   * Breadth: the share of PRs touching 1, 2, 3... top-level directories (default [0.75, 0.18,
   * 0.07]); a PR's further directories are drawn by Zipf(1) among the others. Slowness grows with
   * breadth: P(slow | b) = slowRate * b^k / E[b^k] with k = `slowBreadthExponent` (default 2:
   * 4.8%, 19% and 43% for breadths 1-3), so `slowRate` stays the overall share. k = 0: slowness
   * independent of breadth (the model until issue 40, whose draws it reproduces). Lanes keep their
   * own `spanRate`; breadth is not a lane model.
   */
  breadthShares?: number[];
  slowBreadthExponent?: number;
}

/**
 * The options that give back the model until issue 40 (misattribution redrawn per run, no bad
 * pairs, one flake draw per run, slowness independent of breadth), to measure what each change does.
 */
export const LEGACY_MODEL: Partial<Scenario> = {
  misattributionPer: 'run',
  badPairRate: 0,
  flakeModel: 'per-run',
  slowBreadthExponent: 0,
};

/** One test of the simulated repository (Scenario.testsPerArea). */
export interface TestRef {
  test: string;
  file: string;
}

/** Zipf(1) over `n` directories: the weight of each, most used first. */
export function zipfWeights(n: number): number[] {
  const raw = Array.from({ length: n }, (_, i) => 1 / (i + 1));
  const sum = raw.reduce((a, b) => a + b, 0);
  return raw.map((w) => w / sum);
}

/** Directories grouped into `lanes` groups, each directory to the lightest group so far. */
export function laneOfDirectory(weights: readonly number[], lanes: number): number[] {
  const load = new Array(lanes).fill(0);
  return weights.map((w) => {
    const g = load.indexOf(Math.min(...load));
    load[g] += w;
    return g;
  });
}

const DIRECTORY_WEIGHTS = zipfWeights(8);

/** One of `weights.length` items by their weights from a uniform `u`, by inverse transform; never `skip`. */
function drawn(weights: readonly number[], u: number, skip = -1): number {
  const items = weights.map((_, d) => d).filter((d) => d !== skip);
  let rest = u * items.reduce((a, d) => a + weights[d], 0);
  for (const d of items.slice(0, -1)) {
    if (rest < weights[d]) return d;
    rest -= weights[d];
  }
  return items[items.length - 1];
}

export interface PullRequest {
  number: number;
  arrival: number;
  bad: boolean;
  slow: boolean;
  /** Landed-history length the current head was built on; conflicts only with later landings. */
  headBase: number;
  headVersion: number;
  mergedAt: number | null;
  failedAt: number | null;
  blockedTimes: number;
  /** Its top-level directory (its first when it touches two), one of 8, drawn by Zipf(1). */
  directory: number;
  /** Its test area (Scenario.testAreas): the directory, or one of more areas drawn by Zipf(1). */
  area: number;
  /** The lane of its directory (0 with one lane); its first lane when it spans several. */
  lane: number;
  /** Every lane its directories are in, ascending (one unless it spans lanes). */
  lanes: number[];
  /** Estimated time to merge given at admission (absolute time), for ETA accuracy. */
  eta: number | null;
  /** The top-level directories it touches (Scenario.breadthShares), its `directory` first. */
  directories: number[];
  /**
   * A bad PR's failing tests (indices into the test repository, World.testRef) with misattribution
   * per PR: in its own area, or in the wrong one it names every time. Empty for good PRs.
   */
  brokenTests: number[];
  /** Good PRs it fails together with (Scenario.badPairRate). */
  pairedWith: number[];
  /** Failing CI runs whose content held it (the livelock metric). */
  failingRuns: number;
  /** Failed while it would have passed alone on the base of the time (World.wronglyFailed). */
  wronglyFailed: boolean;
}

interface Candidate {
  sha: string;
  baseLen: number;
  /** PRs on top of the landed prefix of length baseLen, in merge order. */
  extra: number[];
}

export interface CiRun {
  id: number;
  sha: string;
  /** The PRs the candidate holds that are not on the base branch when CI starts, in merge order. */
  content: number[];
  duration: number;
  fails: boolean;
  /** The test areas whose tests failed (failing runs only; see Scenario.testAreas). */
  failedAreas: number[];
  /**
   * The failing tests CI reports (failing runs only, and only when Scenario.reportsTests; empty
   * for a pass/fail CI), those of culprits and flaky tests alike, sorted by name.
   */
  failedTests: TestRef[];
  /** The tests that failed, whatever CI reports (diagnostics and specs; policies read failedTests). */
  actualFailedTests: TestRef[];
  /** It failed a fail-first hinted test and stopped after Scenario.failFirstFraction of its time. */
  stoppedEarly: boolean;
  /** Its failure was spurious only: no culprit in it (diagnostics). */
  spurious: boolean;
  submittedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  canceled: boolean;
  onDone: (run: CiRun, passed: boolean) => void;
  tag: string;
}

interface Timed {
  at: number;
  seq: number;
  fn: () => void;
}

/** Binary min-heap of timed callbacks; ties run in scheduling order. */
export class EventQueue {
  private heap: Timed[] = [];
  private seq = 0;
  now = 0;

  schedule(at: number, fn: () => void): void {
    const item = { at: Math.max(at, this.now), seq: this.seq++, fn };
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(h[p], h[i])) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  pop(): Timed | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop() as Timed;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l], h[m])) m = l;
        if (r < h.length && less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    this.now = top.at;
    return top;
  }

  get size(): number {
    return this.heap.length;
  }
}

function less(a: Timed, b: Timed): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** How many later arrivals an order-dependent conflict partner may be (see Scenario.orderConflictRate). */
export const ORDER_WINDOW = 20;

export type BuildResult = { ok: true; sha: string } | { ok: false; pr: number; withPr: number };

/**
 * The model of git and CI every policy runs against. The same seed gives the same arrivals, the
 * same bad, slow and conflicting PRs, and the same CI duration and spurious failure for the same
 * candidate content, whichever policy asks.
 */
export class World {
  readonly events = new EventQueue();
  readonly prs: PullRequest[] = [];
  readonly landed: number[] = [];
  private readonly landedIndex = new Map<number, number>();
  private readonly candidates = new Map<string, Candidate>();
  private readonly passed = new Set<string>();
  private readonly partners: number[][];
  /** followers[i-1]: later PRs that build on #i's lines (order-dependent conflicts). */
  private readonly followers: number[][];
  /** Good PR heads (`n:version`) that met an order-dependent conflict: blocked because a later PR went first. */
  readonly orderConflicts = new Set<string>();
  private readonly runAttempts = new Map<number, number>();
  private readonly waiting: CiRun[] = [];
  private readonly running = new Set<CiRun>();
  private readonly wasBase = new Set<string>(['L0']);
  private shaCounter = 0;
  private runCounter = 0;
  baseSha = 'L0';
  ciRunsStarted = 0;
  violations: string[] = [];
  badLanded = 0;
  readonly runs: CiRun[] = [];
  readonly recordRuns: boolean;
  lastArrival = 0;
  /** The test areas' weights (Scenario.testAreas). */
  private readonly areaWeights: readonly number[];
  private readonly testsPerArea: number;
  /** Per-test flakes (Scenario.flakeModel): the tests that can flake and each one's probability per run. */
  readonly flakyTests: readonly { t: number; q: number }[];

  constructor(
    readonly scenario: Scenario,
    readonly seed: number,
    options: { recordRuns?: boolean } = {},
  ) {
    this.recordRuns = options.recordRuns ?? false;
    const rnd = mulberry32(hashInts([seed, 1]));
    let t = 0;
    const slowDraws: number[] = [];
    for (let i = 1; i <= scenario.prs; i++) {
      t += exponential(scenario.ratePerHour / HOUR, rnd());
      const bad = rnd() < scenario.badRate;
      // the slow draw stays in the stream, so the arrivals are those of the model before breadth
      slowDraws.push(rnd());
      this.prs.push({
        number: i,
        arrival: t,
        bad,
        slow: false,
        headBase: 0,
        headVersion: 0,
        mergedAt: null,
        failedAt: null,
        blockedTimes: 0,
        directory: 0,
        area: 0,
        lane: 0,
        lanes: [0],
        eta: null,
        directories: [0],
        brokenTests: [],
        pairedWith: [],
        failingRuns: 0,
        wronglyFailed: false,
      });
    }
    for (const pr of this.prs) pr.directory = drawn(DIRECTORY_WEIGHTS, keyedUniform([seed, 7, pr.number]));
    this.areaWeights = scenario.testAreas && scenario.testAreas !== 8 ? zipfWeights(scenario.testAreas) : DIRECTORY_WEIGHTS;
    for (const pr of this.prs) pr.area = this.areaWeights === DIRECTORY_WEIGHTS ? pr.directory : drawn(this.areaWeights, keyedUniform([seed, 10, pr.number]));
    this.modelBreadthAndSlowness(slowDraws);
    this.testsPerArea = scenario.testsPerArea ?? 40;
    this.flakyTests = this.drawFlakyTests();
    for (const pr of this.prs) if (pr.bad) pr.brokenTests = this.brokenTestsOf(pr);
    const lanes = scenario.lanes ?? 0;
    if (lanes > 1) {
      const laneOf = laneOfDirectory(DIRECTORY_WEIGHTS, lanes);
      for (const pr of this.prs) {
        pr.lane = laneOf[pr.directory];
        pr.lanes = [pr.lane];
        if (keyedUniform([seed, 8, pr.number]) < (scenario.spanRate ?? 0)) {
          const second = laneOf[drawn(DIRECTORY_WEIGHTS, keyedUniform([seed, 9, pr.number]), pr.directory)];
          pr.lanes = [...new Set([pr.lane, second])].sort((a, b) => a - b);
          pr.lane = pr.lanes[0];
        }
      }
    }
    const sameLane = (i: number, j: number) => this.prs[i - 1].lanes.some((l) => this.prs[j - 1].lanes.includes(l));
    this.lastArrival = t;
    this.partners = this.prs.map(() => []);
    // (skipped without conflicts: the same pairs, none, without the quadratic draws)
    for (let i = 1; scenario.conflictRate > 0 && i <= scenario.prs; i++) {
      for (let j = i + 1; j <= scenario.prs; j++) {
        if (keyedUniform([seed, 2, i, j]) < scenario.conflictRate && sameLane(i, j)) {
          this.partners[i - 1].push(j);
          this.partners[j - 1].push(i);
        }
      }
    }
    this.followers = this.prs.map(() => []);
    for (let i = 1; i <= scenario.prs; i++) {
      for (let j = i + 1; j <= Math.min(scenario.prs, i + ORDER_WINDOW); j++) {
        if (keyedUniform([seed, 5, i, j]) < scenario.orderConflictRate && sameLane(i, j)) this.followers[i - 1].push(j);
      }
    }
    const pairRate = scenario.badPairRate ?? 0.0004;
    if (pairRate > 0) {
      for (let i = 1; i <= scenario.prs; i++) {
        if (this.pr(i).bad) continue;
        for (let j = i + 1; j <= Math.min(scenario.prs, i + ORDER_WINDOW); j++) {
          if (this.pr(j).bad || keyedUniform([seed, 13, i, j]) >= pairRate) continue;
          this.pr(i).pairedWith.push(j);
          this.pr(j).pairedWith.push(i);
        }
      }
    }
    this.candidates.set('L0', { sha: 'L0', baseLen: 0, extra: [] });
  }

  /** Each PR's directories (Scenario.breadthShares) and its slowness, which grows with them. */
  private modelBreadthAndSlowness(slowDraws: readonly number[]): void {
    const sc = this.scenario;
    const shares = sc.breadthShares ?? [0.75, 0.18, 0.07];
    const k = sc.slowBreadthExponent ?? 2;
    const meanWeight = shares.reduce((a, w, i) => a + w * (i + 1) ** k, 0) / shares.reduce((a, w) => a + w, 0);
    for (const pr of this.prs) {
      const breadth = 1 + drawn(shares, keyedUniform([this.seed, 16, pr.number]));
      pr.directories = [pr.directory];
      while (pr.directories.length < Math.min(breadth, DIRECTORY_WEIGHTS.length)) {
        const rest = DIRECTORY_WEIGHTS.map((w, d) => (pr.directories.includes(d) ? 0 : w));
        pr.directories.push(drawn(rest, keyedUniform([this.seed, 17, pr.number, pr.directories.length])));
      }
      const chance = k === 0 ? sc.slowRate : Math.min(1, (sc.slowRate * pr.directories.length ** k) / meanWeight);
      pr.slow = slowDraws[pr.number - 1] < chance;
    }
  }

  /** The number of tests in the repository (Scenario.testsPerArea per test area). */
  get testCount(): number {
    return this.areaWeights.length * this.testsPerArea;
  }

  /** The test of index `t`: its name and its file (`dir<a>.t<k>`, `dir<a>/tests/t<k>.spec`). */
  testRef(t: number): TestRef {
    const area = Math.floor(t / this.testsPerArea);
    const k = t % this.testsPerArea;
    return { test: `dir${area}.t${k}`, file: `dir${area}/tests/t${k}.spec` };
  }

  /** The test area of the test of index `t`. */
  testArea(t: number): number {
    return Math.floor(t / this.testsPerArea);
  }

  /** The tests a spurious failure can name, each with its own probability of failing a run. */
  private drawFlakyTests(): { t: number; q: number }[] {
    const sc = this.scenario;
    if ((sc.flakeModel ?? 'per-test') !== 'per-test' || sc.flakeRate <= 0) return [];
    const share = sc.flakyTestShare ?? 0.1;
    const weights: { t: number; w: number }[] = [];
    for (let t = 0; t < this.testCount; t++) {
      if (keyedUniform([this.seed, 14, t]) >= share) continue;
      const z = boxMuller(keyedUniform([this.seed, 15, t, 1]), keyedUniform([this.seed, 15, t, 2]));
      weights.push({ t, w: Math.exp(1.5 * z) });
    }
    if (weights.length === 0) weights.push({ t: 0, w: 1 });
    const total = weights.reduce((a, x) => a + x.w, 0);
    // prod(1 - q_t) = 1 - flakeRate: a run fails spuriously with probability flakeRate exactly
    return weights.map(({ t, w }) => ({ t, q: 1 - (1 - sc.flakeRate) ** (w / total) }));
  }

  /** `count` distinct tests of `area`, drawn from the uniforms `u(i)`. */
  private testsOfArea(area: number, count: number, u: (i: number) => number): number[] {
    const out: number[] = [];
    for (let i = 0; out.length < Math.min(count, this.testsPerArea); i++) {
      const t = area * this.testsPerArea + Math.floor(u(i) * this.testsPerArea);
      if (!out.includes(t)) out.push(t);
    }
    return out;
  }

  /** How many tests a bad PR breaks: 1, 2 or 3 (60/30/10%). */
  private static brokenCount(u: number): number {
    return u < 0.6 ? 1 : u < 0.9 ? 2 : 3;
  }

  /** A bad PR's failing tests under misattribution per PR: its own area's, or another's every run. */
  private brokenTestsOf(pr: PullRequest): number[] {
    const sc = this.scenario;
    const elsewhere = keyedUniform([this.seed, 11, pr.number, 1]) < (sc.misattribution ?? 0.25);
    const area = elsewhere ? drawn(this.areaWeights, keyedUniform([this.seed, 11, pr.number, 2]), pr.area) : pr.area;
    const count = World.brokenCount(keyedUniform([this.seed, 11, pr.number, 3]));
    return this.testsOfArea(area, count, (i) => keyedUniform([this.seed, 11, pr.number, 4, i]));
  }

  /** The test a bad pair breaks: one of the later PR's area, keyed on the pair. */
  private pairTest(i: number, j: number): number {
    const [a, b] = i < j ? [i, j] : [j, i];
    return this.testsOfArea(this.pr(b).area, 1, (k) => keyedUniform([this.seed, 18, a, b, k]))[0];
  }

  pr(n: number): PullRequest {
    return this.prs[n - 1];
  }

  get now(): number {
    return this.events.now;
  }

  /** Merges `prs` in order onto the commit `parentSha`; the first conflicting PR stops it. */
  build(parentSha: string, prs: readonly number[]): BuildResult {
    const parent = this.parent(parentSha);
    return this.compose(parent.baseLen, parent.extra, prs);
  }

  private conflictFor(n: number, baseLen: number, extra: readonly number[]): number | null {
    const pr = this.pr(n);
    for (const other of this.partners[n - 1]) {
      const at = this.landedIndex.get(other);
      if (at !== undefined && at >= pr.headBase && at < baseLen) return other;
      if (extra.includes(other)) return other;
    }
    // Order-dependent: a later PR that builds on this one's lines went first (it landed after
    // this head was made, or it is ahead of it in the candidate).
    for (const later of this.followers[n - 1]) {
      const at = this.landedIndex.get(later);
      if ((at !== undefined && at >= pr.headBase && at < baseLen) || extra.includes(later)) {
        if (!pr.bad) this.orderConflicts.add(`${n}:${pr.headVersion}`);
        return later;
      }
    }
    return null;
  }

  /**
   * Lanes: merges the candidate `parentSha` with the base as it is now, then `prs` in order (the
   * executor merges a lane's chain tip into the current base branch before it adds a PR that spans
   * lanes, so the candidate holds what other lanes landed since the tip was built). Only other
   * lanes' PRs can have landed since, which touch none of the parent's paths; every PR of the new
   * candidate is checked for conflicts against the new base.
   */
  buildOnBase(parentSha: string, prs: readonly number[]): BuildResult {
    const unlanded = this.parent(parentSha).extra.filter((m) => !this.landedIndex.has(m));
    return this.compose(this.landed.length, [], [...unlanded, ...prs]);
  }

  private parent(sha: string): Candidate {
    const parent = this.candidates.get(sha);
    if (!parent) throw new Error(`unknown commit ${sha}`);
    return parent;
  }

  /** A new candidate: `prs` merged in order onto the landed prefix of length `baseLen` plus `kept`; the first conflicting PR stops it. */
  private compose(baseLen: number, kept: readonly number[], prs: readonly number[]): BuildResult {
    const extra = [...kept];
    for (const n of prs) {
      const clash = this.conflictFor(n, baseLen, extra);
      if (clash !== null) return { ok: false, pr: n, withPr: clash };
      extra.push(n);
    }
    const sha = `C${++this.shaCounter}`;
    this.candidates.set(sha, { sha, baseLen, extra });
    return { ok: true, sha };
  }

  contentHasBad(sha: string): boolean {
    return this.culpritsOf(sha).length > 0;
  }

  /** True when the commit of candidate `c` holds PR `n` (on its base or merged on top). */
  private holds(c: Candidate, n: number): boolean {
    const at = this.landedIndex.get(n);
    return (at !== undefined && at < c.baseLen) || c.extra.includes(n);
  }

  /**
   * The PRs that break candidate `sha` among those it holds that have not landed: bad PRs, and
   * members of a bad pair whose partner it holds too (on its base or on top).
   */
  culpritsOf(sha: string): number[] {
    const c = this.parent(sha);
    return c.extra.filter((n) => !this.landedIndex.has(n) && (this.pr(n).bad || this.pr(n).pairedWith.some((m) => this.holds(c, m))));
  }

  /**
   * Whether PR `n` is a culprit now: bad, or in a bad pair whose other PR has landed (it fails
   * alone on the base). Failing a PR that is not is failing it wrongly (World.fail).
   */
  isCulprit(n: number): boolean {
    const pr = this.pr(n);
    return pr.bad || pr.pairedWith.some((m) => this.landedIndex.has(m));
  }

  /**
   * Submits a CI run of the candidate `sha`. Its duration, slowness and spurious failure depend on
   * the candidate's content only (every PR it holds that has not landed, including those of the
   * batches ahead it is built on), never on what the policy says the run is for. `failFirst`: the
   * tests to run first (Scenario.failFirstFraction; honoured only when Scenario.reportsTests).
   */
  startCi(sha: string, tag: string, onDone: CiRun['onDone'], options: { failFirst?: readonly { test: string }[] } = {}): CiRun {
    const c = this.candidates.get(sha);
    if (!c) throw new Error(`unknown candidate ${sha}`);
    const sc = this.scenario;
    const content = c.extra.filter((n) => !this.landedIndex.has(n));
    const key = hashInts([this.seed, 3, ...[...content].sort((a, b) => a - b)]);
    const attempt = (this.runAttempts.get(key) ?? 0) + 1;
    this.runAttempts.set(key, attempt);
    const z = boxMuller(keyedUniform([key, attempt, 1]), keyedUniform([key, attempt, 2]));
    const slow = content.some((n) => this.pr(n).slow);
    let duration = lognormal(20 * MINUTE, 0.5, z) * (slow ? 3 : 1);
    const failing = new Set<number>();
    if ((sc.flakeModel ?? 'per-test') === 'per-run') {
      if (keyedUniform([key, attempt, 3]) < sc.flakeRate) {
        const area = drawn(this.areaWeights, keyedUniform([key, attempt, 6]));
        failing.add(area * this.testsPerArea + Math.floor(keyedUniform([key, attempt, 7]) * this.testsPerArea));
      }
    } else {
      for (const { t, q } of this.flakyTests) if (keyedUniform([key, attempt, 20, t]) < q) failing.add(t);
    }
    const spurious = failing.size > 0;
    let culprit = false;
    const misattribution = sc.misattribution ?? 0.25;
    for (const n of content) {
      const pr = this.pr(n);
      if (pr.bad) {
        culprit = true;
        if ((sc.misattributionPer ?? 'pr') === 'run') {
          const elsewhere = keyedUniform([key, attempt, 4, n]) < misattribution;
          const area = elsewhere ? drawn(this.areaWeights, keyedUniform([key, attempt, 5, n]), pr.area) : pr.area;
          const count = World.brokenCount(keyedUniform([key, attempt, 8, n]));
          for (const t of this.testsOfArea(area, count, (i) => keyedUniform([key, attempt, 9, n, i]))) failing.add(t);
        } else {
          for (const t of pr.brokenTests) failing.add(t);
        }
      }
      for (const m of pr.pairedWith) {
        if (!this.holds(c, m)) continue;
        culprit = true;
        failing.add(this.pairTest(n, m));
      }
    }
    const actualFailedTests = [...failing].map((t) => this.testRef(t)).sort((a, b) => (a.test < b.test ? -1 : a.test > b.test ? 1 : 0));
    const reports = sc.reportsTests ?? false;
    const hinted = new Set((options.failFirst ?? []).map((f) => f.test));
    const stoppedEarly = reports && hinted.size > 0 && actualFailedTests.some((f) => hinted.has(f.test));
    if (stoppedEarly) duration *= sc.failFirstFraction ?? 0.5;
    const run: CiRun = {
      id: ++this.runCounter,
      sha,
      content,
      duration,
      failedAreas: [...new Set([...failing].map((t) => this.testArea(t)))].sort((a, b) => a - b),
      failedTests: reports ? actualFailedTests : [],
      actualFailedTests,
      stoppedEarly,
      spurious: spurious && !culprit,
      fails: failing.size > 0,
      submittedAt: this.now,
      startedAt: null,
      finishedAt: null,
      canceled: false,
      onDone,
      tag,
    };
    if (this.recordRuns) this.runs.push(run);
    this.waiting.push(run);
    this.dispatch();
    return run;
  }

  /** Runs holding a runner now (diagnostics). */
  get busyRunners(): number {
    return this.running.size;
  }

  cancelCi(run: CiRun): void {
    if (run.canceled || run.finishedAt !== null) return;
    run.canceled = true;
    run.finishedAt = this.now;
    const i = this.waiting.indexOf(run);
    if (i >= 0) this.waiting.splice(i, 1);
    if (this.running.delete(run)) this.dispatch();
  }

  /**
   * The waiting run a free runner takes: the oldest. With lanes several planners share the
   * runners, and each one's screens count only its own spare runners, so there the oldest run
   * that is not a screen goes first (screens only inform).
   */
  private nextWaitingRun(): number {
    if ((this.scenario.lanes ?? 0) <= 1) return 0;
    return Math.max(
      0,
      this.waiting.findIndex((r) => !r.tag.startsWith('screen')),
    );
  }

  private dispatch(): void {
    while (this.running.size < this.scenario.runners && this.waiting.length > 0) {
      const run = this.waiting.splice(this.nextWaitingRun(), 1)[0];
      run.startedAt = this.now;
      this.running.add(run);
      this.ciRunsStarted += 1;
      this.events.schedule(this.now + run.duration, () => {
        if (run.canceled) return;
        this.running.delete(run);
        run.finishedAt = this.now;
        if (!run.fails) this.passed.add(run.sha);
        else for (const n of run.content) this.pr(n).failingRuns += 1;
        this.dispatch();
        run.onDone(run, !run.fails);
      });
    }
  }

  /** Compare-and-swap of the base branch; checks the landing rules independently of any policy. */
  land(sha: string, expectedBase: string): boolean {
    if (this.baseSha !== expectedBase) return false;
    const c = this.candidates.get(sha);
    if (!c) throw new Error(`unknown candidate ${sha}`);
    if (!this.passed.has(sha)) this.violations.push(`${sha} landed without a passing CI run`);
    const already = this.landed.length - c.baseLen;
    const prefixOk = already >= 0 && c.extra.slice(0, already).every((n, i) => this.landed[c.baseLen + i] === n);
    if (!prefixOk) this.violations.push(`${sha} is not built on the base`);
    this.append(sha, c.extra.slice(Math.max(0, already)));
    return true;
  }

  /** Appends the candidate's new PRs to the landed history and makes `sha` the base. */
  private append(sha: string, prs: readonly number[]): void {
    for (const n of prs) {
      const pr = this.pr(n);
      if (this.landedIndex.has(n)) this.violations.push(`#${n} landed twice`);
      if (pr.bad) this.badLanded += 1;
      // a bad pair landed whole (possible only where PRs land untested against each other)
      else if (pr.pairedWith.some((m) => this.landedIndex.has(m))) this.badLanded += 1;
      this.landedIndex.set(n, this.landed.length);
      this.landed.push(n);
      pr.mergedAt = this.now;
    }
    if (prs.length) this.onFinished?.();
    this.candidates.set(sha, { sha, baseLen: this.landed.length, extra: [] });
    this.baseSha = sha;
    this.wasBase.add(sha);
  }

  /**
   * Lanes: lands a candidate of lane `lane` onto the base as it is now. Since the candidate was
   * built only PRs of other lanes (disjoint directories) or its own ancestors may have landed; its
   * own PRs are then merged onto the moved base with no new test, which only disjoint paths justify.
   */
  landLane(sha: string, lane: number): boolean {
    const c = this.candidates.get(sha);
    if (!c) throw new Error(`unknown candidate ${sha}`);
    if (!this.passed.has(sha)) this.violations.push(`${sha} landed without a passing CI run`);
    const since = this.landed.slice(c.baseLen);
    const own = since.filter((n) => this.pr(n).lanes.includes(lane));
    if (!own.every((n, i) => c.extra[i] === n)) return false;
    const prs = c.extra.slice(own.length);
    for (const n of prs) if (!this.pr(n).lanes.includes(lane)) this.violations.push(`#${n} of another lane landed in lane ${lane}`);
    // A PR that spans lanes must not land untested against what its other lanes landed since.
    for (const n of prs) {
      const crossing = since.filter((m) => !c.extra.includes(m) && this.pr(m).lanes.some((l) => this.pr(n).lanes.includes(l)));
      if (crossing.length > 0) {
        this.violations.push(`#${n} would land untested against #${crossing.join(', #')} of its lanes`);
        return false;
      }
    }
    this.append(sha, prs);
    return true;
  }

  /**
   * Lanes: lands a candidate of PRs that span lanes onto the base as it is now. It was built on the
   * real base; what landed since must touch none of its lanes (they wait while it is tested), or
   * its PRs would land untested against that lane's base (a violation, and refused).
   */
  landSpan(sha: string): boolean {
    const c = this.candidates.get(sha);
    if (!c) throw new Error(`unknown candidate ${sha}`);
    if (!this.passed.has(sha)) this.violations.push(`${sha} landed without a passing CI run`);
    const lanes = new Set(c.extra.flatMap((n) => this.pr(n).lanes));
    const since = this.landed.slice(c.baseLen);
    // Its own PRs may have landed already (a land that was retried), as a prefix; the rest is other lanes'.
    const own = since.filter((n) => c.extra.includes(n));
    if (!own.every((n, i) => c.extra[i] === n)) return false;
    const crossing = since.filter((n) => !c.extra.includes(n) && this.pr(n).lanes.some((l) => lanes.has(l)));
    if (crossing.length > 0) {
      this.violations.push(`${sha} would land untested against #${crossing.join(', #')} of its lanes`);
      return false;
    }
    this.append(sha, c.extra.slice(own.length));
    return true;
  }

  /** True when `sha` is or was the base head: the candidate landed. */
  isLanded(sha: string): boolean {
    return this.wasBase.has(sha);
  }

  fail(n: number): void {
    const pr = this.pr(n);
    if (pr.failedAt === null && pr.mergedAt === null) {
      pr.failedAt = this.now;
      // Wrongly failed: it would have passed alone on the base of the time (not bad, and no PR it
      // fails together with has landed). A pair member failed after its partner landed is a culprit.
      pr.wronglyFailed = !this.isCulprit(n);
      this.onFinished?.();
    }
  }

  /** Called when PRs merged or failed (LanesPolicy releases the PRs that waited on them). */
  onFinished?: () => void;

  /** The author resolves a conflict: a new head on the current base, after a human delay. */
  scheduleFix(n: number, onFixed: () => void): void {
    const pr = this.pr(n);
    pr.blockedTimes += 1;
    const z = boxMuller(keyedUniform([this.seed, 4, n, pr.blockedTimes, 1]), keyedUniform([this.seed, 4, n, pr.blockedTimes, 2]));
    const delay = lognormal(60 * MINUTE, 0.5, z);
    this.events.schedule(this.now + delay, () => {
      pr.headBase = this.landed.length;
      pr.headVersion += 1;
      onFixed();
    });
  }

  /** PRs that arrived and are neither merged nor failed. */
  backlog(at: number): number {
    let n = 0;
    for (const pr of this.prs) {
      if (pr.arrival > at) break;
      const merged = pr.mergedAt !== null && pr.mergedAt <= at;
      const failed = pr.failedAt !== null && pr.failedAt <= at;
      if (!merged && !failed) n += 1;
    }
    return n;
  }
}
