import { estimateMergeTimes } from './eta';
import { QueueDriver } from './merge-queue.test-driver';

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

  it('is pure: the same state and time give the same estimates', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    expect(estimateMergeTimes(d.state, 5)).toEqual(estimateMergeTimes(d.state, 5));
  });
});
