import { bitsPerRun, boundsFor, boundsKey, countingBound, entropy2, modelOf, searchBits, searchRunsCharged } from './bounds';
import { OracleChainPolicy } from './oracle-policy';
import { simulate } from './simulator';
import { LEGACY_MODEL, type Scenario } from './world';

const issue = { ratePerHour: 30, badRate: 0.08, flakeRate: 0.02, runners: 4 };

describe('merge-queue bounds: the counting bound', () => {
  it("gives issue 40's figure: about 353 runner-minutes an hour at 30 PRs/h, p = 8%, f = 2%, so 0.68 on 4 runners", () => {
    const b = countingBound(issue);
    expect(b.runnerMinutesNeeded).toBeGreaterThan(352);
    expect(b.runnerMinutesNeeded).toBeLessThan(354);
    expect(b.available).toBe(240);
    expect(b.value).toBeCloseTo(0.68, 2);
  });

  it('is 1 when no PR is bad (nothing to learn) and when the runners suffice', () => {
    expect(countingBound({ ...issue, badRate: 0 }).value).toBe(1);
    expect(countingBound({ ...issue, badRate: 0 }).runnerMinutesNeeded).toBe(0);
    expect(countingBound({ ...issue, runners: 6 }).value).toBe(1);
    expect(countingBound({ ...issue, badRate: 0.03 }).value).toBe(1);
  });

  it('falls as p rises to one half, and rises with the runners, never above 1', () => {
    const ps = [0.01, 0.03, 0.08, 0.15, 0.3, 0.5];
    const needed = ps.map((badRate) => countingBound({ ...issue, badRate }).runnerMinutesNeeded);
    for (let i = 1; i < needed.length; i++) expect(needed[i]).toBeGreaterThan(needed[i - 1]);
    const values = ps.map((badRate) => countingBound({ ...issue, badRate }).value);
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeLessThanOrEqual(values[i - 1]);
    const byRunners = [1, 2, 3, 4, 5, 6, 8].map((runners) => countingBound({ ...issue, runners }).value);
    for (let i = 1; i < byRunners.length; i++) expect(byRunners[i]).toBeGreaterThanOrEqual(byRunners[i - 1]);
    for (const v of [...values, ...byRunners]) expect(v).toBeLessThanOrEqual(1);
  });

  it('needs more with flakier CI, slower PRs and a higher rate, and scales with the rate', () => {
    const base = countingBound(issue).runnerMinutesNeeded;
    expect(countingBound({ ...issue, flakeRate: 0.1 }).runnerMinutesNeeded).toBeGreaterThan(base);
    expect(countingBound({ ...issue, slowRate: 0.2 }).runnerMinutesNeeded).toBeGreaterThan(base);
    expect(countingBound({ ...issue, ratePerHour: 60 }).runnerMinutesNeeded).toBeCloseTo(2 * base, 6);
    expect(countingBound({ ...issue, flakeRate: 0, slowRate: 0 }).minutesPerRun).toBeCloseTo(20 * Math.exp(0.125), 6);
  });

  it('charges at most one bit a run, 0.93 at f = 2%, and none through a coin', () => {
    expect(bitsPerRun(0)).toBe(1);
    expect(bitsPerRun(0.02)).toBeCloseTo(0.9296, 3);
    expect(bitsPerRun(0.5)).toBeLessThan(bitsPerRun(0.02));
    expect(bitsPerRun(1)).toBe(0);
    expect(entropy2(0.5)).toBe(1);
    expect(entropy2(0)).toBe(0);
  });
});

describe('merge-queue bounds: the charged search', () => {
  it('charges about log2(n) bits for one culprit among n when bad PRs are rare', () => {
    for (const n of [2, 8, 16, 48]) {
      const bits = searchBits(n, 1, 0.001, 0, true);
      expect(bits).toBeGreaterThan(Math.log2(n) - 0.1);
      expect(bits).toBeLessThan(Math.log2(n) + 0.1);
    }
    // "none: spurious" is one more answer to tell apart when the search does not know a culprit is there
    expect(searchBits(16, 1, 0.03, 0.02)).toBeGreaterThan(searchBits(16, 1, 0.03, 0.02, true));
  });

  it('charges, on average over the answers, exactly their entropy (never more than a search needs)', () => {
    for (const [n, p, f] of [
      [8, 0.03, 0.02],
      [16, 0.08, 0.02],
      [5, 0.3, 0.1],
    ]) {
      const q = p / (1 - p);
      const z = f + Math.pow(1 + q, n) - 1;
      let entropy = (f / z) * -Math.log2(f / z);
      let meanCharge = (f / z) * searchBits(n, 0, p, f);
      for (let k = 1; k <= n; k++) {
        const sets = binomial(n, k);
        const each = Math.pow(q, k) / z;
        entropy += sets * each * -Math.log2(each);
        meanCharge += sets * each * searchBits(n, k, p, f);
      }
      expect(meanCharge).toBeCloseTo(entropy, 9);
      // randomised rounding: the mean number of runs is the bits themselves
      const bits = searchBits(n, 1, p, f);
      const runs = Array.from({ length: 1000 }, (_, i) => searchRunsCharged(n, 1, p, f, (i + 0.5) / 1000));
      expect(runs.reduce((a, b) => a + b, 0) / runs.length).toBeCloseTo(bits, 2);
      for (const r of runs) expect([Math.floor(bits), Math.ceil(bits)]).toContain(r);
    }
  });

  it('reads the counting bound for any scenario, and the charged bound only from the sweep cache', () => {
    const b = boundsFor({ ...issue, ratePerHour: 7 });
    expect(b.charged).toBeNull();
    expect(b.counting.value).toBe(1);
    // both bounds are for pass/fail CI: none is cached for a CI that reports its failing tests
    expect(boundsFor({ ...issue, reportsTests: true }).charged).toBeNull();
  });

  it("keys the cache by the world's model: issue 40's defaults, the legacy model, or neither", () => {
    expect(modelOf(issue)).toBe('issue-40');
    expect(modelOf({ ...issue, ...LEGACY_MODEL })).toBe('legacy');
    expect(modelOf({ ...issue, badPairRate: 0 })).toBe('custom');
    expect(boundsKey(issue)).not.toBe(boundsKey({ ...issue, ...LEGACY_MODEL }));
  });
});

function binomial(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

describe('merge-queue bounds: the charged oracle chain on the simulator', () => {
  // issue 40's model (bad pairs, per-test flakes, slowness with breadth) and the model until it
  const base: Scenario = {
    name: 'charged',
    ratePerHour: 30,
    badRate: 0.08,
    flakeRate: 0.02,
    prs: 300,
    conflictRate: 0.004,
    orderConflictRate: 0.01,
    slowRate: 0.1,
    runners: 4,
    crashRate: 0,
    badPairRate: 0.004,
  };

  it.each([
    ["issue 40's model, bad pairs ten times as common", base],
    ['the model until issue 40', { ...base, ...LEGACY_MODEL }],
  ])('%s: every PR decided, none wrongly, no bad PR landed, and it pays for its search', (_name, scenario) => {
    let charged: OracleChainPolicy | undefined;
    const { metrics, world } = simulate(scenario, 11, 'ours', { policy: (w) => (charged = new OracleChainPolicy(w, 8, 4, 'charged')), recordRuns: true });
    expect(metrics.violations).toBe(0);
    expect(metrics.badLanded).toBe(0);
    expect(metrics.goodFailed).toBe(0);
    expect(world.prs.filter((pr) => pr.mergedAt === null && pr.failedAt === null)).toEqual([]);
    expect(world.prs.filter((pr) => pr.bad && pr.failedAt === null)).toEqual([]);
    expect(charged?.chargedRuns).toBeGreaterThan(0);
    expect(world.runs.filter((r) => r.tag.startsWith('probe')).length).toBe(charged?.chargedRuns);
    // the same chain with culprits for free does at least as well on this world
    const free = simulate(scenario, 11, 'ours', { policy: (w) => new OracleChainPolicy(w, 8, 4) }).metrics;
    expect(free.throughput).toBeGreaterThanOrEqual(metrics.throughput);
  });
});
