import { estimateMergeTimes } from './eta';
import { QueueDriver } from '@test/support/merge-queue-driver';

describe(estimateMergeTimes.name, () => {
  it('estimates every queued, testing and merging entry, later entries no earlier', () => {
    const d = new QueueDriver({ maxParallel: 2, maxBatch: 1, initialCiDurationMs: 60_000, minChainSuccess: 0 });
    for (const n of [1, 2, 3, 4, 5]) d.enqueue(n);
    d.send({ type: 'setAside', entryId: 'e5', setAside: true });
    d.complete();
    const estimates = estimateMergeTimes(d.state, 0);
    expect(estimates.map((e) => e.number).sort()).toEqual([1, 2, 3, 4]);
    const at = (n: number) => estimates.find((e) => e.number === n)?.estimatedMergeAt ?? NaN;
    expect(at(1)).toBeGreaterThanOrEqual(60_000);
    expect(at(2)).toBeGreaterThanOrEqual(at(1));
    expect(at(3)).toBeGreaterThan(at(2));
    expect(at(4)).toBeGreaterThanOrEqual(at(3));
  });

  it('estimates a PR behind a ready batch sooner than the same PR behind a batch still testing', () => {
    const d = new QueueDriver({ maxParallel: 1, maxBatch: 1, initialCiDurationMs: 60_000 });
    d.enqueue(1);
    d.enqueue(2);
    d.complete();
    d.send({ type: 'pause' });
    const [b] = d.live();
    expect(b.status).toBe('testing');
    const behindTesting = estimateMergeTimes(d.state, 0).find((e) => e.number === 2)?.estimatedMergeAt ?? NaN;
    d.report(b.id, 'success');
    expect(d.batch(b.id).status).toBe('ready');
    const behindReady = estimateMergeTimes(d.state, 0).find((e) => e.number === 2)?.estimatedMergeAt ?? NaN;
    expect(behindReady).toBeLessThan(behindTesting);
    // behind a testing batch #2 waits for that run and its own; behind a ready one only its own
    expect(behindTesting).toBeGreaterThanOrEqual(120_000);
    expect(behindReady).toBeGreaterThanOrEqual(d.state.stats.ciDurationMs);
    expect(behindReady).toBeLessThan(2 * d.state.stats.ciDurationMs);
  });

  it('counts a batch reconciling a step before its CI result as holding a runner, as the planner does', () => {
    const d = new QueueDriver({ maxParallel: 1, maxBatch: 1, initialCiDurationMs: 60_000 });
    d.enqueue(1);
    d.enqueue(2);
    d.complete(['prepare', 'publish']);
    const startCi = d.take('startCi');
    d.send({ type: 'operationUnknown', operationId: startCi.id });
    const [b] = d.live();
    expect(b.status).toBe('reconciling');
    // #2 waits for the runner #1 holds, then for its own run
    const at2 = estimateMergeTimes(d.state, 0).find((e) => e.number === 2)?.estimatedMergeAt ?? NaN;
    expect(at2).toBeGreaterThanOrEqual(2 * d.state.stats.ciDurationMs);
  });
});
