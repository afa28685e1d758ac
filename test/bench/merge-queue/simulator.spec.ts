import { GroupTestChainPolicy } from './group-test-policy';
import { OracleChainPolicy } from './oracle-policy';
import type { LanesPolicy } from './planner-policy';
import { POLICIES, simulate } from './simulator';
import { type CiRun, LEGACY_MODEL, laneOfDirectory, type PullRequest, type Scenario, World, zipfWeights } from './world';

const scenario: Scenario = {
  name: 'smoke',
  ratePerHour: 15,
  badRate: 0.08,
  flakeRate: 0.02,
  prs: 120,
  conflictRate: 0.004,
  orderConflictRate: 0.01,
  slowRate: 0.1,
  runners: 4,
  crashRate: 0.05,
};

describe(simulate.name, () => {
  it.each(POLICIES)('runs %s with no invariant violation and no bad PR landed', (policy) => {
    const { metrics } = simulate(scenario, 11, policy);
    expect(metrics.violations).toBe(0);
    expect(metrics.badLanded).toBe(0);
    expect(metrics.merged).toBeGreaterThan(60);
  });

  it('models order-dependent conflicts: ours blocks fewer good PRs by order than a reordering baseline', () => {
    const noFlakes = { ...scenario, flakeRate: 0, prs: 200 };
    const ours = [11, 12].map((seed) => simulate(noFlakes, seed, 'ours').metrics);
    const zuul = [11, 12].map((seed) => simulate(noFlakes, seed, 'zuul').metrics);
    // Ours is not zero: a PR back from a conflict is planned among the PRs not yet in a batch, so
    // batches already planned behind it may land first (docs/merge-queue.md, "Queue order").
    const sum = (ms: typeof ours) => ms.reduce((n, m) => n + m.orderBlocked, 0);
    expect(sum(zuul)).toBeGreaterThan(0);
    expect(sum(ours)).toBeLessThan(sum(zuul));
  });

  it('is deterministic for a seed', () => {
    const a = simulate(scenario, 5, 'ours').metrics;
    const b = simulate(scenario, 5, 'ours').metrics;
    expect(b).toEqual(a);
  });
});

describe('one-chain bounds (bound.ts)', () => {
  // The bounds' policies know culprits by PullRequest.bad: no bad pairs here (World.isCulprit names them).
  const busy: Scenario = { ...scenario, ratePerHour: 30, badRate: 0.05, crashRate: 0, prs: 300, badPairRate: 0 };

  it.each([
    ['culprits for free', (world: World) => new OracleChainPolicy(world, 8, 4)],
    ['culprits after one search run', (world: World) => new OracleChainPolicy(world, 8, 4, true)],
    ['one round of group tests', (world: World) => new GroupTestChainPolicy(world, 7, 4)],
    ['one round of group tests, eager', (world: World) => new GroupTestChainPolicy(world, 7, 3, true)],
    ['suspects named by the failing test areas', (world: World) => new GroupTestChainPolicy(world, 12, 4, false, true)],
  ])('%s: no invariant violation, no bad PR landed, no good PR failed, every PR decided', (_name, policy) => {
    const { metrics, world } = simulate(busy, 11, 'ours', { policy, recordRuns: true });
    expect(metrics.violations).toBe(0);
    expect(metrics.badLanded).toBe(0);
    expect(metrics.goodFailed).toBe(0);
    expect(world.prs.filter((pr) => pr.mergedAt === null && pr.failedAt === null)).toEqual([]);
    expect(world.prs.filter((pr) => pr.bad && pr.failedAt === null)).toEqual([]);
  });

  it('eager group tests of a head give way to a search of the PRs its failure named (more than are tested alone): no PR twice', () => {
    // Two test areas: a failed head of 16 names about 11 PRs, which are group-tested.
    const { metrics, world } = simulate({ ...busy, testAreas: 2, misattribution: 0 }, 11, 'ours', {
      policy: (w) => new GroupTestChainPolicy(w, 16, 3, true, true),
      recordRuns: true,
    });
    expect(metrics.violations).toBe(0);
    expect(metrics.badLanded).toBe(0);
    expect(metrics.goodFailed).toBe(0);
    expect(world.prs.filter((pr) => pr.mergedAt === null && pr.failedAt === null)).toEqual([]);
  });

  it('group tests blame a decoded PR only once it fails alone: with two bad PRs in a batch the runs spell a third, good one', () => {
    const { metrics, world } = simulate({ ...busy, badRate: 0.2 }, 11, 'ours', { policy: (w) => new GroupTestChainPolicy(w, 7, 4), recordRuns: true });
    // Some decoded PRs passed alone (their tags name one PR), and none of them was failed.
    const alonePassed = world.runs.filter((r) => /^probe \[\d+\]$/.test(r.tag) && !r.fails && !r.canceled);
    expect(alonePassed.length).toBeGreaterThan(0);
    expect(metrics.goodFailed).toBe(0);
    expect(metrics.badLanded).toBe(0);
    expect(world.prs.filter((pr) => pr.mergedAt === null && pr.failedAt === null)).toEqual([]);
  });

  it('a failed run names the test area of its bad PR, or another one when misattributed; spurious failures name one too', () => {
    const named = (misattribution: number) => {
      const { world } = simulate({ ...busy, badRate: 0.2, misattribution }, 11, 'ours', {
        policy: (w) => new GroupTestChainPolicy(w, 12, 4, false, true),
        recordRuns: true,
      });
      const oneBad = world.runs.filter((r) => r.fails && r.content.filter((n) => world.pr(n).bad).length === 1);
      return oneBad.map((r) => ({ own: world.pr(r.content.find((n) => world.pr(n).bad) as number).area, areas: r.failedAreas }));
    };
    const exact = named(0);
    expect(exact.length).toBeGreaterThan(20);
    // Spurious failures (2%) may add an area; the bad PR's own is always there.
    for (const { own, areas } of exact) expect(areas).toContain(own);
    const elsewhere = named(1);
    expect(elsewhere.length).toBeGreaterThan(20);
    expect(elsewhere.filter(({ own, areas }) => areas.includes(own)).length).toBeLessThan(elsewhere.length * 0.1);
    // one flake draw per run (the model until issue 40); per-test flakes may name several tests
    const spurious = simulate({ ...busy, badRate: 0, flakeRate: 0.2, flakeModel: 'per-run' }, 11, 'ours', { recordRuns: true }).world.runs.filter(
      (r) => r.fails,
    );
    expect(spurious.length).toBeGreaterThan(0);
    for (const r of spurious) expect(r.failedAreas).toHaveLength(1);
  });

  it('with finer test areas, the PRs tested alone are more often the culprits', () => {
    const culpritShare = (testAreas: number) => {
      const { world } = simulate({ ...busy, misattribution: 0, testAreas }, 11, 'ours', {
        policy: (w) => new GroupTestChainPolicy(w, 12, 4, false, true),
        recordRuns: true,
      });
      const alone = new Set(world.runs.filter((r) => /^probe \[\d+\]$/.test(r.tag) && !r.canceled).map((r) => r.content[0]));
      expect(alone.size).toBeGreaterThan(5);
      expect(world.prs.every((pr) => pr.area >= 0 && pr.area < testAreas)).toBe(true);
      return [...alone].filter((n) => world.pr(n).bad).length / alone.size;
    };
    const coarse = culpritShare(8);
    const fine = culpritShare(128);
    // Seed 11: about 0.3 of the PRs tested alone are culprits with 8 areas, 0.6 with 128 (an area
    // that many PRs touch still names several).
    expect(fine).toBeGreaterThan(coarse + 0.2);
  });

  it('finds culprits for free only without a search run: with one, each failure with a culprit costs a run of its batch on the base first', () => {
    const free = simulate(busy, 11, 'ours', { policy: (world) => new OracleChainPolicy(world, 8, 4), recordRuns: true }).world;
    const searched = simulate(busy, 11, 'ours', { policy: (world) => new OracleChainPolicy(world, 8, 4, true), recordRuns: true }).world;
    expect(free.runs.filter((r) => r.tag.startsWith('probe'))).toEqual([]);
    const probes = searched.runs.filter((r) => r.tag.startsWith('probe'));
    expect(probes.length).toBeGreaterThan(0);
    // Each search run holds a bad PR (a failed batch with a culprit), on the base.
    for (const run of probes) expect(run.content.some((n) => searched.pr(n).bad)).toBe(true);
  });
});

describe('lanes (the upper-bound model)', () => {
  // Lanes land PRs of two lanes untested against each other: a bad pair across lanes would land
  // broken (counted as a bad PR landed), which the lanes upper bound leaves out.
  const lanes: Scenario = { ...scenario, crashRate: 0, prs: 200, lanes: 4, badPairRate: 0 };

  it('draws directories by Zipf(1) and groups them into lanes by weight', () => {
    const weights = zipfWeights(8);
    expect(weights.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(weights[0] / weights[1]).toBeCloseTo(2, 12);
    expect(laneOfDirectory(weights, 4)).toEqual([0, 1, 2, 3, 3, 2, 3, 2]);
  });

  it('gives every lane PRs, in about its weight, and never makes PRs of two lanes conflict', () => {
    const world = new World({ ...lanes, prs: 600 }, 3);
    const counts = [0, 1, 2, 3].map((l) => world.prs.filter((p) => p.lane === l).length);
    // lane weights 0.368, 0.184, 0.230, 0.218
    expect(counts[0] / 600).toBeGreaterThan(0.31);
    expect(counts[0] / 600).toBeLessThan(0.43);
    expect(Math.min(...counts)).toBeGreaterThan(80);
    const plain = new World({ ...scenario, crashRate: 0, prs: 600 }, 3);
    let crossLaneInPlain = 0;
    for (const pr of world.prs.slice(0, 300)) {
      const first = world.build('L0', [pr.number]);
      if (!first.ok) continue;
      for (const other of world.prs.slice(pr.number, pr.number + 20)) {
        if (other.lane !== pr.lane) expect(world.build(first.sha, [other.number]).ok).toBe(true);
        const p = plain.build('L0', [pr.number]);
        if (p.ok && !plain.build(p.sha, [other.number]).ok && other.lane !== pr.lane) crossLaneInPlain += 1;
      }
    }
    // the plain model (one lane) has such pairs: the check above is not vacuous
    expect(crossLaneInPlain).toBeGreaterThan(0);
  });

  it('runs one planner per lane with no invariant violation, no bad PR landed and every lane landing', () => {
    const { metrics, world } = simulate(lanes, 11, 'ours');
    expect(metrics.violations).toBe(0);
    expect(metrics.badLanded).toBe(0);
    expect(metrics.merged).toBeGreaterThan(150);
    for (const l of [0, 1, 2, 3]) expect(world.prs.some((p) => p.lane === l && p.mergedAt !== null)).toBe(true);
  });

  it.each(['barrier', 'host'] as const)(
    'PRs that span lanes (%s rule): each lands after every PR ahead of it in its lanes and before those behind it, tested on the real base',
    (spanRule) => {
      const spanning: Scenario = { ...lanes, spanRate: 0.1 };
      const { metrics, world, policy } = simulate(spanning, 11, 'ours', { spanRule });
      expect(metrics.violations).toBe(0);
      expect(metrics.badLanded).toBe(0);
      const spans = world.prs.filter((p) => p.lanes.length > 1);
      expect(spans.length).toBeGreaterThan(5);
      expect(spans.filter((p) => p.mergedAt !== null).length).toBeGreaterThan(spans.length / 2);
      // Within each lane, a spanning PR keeps its place: nothing of its lanes that arrived before it
      // lands after it, and nothing that arrived after it lands before it. Under the host rule, its
      // host lane's planner keeps issue 16's order rule there (its invariants count in
      // `violations`: a PR waiting for its author or retried alone may be passed, as in any lane),
      // and the order is strict in its other lanes.
      const hosted = (policy as LanesPolicy).hosted;
      if (spanRule === 'host') expect(hosted.size).toBeGreaterThan(5);
      else expect(hosted.size).toBe(0);
      const landedAt = new Map(world.landed.map((n, i) => [n, i]));
      let checked = 0;
      for (const s of spans) {
        const at = landedAt.get(s.number);
        if (at === undefined) continue;
        for (const other of world.prs) {
          const o = landedAt.get(other.number);
          if (o === undefined || other === s || !other.lanes.some((l) => s.lanes.includes(l) && l !== hosted.get(s.number))) continue;
          if (other.arrival < s.arrival) expect(o).toBeLessThan(at);
          else expect(o).toBeGreaterThan(at);
          checked += 1;
        }
      }
      expect(checked).toBeGreaterThan(100);
    },
  );

  it('refuses, as a violation, a lane landing a spanning PR untested against what its other lane landed; built on the base as it is now, it lands', () => {
    const world = new World({ ...lanes, prs: 400, spanRate: 0.3 }, 5);
    const span = world.prs.find((p) => p.lanes.length === 2 && !p.bad) as PullRequest;
    const other = world.prs.find((p) => p.lanes.length === 1 && p.lane === span.lanes[1] && !p.bad && p.number !== span.number) as PullRequest;
    const stale = world.build('L0', [span.number]);
    const moved = world.build('L0', [other.number]);
    if (!stale.ok || !moved.ok) throw new Error('expected clean builds');
    expect(world.landLane(moved.sha, other.lane)).toBe(true);
    expect(world.landLane(stale.sha, span.lanes[0])).toBe(false);
    const untested = (w: World) => w.violations.filter((v) => v.includes('untested'));
    expect(untested(world)).toEqual([`#${span.number} would land untested against #${other.number} of its lanes`]);
    const fresh = world.buildOnBase(stale.sha, []);
    if (!fresh.ok) throw new Error('expected a clean build');
    expect(world.landLane(fresh.sha, span.lanes[0])).toBe(true);
    expect(untested(world)).toHaveLength(1);
    expect(world.landed).toEqual([other.number, span.number]);
  });

  it('draws the second directory among the other seven, so spanning PRs touch two lanes at most and never one twice', () => {
    const world = new World({ ...lanes, prs: 800, spanRate: 0.5 }, 5);
    const spans = world.prs.filter((p) => p.lanes.length > 1);
    // Half touch a second directory; some of those are in the first one's lane.
    expect(spans.length).toBeGreaterThan(200);
    expect(spans.length).toBeLessThan(400);
    for (const p of spans) expect(new Set(p.lanes).size).toBe(p.lanes.length);
    expect(Math.max(...world.prs.map((p) => p.lanes.length))).toBe(2);
    // Without spanRate no PR spans lanes, and the first directories are those of the plain lanes model.
    const plain = new World({ ...lanes, prs: 800 }, 5);
    expect(plain.prs.every((p) => p.lanes.length === 1)).toBe(true);
    world.prs.forEach((p, i) => expect(p.lanes).toContain(plain.prs[i].lane));
  });
});

/** Runs the world's events to the end. */
function drain(world: World): void {
  for (let item = world.events.pop(); item; item = world.events.pop()) item.fn();
}

/** Builds `prs` on the base, runs its CI to the end and returns the run. */
function runAlone(world: World, prs: number[], failFirst?: { test: string }[]): CiRun {
  const built = world.build(world.baseSha, prs);
  if (!built.ok) throw new Error(`#${built.pr} conflicts`);
  const run = world.startCi(built.sha, 'spec', () => undefined, { failFirst });
  drain(world);
  return run;
}

describe('the issue-40 model of CI (world.ts)', () => {
  const quiet: Scenario = { ...scenario, crashRate: 0, prs: 400, conflictRate: 0, orderConflictRate: 0, flakeRate: 0, reportsTests: true };

  it('names failing tests with their files, in the failing area; a pass/fail CI names none', () => {
    const world = new World({ ...quiet, badPairRate: 0 }, 3);
    const bad = world.prs.filter((p) => p.bad).slice(0, 10);
    expect(bad.length).toBe(10);
    for (const pr of bad) {
      const run = runAlone(world, [pr.number]);
      expect(run.fails).toBe(true);
      expect(run.failedTests.length).toBeGreaterThanOrEqual(1);
      expect(run.failedTests.length).toBeLessThanOrEqual(3);
      for (const f of run.failedTests) expect(f.file).toBe(`${f.test.replace('.', '/tests/')}.spec`);
      expect(run.failedAreas).toEqual([...new Set(run.failedTests.map((f) => Number(/^dir(\d+)/.exec(f.test)?.[1])))].sort((a, b) => a - b));
    }
    const passFail = new World({ ...quiet, badPairRate: 0, reportsTests: false }, 3);
    const run = runAlone(passFail, [bad[0].number]);
    expect(run.fails).toBe(true);
    expect(run.failedTests).toEqual([]);
    expect(run.actualFailedTests.length).toBeGreaterThan(0);
  });

  it('misattribution per PR names the same wrong tests on every run; per run, the wrong area is redrawn', () => {
    const tests = (per: 'pr' | 'run') => {
      const world = new World({ ...quiet, badPairRate: 0, misattribution: 1, misattributionPer: per }, 3);
      const pr = world.prs.find((p) => p.bad) as PullRequest;
      const runs = Array.from({ length: 8 }, () => runAlone(world, [pr.number]));
      for (const r of runs) expect(r.failedAreas).not.toContain(pr.area);
      return new Set(runs.map((r) => r.failedTests.map((f) => f.test).join(' ')));
    };
    expect(tests('pr').size).toBe(1);
    expect(tests('run').size).toBeGreaterThan(1);
  });

  it('a bad pair fails only together; once one has landed the other fails alone, and failing it then is not failing a good PR wrongly', () => {
    const sc: Scenario = { ...quiet, badRate: 0, badPairRate: 0.05 };
    const pairOf = (world: World) => {
      const a = world.prs.find((p) => p.pairedWith.length === 1 && world.pr(p.pairedWith[0]).pairedWith.length === 1) as PullRequest;
      return [a.number, a.pairedWith[0]];
    };
    const world = new World(sc, 3);
    const [a, b] = pairOf(world);
    const together = runAlone(world, [a, b]);
    expect(together.fails).toBe(true);
    expect(together.failedTests).toHaveLength(1);
    expect(world.culpritsOf(together.sha)).toEqual([a, b]);
    expect(runAlone(world, [b]).fails).toBe(false);
    const first = runAlone(world, [a]);
    expect(first.fails).toBe(false);
    expect(world.isCulprit(b)).toBe(false);
    expect(world.land(first.sha, world.baseSha)).toBe(true);
    // a is on the base now: b fails alone, with the test the pair broke
    const alone = runAlone(world, [b]);
    expect(alone.fails).toBe(true);
    expect(alone.failedTests).toEqual(together.failedTests);
    expect(world.isCulprit(b)).toBe(true);
    world.fail(b);
    expect(world.pr(b).wronglyFailed).toBe(false);
    // failed before its partner landed, it would have passed alone: wrongly failed
    const early = new World(sc, 3);
    early.fail(b);
    expect(early.pr(b).wronglyFailed).toBe(true);
    // ~1.6% of PRs are in a pair by default
    const plain = new World({ ...quiet, badRate: 0, prs: 4000 }, 3);
    const paired = plain.prs.filter((p) => p.pairedWith.length > 0).length / 4000;
    expect(paired).toBeGreaterThan(0.008);
    expect(paired).toBeLessThan(0.03);
  });

  it('per-test flake rates make a run fail spuriously with probability f, and the same few tests recur', () => {
    const world = new World({ ...quiet, badRate: 0, badPairRate: 0, flakeRate: 0.02, prs: 2000 }, 3);
    const q = world.flakyTests.map((x) => x.q);
    expect(1 - q.reduce((a, x) => a * (1 - x), 1)).toBeCloseTo(0.02, 12);
    // heterogeneous: the flakiest test is far above the median flaky one
    const sorted = [...q].sort((a, b) => b - a);
    expect(sorted[0]).toBeGreaterThan(10 * sorted[Math.floor(sorted.length / 2)]);
    expect(world.flakyTests.length).toBeLessThan(world.testCount * 0.2);
    const runs = world.prs.map((p) => runAlone(world, [p.number]));
    const failed = runs.filter((r) => r.fails);
    expect(failed.length / runs.length).toBeGreaterThan(0.013);
    expect(failed.length / runs.length).toBeLessThan(0.027);
    for (const r of failed) expect(r.spurious).toBe(true);
    // learnable: the five most frequent flaky tests name most spurious failures
    const counts = new Map<string, number>();
    for (const r of failed) for (const f of r.failedTests) counts.set(f.test, (counts.get(f.test) ?? 0) + 1);
    const top = [...counts.values()].sort((a, b) => b - a).slice(0, 5);
    expect(top.reduce((a, b) => a + b, 0)).toBeGreaterThan(failed.length / 2);
  });

  it('fail-first: a run stops after φ of its time only when it fails a hinted test, and only when CI reports tests', () => {
    const sc: Scenario = { ...quiet, badPairRate: 0, failFirstFraction: 0.25 };
    const bad = new World(sc, 3).prs.find((p) => p.bad) as PullRequest;
    const good = new World(sc, 3).prs.find((p) => !p.bad && p.pairedWith.length === 0) as PullRequest;
    const duration = (s: Scenario, pr: number, hints?: { test: string }[]) => runAlone(new World(s, 3), [pr], hints);
    const full = duration(sc, bad.number);
    const ownTests = full.failedTests.map((f) => ({ test: f.test }));
    const hinted = duration(sc, bad.number, ownTests);
    expect(hinted.stoppedEarly).toBe(true);
    expect(hinted.duration).toBeCloseTo(full.duration * 0.25, 6);
    expect(hinted.finishedAt).toBeCloseTo(full.duration * 0.25, 6);
    const wrongHint = duration(sc, bad.number, [{ test: 'dir7.t999' }]);
    expect(wrongHint.stoppedEarly).toBe(false);
    expect(wrongHint.duration).toBe(full.duration);
    const passing = duration(sc, good.number, ownTests);
    const passingFull = duration(sc, good.number);
    expect(passing.fails).toBe(false);
    expect(passing.duration).toBe(passingFull.duration);
    const passFail = duration({ ...sc, reportsTests: false }, bad.number, ownTests);
    expect(passFail.stoppedEarly).toBe(false);
    expect(passFail.duration).toBe(full.duration);
  });

  it('slowness grows with breadth and stays the overall slowRate', () => {
    const world = new World({ ...quiet, prs: 6000 }, 3);
    const share = (ps: PullRequest[]) => ps.filter((p) => p.slow).length / ps.length;
    const byBreadth = [1, 2, 3].map((b) => world.prs.filter((p) => p.directories.length === b));
    expect(byBreadth[0].length / 6000).toBeGreaterThan(0.7);
    expect(share(world.prs)).toBeGreaterThan(0.085);
    expect(share(world.prs)).toBeLessThan(0.115);
    expect(share(byBreadth[1])).toBeGreaterThan(2 * share(byBreadth[0]));
    expect(share(byBreadth[2])).toBeGreaterThan(share(byBreadth[1]));
    for (const p of world.prs) expect(new Set(p.directories).size).toBe(p.directories.length);
    // the old model: independent of breadth, with the draws of before (same slow PRs as LEGACY_MODEL)
    const legacy = new World({ ...quiet, prs: 6000, ...LEGACY_MODEL }, 3);
    expect(share(legacy.prs.filter((p) => p.directories.length === 3))).toBeLessThan(0.2);
  });

  it('the livelock metric is the most failing runs any one PR sat in; good PRs wrongly failed are counted per 1,000', () => {
    const { metrics, world } = simulate({ ...scenario, crashRate: 0, prs: 200, ratePerHour: 30 }, 11, 'github', { recordRuns: true });
    const count = new Map<number, number>();
    for (const r of world.runs) if (r.fails && !r.canceled && r.finishedAt !== null) for (const n of r.content) count.set(n, (count.get(n) ?? 0) + 1);
    expect(metrics.maxFailingRuns).toBe(Math.max(...count.values()));
    expect(metrics.maxFailingRuns).toBeGreaterThan(1);
    expect(metrics.goodFailedPer1000).toBeCloseTo((metrics.goodFailed / 200) * 1000, 12);
    expect(world.prs.filter((p) => p.wronglyFailed).length).toBe(metrics.goodFailed);
  });
});
