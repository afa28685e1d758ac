import { QueueDriver } from '@test/support/merge-queue-driver';
import { landAll } from '@test/support/merge-queue-builders';
import { failFirstTests, failureKey } from './fail-first';
import { flakeRate, MAX_FLAKE_KEYS } from './flakes';
import { BLAME_THRESHOLD, MAX_FAILING_RUNS } from './posterior';
import type { CheckFailure, EntryState, FlakeStat } from './types';

const API_TEST: Omit<CheckFailure, 'check'> = { test: 'api adds', file: 'api/add.test.ts' };
const OTHER_TEST: Omit<CheckFailure, 'check'> = { test: 'web renders', file: 'web/render.test.ts' };
const GROUPS = [
  { name: 'api', paths: ['api/'] },
  { name: 'web', paths: ['web/'] },
];

/** A queue with path groups that has seen `results` CI results (so a test that failed once is rarely flaky). */
function queue(results = 1000, config = {}): QueueDriver {
  const d = new QueueDriver({ pathGroups: GROUPS, maxParallel: 4, minBatch: 4, maxBatch: 4, screening: false, ...config });
  d.state = { ...d.state, stats: { ...d.state.stats, resultsSeen: results } };
  return d;
}

/** Sets entries' facts as the engine would (their lanes) or as history left them. */
function setEntry(d: QueueDriver, number: number, facts: Partial<EntryState>): void {
  d.state = { ...d.state, entries: d.state.entries.map((e) => (e.number === number ? { ...e, ...facts } : e)) };
}

/** Enqueues `numbers` while paused (so they form one batch), each with the facts `facts(n)` gives. */
function together(d: QueueDriver, numbers: number[], facts: (n: number) => Partial<EntryState> = () => ({})): void {
  d.send({ type: 'pause' });
  for (const n of numbers) {
    d.enqueue(n);
    setEntry(d, n, facts(n));
  }
  d.send({ type: 'resume' });
}

/** CI fails `batchId`'s candidate naming `failures` (none: pass/fail only). */
function fail(d: QueueDriver, batchId: string, failures: Omit<CheckFailure, 'check'>[] = []): void {
  const b = d.batch(batchId);
  d.send({ type: 'checkReported', batchId, candidateSha: b.candidateSha!, name: 'ci', state: 'failure', ...(failures.length > 0 && { failures }) });
}

/** Four PRs in one chain batch that fails with `failures`; #2 is in lane api, the others in web. */
function failedBatchOfFour(d: QueueDriver, failures: Omit<CheckFailure, 'check'>[] = [API_TEST]): void {
  together(d, [1, 2, 3, 4], (n) => ({ lanes: n === 2 ? ['api'] : ['web'] }));
  d.complete();
  const [b] = d.live();
  expect(b.prNumbers).toEqual([1, 2, 3, 4]);
  fail(d, b.id, failures);
  d.complete();
}

describe('blame by posterior (issue 40)', () => {
  it('is the default: a PR failing alone with pass/fail CI runs alone once more, then fails (two solo runs per head)', () => {
    const d = new QueueDriver();
    expect(d.state.config.flakyRetries).toBeNull();
    d.enqueue(7);
    d.complete();
    fail(d, d.live()[0].id);
    expect(d.entry(7).status).toBe('testing');
    expect(d.entry(7)).toMatchObject({ failuresAlone: 1, soloRuns: 1, suspectedFor: [{ check: 'ci', test: '' }] });
    d.complete();
    const retry = d.live()[0];
    expect(retry.role).toBe('part');
    fail(d, retry.id);
    expect(d.entry(7).status).toBe('failed');
    expect(d.entry(7).soloRuns).toBe(2);
    expect(d.monitor.violations).toEqual([]);
  });

  it('keeps the fixed flaky budget for a queue that sets flakyRetries: 0 fails a PR on its first failure alone', () => {
    const d = new QueueDriver({ flakyRetries: 0 });
    d.enqueue(7);
    d.complete();
    fail(d, d.live()[0].id);
    expect(d.entry(7).status).toBe('failed');
  });

  it('tests a named suspect alone first, and fails it on its first solo failure when it reproduces a rarely flaky test', () => {
    const d = queue();
    failedBatchOfFour(d);
    expect(d.entry(2).suspectedFor).toEqual([{ check: 'ci', ...API_TEST }]);
    // The named PR (its lane holds the failing test's file) runs alone first; the rest of its
    // group is bisected on the runners left.
    const parts = d.live();
    expect(parts.map((p) => [p.role, p.prNumbers])).toEqual([
      ['part', [2]],
      ['part', [1]],
      ['part', [3]],
      ['part', [4]],
    ]);
    expect(failFirstTests(d.state, parts[0])).toEqual([{ check: 'ci', ...API_TEST }]);
    fail(d, parts[0].id, [API_TEST]);
    expect(d.entry(2).status).toBe('failed');
    for (const p of parts.slice(1)) d.report(p.id, 'success');
    expect(d.entry(2).badProbability).toBeGreaterThanOrEqual(BLAME_THRESHOLD);
    // Its siblings passed alone and land.
    landAll(d);
    for (const n of [1, 3, 4]) expect(d.entry(n).status).toBe('merged');
    expect(d.monitor.violations).toEqual([]);
  });

  it('runs a named suspect alone once more when the failing test is often flaky', () => {
    const d = queue();
    const key = failureKey({ check: 'ci', test: API_TEST.test });
    d.state = { ...d.state, stats: { ...d.state.stats, flakes: { [key]: { failed: 100, flaked: 40, retested: 50, at: 0 } } } };
    expect(flakeRate(d.state, key)).toBeGreaterThan(0.05);
    failedBatchOfFour(d);
    const [solo] = d.live();
    fail(d, solo.id, [API_TEST]);
    expect(d.entry(2).status).toBe('testing');
    expect(d.entry(2)).toMatchObject({ soloRuns: 1, failuresAlone: 1 });
    expect(d.entry(2).badProbability).toBeLessThan(BLAME_THRESHOLD);
    d.complete();
    const [again] = d.live().filter((b) => b.prNumbers.includes(2));
    expect(again.role).toBe('part');
    fail(d, again.id, [API_TEST]);
    expect(d.entry(2).status).toBe('failed');
  });

  it('treats a solo failure of other tests as a new failure, not a reproduction: no blame on it alone', () => {
    const d = queue();
    failedBatchOfFour(d);
    const [solo] = d.live();
    fail(d, solo.id, [OTHER_TEST]);
    expect(d.entry(2).status).toBe('testing');
    expect(d.entry(2).suspectedFor).toEqual([{ check: 'ci', ...OTHER_TEST }]);
    // The failure that named it is unexplained: the rest of its group stays suspect.
    expect([1, 3, 4].every((n) => d.entry(n).suspectGroup !== null)).toBe(true);
  });

  it('exonerates a named suspect that passes alone and bisects the rest; it is not suspected again for the same failure', () => {
    const d = queue();
    failedBatchOfFour(d);
    const [solo] = d.live();
    d.report(solo.id, 'success');
    const key = failureKey({ check: 'ci', test: API_TEST.test });
    expect(d.entry(2).exonerations).toEqual([key]);
    expect(d.entry(2).suspectedFor).toBeUndefined();
    expect(d.entry(2).soloRuns).toBe(1);
    d.complete();
    const parts = d.live().filter((b) => b.role === 'part' && !b.prNumbers.includes(2));
    expect(parts.flatMap((p) => p.prNumbers).sort()).toEqual([1, 3, 4]);
    expect(parts.every((p) => p.status === 'testing')).toBe(true);
    // #1 is the culprit; #2 rides with it in a new chain batch that fails the same way.
    for (const p of parts) p.prNumbers.includes(1) ? fail(d, p.id, [API_TEST]) : d.report(p.id, 'success');
    d.complete();
    const again = d.state.batches.find((b) => b.prNumbers.includes(2) && b.prNumbers.length > 1 && b.status === 'testing');
    if (again && again.prNumbers.length > 1) {
      fail(d, again.id, [API_TEST]);
      expect(d.entry(2).suspectGroup).toBeNull();
      expect(d.entry(2).status).toBe('queued');
    }
    expect(d.monitor.violations).toEqual([]);
  });

  it('suspects every PR again when all of a failed batch are exonerated for its failure', () => {
    const d = queue();
    const key = failureKey({ check: 'ci', test: API_TEST.test });
    together(d, [1, 2, 3, 4], () => ({ exonerations: [key] }));
    d.complete();
    fail(d, d.live()[0].id, [API_TEST]);
    const groups = new Set([1, 2, 3, 4].map((n) => d.entry(n).suspectGroup));
    expect(groups.size).toBe(1);
    expect([...groups][0]).not.toBeNull();
  });

  it('at the cap, exonerates a PR whose failures are mostly flakes instead of failing it', () => {
    const d = queue(1000, { minBatch: 1, maxBatch: 1 });
    const key = failureKey({ check: 'ci', test: OTHER_TEST.test });
    d.state = { ...d.state, stats: { ...d.state.stats, flakes: { [key]: { failed: 500, flaked: 300, retested: 300, at: 0 } } } };
    d.enqueue(5);
    d.complete();
    fail(d, d.live()[0].id, [OTHER_TEST]);
    d.complete();
    fail(d, d.live()[0].id, [OTHER_TEST]);
    // Back in the line (and at once in a new chain batch), not failed.
    expect(d.entry(5).status).not.toBe('failed');
    expect(d.entry(5)).toMatchObject({ soloRuns: 2, failuresAlone: 0, exonerations: [key] });
    expect(d.entry(5).suspectedFor).toBeUndefined();
  });

  it('the livelock guard: a PR is failed at its tenth failing run', () => {
    const d = queue();
    together(d, [1, 2, 3, 4], (n) => (n === 3 ? { failingRuns: MAX_FAILING_RUNS - 1 } : {}));
    d.complete();
    fail(d, d.live()[0].id);
    expect(d.entry(3).status).toBe('failed');
    expect(d.entry(3).failingRuns).toBe(MAX_FAILING_RUNS);
    expect(d.entry(1).status).not.toBe('failed');
    expect(d.entry(1).suspectGroup).not.toBeNull();
  });

  it('learns a flake from a failure and a pass on the same commit (a CI re-run), and its rate rises', () => {
    const d = queue(1000, { minBatch: 1, maxBatch: 1 });
    const key = failureKey({ check: 'ci', test: API_TEST.test });
    d.enqueue(1);
    d.complete();
    const [b] = d.live();
    fail(d, b.id, [API_TEST]);
    expect(d.state.stats.flakes?.[key]).toMatchObject({ failed: 1, flaked: 0 });
    expect(d.state.stats.recentFailures).toEqual([{ sha: b.candidateSha, check: 'ci', keys: [key] }]);
    const before = flakeRate(d.state, key);
    // The re-run passes: the batch is already failed, the pass still teaches.
    d.report(b.id, 'success');
    expect(d.state.stats.flakes?.[key]).toMatchObject({ failed: 1, flaked: 1, retested: 1 });
    expect(d.state.stats.recentFailures).toEqual([]);
    expect(flakeRate(d.state, key)).toBeGreaterThan(before);
    // A second pass is no second re-test.
    const state = d.state;
    d.report(b.id, 'success');
    expect(d.state).toBe(state);
  });

  it('counts a failure again on the same commit (a new candidate that is the same commit) as re-tested, not flaked', () => {
    const d = queue(1000, { minBatch: 1, maxBatch: 1 });
    const key = failureKey({ check: 'ci', test: API_TEST.test });
    d.enqueue(1);
    d.complete();
    const [b] = d.live();
    fail(d, b.id, [API_TEST]);
    // The solo retry on the unchanged base is the same commit (candidates are deterministic).
    const prepare = d.take('prepare');
    d.send({ type: 'operationSucceeded', operationId: prepare.id, candidateSha: b.candidateSha! });
    const [retry] = d.live();
    expect(retry.candidateSha).toBe(b.candidateSha);
    d.complete();
    fail(d, retry.id, [API_TEST]);
    expect(d.state.stats.flakes?.[key]).toMatchObject({ failed: 2, flaked: 0, retested: 1 });
  });

  it('keeps at most MAX_FLAKE_KEYS keys, forgetting the least recently failed', () => {
    const d = queue(1000, { minBatch: 1, maxBatch: 1 });
    const flakes: Record<string, FlakeStat> = {};
    for (let i = 0; i < MAX_FLAKE_KEYS; i++) flakes[failureKey({ check: 'ci', test: `t${i}` })] = { failed: 1, flaked: 0, at: i + 1 };
    d.state = { ...d.state, stats: { ...d.state.stats, flakes } };
    d.now = 10_000;
    d.enqueue(1);
    d.complete();
    fail(d, d.live()[0].id, [API_TEST]);
    const kept = d.state.stats.flakes!;
    expect(Object.keys(kept)).toHaveLength(MAX_FLAKE_KEYS);
    expect(kept[failureKey({ check: 'ci', test: 't0' })]).toBeUndefined();
    expect(kept[failureKey({ check: 'ci', test: API_TEST.test })]).toMatchObject({ failed: 1, at: 10_000 });
  });
});
