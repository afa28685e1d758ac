import { QueueDriver } from '@test/support/merge-queue-driver';
import { enqueueTogether, landAll } from '@test/support/merge-queue-builders';

/*
 * Look-ahead screening (screening.ts): screens run base + a pool of waiting PRs on runners the
 * chain and probes cannot use, inform the chain's priors, and never land.
 */

/** A queue whose chain is one batch deep (minChainSuccess 0.99), so runners are left over for screens. */
function shallow(extra: Record<string, unknown> = {}): QueueDriver {
  return new QueueDriver({ maxParallel: 2, maxBatch: 2, minBatch: 1, minChainSuccess: 0.99, screenPoolSize: 2, ...extra });
}

/** A shallow queue holding PRs 1-6 with its first operations done: the chain takes 1-2, a screen 3-4. */
function screening(extra: Record<string, unknown> = {}): QueueDriver {
  const d = shallow(extra);
  enqueueTogether(d, [1, 2, 3, 4, 5, 6]);
  d.complete();
  return d;
}

const MIN = 60_000;
const screens = (d: QueueDriver) => d.live().filter((b) => b.role === 'screen');
const chain = (d: QueueDriver) => d.live().filter((b) => b.role === 'chain');

describe('screening', () => {
  it('runs a screen only on a runner the chain cannot use, and leaves its PRs queued', () => {
    const d = shallow();
    enqueueTogether(d, [1, 2, 3, 4, 5, 6]);
    expect(chain(d).map((b) => b.prNumbers)).toEqual([[1, 2]]);
    const [screen] = screens(d);
    expect(screen.prNumbers).toEqual([3, 4]);
    expect(screen.parentId).toBeNull();
    expect([3, 4].map((n) => d.entry(n).status)).toEqual(['queued', 'queued']);
    expect([3, 4].map((n) => d.entry(n).batchId)).toEqual([null, null]);
    expect(d.entry(3).screenId).toBe(screen.id);
    // Without a spare runner (the chain may use both) no screen starts.
    const busy = new QueueDriver({ maxParallel: 2, maxBatch: 2, minChainSuccess: 0, screenPoolSize: 2 });
    enqueueTogether(busy, [1, 2, 3, 4, 5, 6]);
    expect(screens(busy)).toHaveLength(0);
    expect(chain(busy)).toHaveLength(2);
    expect(d.monitor.violations).toEqual([]);
  });

  it('cancels a screen when a probe needs its runner', () => {
    const d = screening();
    const [root] = chain(d);
    const [screen] = screens(d);
    d.report(root.id, 'failure');
    // The failed batch's PRs are a suspect group; its probes take both runners.
    expect(d.batch(screen.id).status).toBe('withdrawn');
    expect(d.entry(3).screenId).toBeNull();
    expect(d.live().every((b) => b.role === 'part')).toBe(true);
    expect(d.pending.some((o) => o.kind === 'cleanup' && o.batchId === screen.id)).toBe(true);
    expect(d.monitor.violations).toEqual([]);
  });

  it('marks the PRs of a passing screen screened; a new head resets it', () => {
    const d = screening();
    const [screen] = screens(d);
    d.report(screen.id, 'success');
    expect(d.batch(screen.id).status).toBe('withdrawn');
    expect(d.entry(3).screened).toBe(true);
    expect(d.entry(4).screened).toBe(true);
    expect(d.entry(3).status).toBe('queued');
    d.send({ type: 'headUpdated', entryId: 'e3', headSha: 'h3b' });
    expect(d.entry(3).screened).toBe(false);
    expect(d.entry(4).screened).toBe(true);
    expect(d.monitor.violations).toEqual([]);
  });

  it('sizes chain batches of screened PRs by their lower failure prior', () => {
    // q = 45%: an unscreened batch takes one PR (0.55 < 0.6); screened PRs ride together.
    const d = new QueueDriver({ maxParallel: 2, maxBatch: 4, minChainSuccess: 0.99, screenPoolSize: 3, initialFailureRate: 0.45 });
    enqueueTogether(d, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(chain(d).map((b) => b.prNumbers)).toEqual([[1]]);
    d.complete();
    const [screen] = screens(d);
    expect(screen.prNumbers).toEqual([2, 3, 4]);
    d.report(screen.id, 'success');
    d.report(chain(d)[0].id, 'success');
    d.succeed(d.take('land'));
    const [next] = chain(d);
    expect(next.prNumbers).toEqual([2, 3, 4]);
    expect(next.screened).toBe(true);
    expect(d.monitor.violations).toEqual([]);
  });

  it('a failing screen makes its PRs suspects; the culprit fails alone, loses its place and is retried alone', () => {
    const d = shallow({ flakyRetries: 1 });
    enqueueTogether(d, [1, 2, 3, 4, 5, 6, 7]);
    d.complete();
    const [screen] = screens(d);
    d.report(screen.id, 'failure');
    expect(d.batch(screen.id).status).toBe('failed');
    expect(d.entry(3).screenGroup).toBeTruthy();
    expect(d.entry(3).screenGroup).toBe(d.entry(4).screenGroup);
    // The suspects are split: #3 alone is screened next.
    d.complete();
    const [half] = screens(d);
    expect(half.prNumbers).toEqual([3]);
    const before = d.entry(3).position;
    d.report(half.id, 'failure');
    const e3 = d.entry(3);
    expect(e3.failuresAlone).toBe(1);
    expect(e3.position).toBeGreaterThan(d.entry(7).position);
    expect(e3.position).toBeGreaterThan(before);
    // Its sibling is no longer a suspect.
    expect(d.entry(4).screenGroup).toBeNull();
    // Its retry is a solo probe on the base (on the runner the screen freed); failing again spends the flaky budget.
    const retry = d.live().find((b) => b.role === 'part' && b.prNumbers.includes(3));
    expect(retry?.prNumbers).toEqual([3]);
    expect(retry?.parentId).toBeNull();
    d.complete();
    d.report(retry!.id, 'failure');
    expect(d.entry(3).status).toBe('failed');
    expect(d.monitor.violations).toEqual([]);
  });

  it('never lands a screen: its PRs land only through the chain', () => {
    const d = shallow();
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    const [screen] = screens(d);
    d.report(screen.id, 'success');
    expect(d.issued.some((o) => o.kind === 'land' && o.batchId === screen.id)).toBe(false);
    expect(d.entry(3).status).toBe('queued');
    landAll(d);
    expect([1, 2, 3, 4].map((n) => d.entry(n).status)).toEqual(['merged', 'merged', 'merged', 'merged']);
    const landedBy = new Set(d.state.batches.filter((b) => b.status === 'landed').map((b) => b.role));
    expect(landedBy.has('screen')).toBe(false);
    expect(d.issued.filter((o) => o.kind === 'land').every((o) => d.batch(o.batchId).role !== 'screen')).toBe(true);
    expect(d.monitor.violations).toEqual([]);
  });

  it('teaches heavy probabilities like a chain run: a short pass makes its PRs light, a long run heavy', () => {
    const d = screening({ initialCiDurationMs: 20 * MIN });
    const [screen] = screens(d);
    d.now = 15 * MIN;
    d.report(screen.id, 'success');
    expect(d.entry(3).heavyProbability).toBeLessThan(0.05);
    d.complete();
    const [next] = screens(d);
    expect(next.prNumbers).toEqual([5, 6]);
    d.now = 15 * MIN + 40 * MIN;
    d.send({ type: 'tick' });
    expect(d.entry(5).heavyProbability).toBeGreaterThan(0.3);
    expect(d.monitor.violations).toEqual([]);
  });
});
