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
  misattribution?: number;
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

  constructor(
    readonly scenario: Scenario,
    readonly seed: number,
    options: { recordRuns?: boolean } = {},
  ) {
    this.recordRuns = options.recordRuns ?? false;
    const rnd = mulberry32(hashInts([seed, 1]));
    let t = 0;
    for (let i = 1; i <= scenario.prs; i++) {
      t += exponential(scenario.ratePerHour / HOUR, rnd());
      this.prs.push({
        number: i,
        arrival: t,
        bad: rnd() < scenario.badRate,
        slow: rnd() < scenario.slowRate,
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
      });
    }
    for (const pr of this.prs) pr.directory = drawn(DIRECTORY_WEIGHTS, keyedUniform([seed, 7, pr.number]));
    this.areaWeights = scenario.testAreas && scenario.testAreas !== 8 ? zipfWeights(scenario.testAreas) : DIRECTORY_WEIGHTS;
    for (const pr of this.prs) pr.area = this.areaWeights === DIRECTORY_WEIGHTS ? pr.directory : drawn(this.areaWeights, keyedUniform([seed, 10, pr.number]));
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
    for (let i = 1; i <= scenario.prs; i++) {
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
    this.candidates.set('L0', { sha: 'L0', baseLen: 0, extra: [] });
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
    const c = this.candidates.get(sha);
    return !!c && c.extra.some((n) => this.pr(n).bad);
  }

  /**
   * Submits a CI run of the candidate `sha`. Its duration, slowness and spurious failure depend on
   * the candidate's content only (every PR it holds that has not landed, including those of the
   * batches ahead it is built on), never on what the policy says the run is for.
   */
  startCi(sha: string, tag: string, onDone: CiRun['onDone']): CiRun {
    const c = this.candidates.get(sha);
    if (!c) throw new Error(`unknown candidate ${sha}`);
    const content = c.extra.filter((n) => !this.landedIndex.has(n));
    const key = hashInts([this.seed, 3, ...[...content].sort((a, b) => a - b)]);
    const attempt = (this.runAttempts.get(key) ?? 0) + 1;
    this.runAttempts.set(key, attempt);
    const z = boxMuller(keyedUniform([key, attempt, 1]), keyedUniform([key, attempt, 2]));
    const slow = content.some((n) => this.pr(n).slow);
    const duration = lognormal(20 * MINUTE, 0.5, z) * (slow ? 3 : 1);
    const flaky = keyedUniform([key, attempt, 3]) < this.scenario.flakeRate;
    const failedAreas = new Set<number>();
    if (flaky) failedAreas.add(drawn(this.areaWeights, keyedUniform([key, attempt, 6])));
    const misattribution = this.scenario.misattribution ?? 0.25;
    for (const n of content) {
      const pr = this.pr(n);
      if (!pr.bad) continue;
      const elsewhere = keyedUniform([key, attempt, 4, n]) < misattribution;
      failedAreas.add(elsewhere ? drawn(this.areaWeights, keyedUniform([key, attempt, 5, n]), pr.area) : pr.area);
    }
    const run: CiRun = {
      id: ++this.runCounter,
      sha,
      content,
      duration,
      failedAreas: [...failedAreas].sort((a, b) => a - b),
      fails: flaky || this.contentHasBad(sha),
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
