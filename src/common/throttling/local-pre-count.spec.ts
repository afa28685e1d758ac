import { LocalPreCount } from './local-pre-count';

const spec = { ttlMs: 60_000, limit: 200, blockDurationMs: 60_000, name: 'principal' };
const KEY = '{p:rate-limit:key:1:principal}:hits';

describe('LocalPreCount', () => {
  it('asks Redis for a budget it has no reading of', () => {
    expect(new LocalPreCount().tryLocal(KEY, 200, 0)).toBeUndefined();
  });

  it('counts locally while the fresh reading leaves more than the margin, and hands the hits to the next increment', () => {
    const pre = new LocalPreCount();
    pre.synced(KEY, spec, { totalHits: 10, timeToExpireMs: 30_000, isBlocked: false }, 1_000);
    const record = pre.tryLocal(KEY, 200, 1_050);
    expect(record).toEqual({ totalHits: 11, timeToExpire: 30, isBlocked: false, timeToBlockExpire: 0 });
    expect(pre.tryLocal(KEY, 200, 1_060)?.totalHits).toBe(12);
    expect(pre.takePending(KEY)).toBe(2);
    expect(pre.takePending(KEY)).toBe(0);
  });

  it('asks Redis within the margin (a tenth of the limit, at least 20), on a stale reading, after the window and while blocked', () => {
    const pre = new LocalPreCount();
    pre.synced(KEY, spec, { totalHits: 179, timeToExpireMs: 30_000, isBlocked: false }, 0);
    expect(pre.tryLocal(KEY, 200, 10)?.totalHits).toBe(180);
    expect(pre.tryLocal(KEY, 200, 20)).toBeUndefined(); // 181 > 200 - 20
    pre.synced(KEY, spec, { totalHits: 10, timeToExpireMs: 90_000, isBlocked: false }, 100); // a new window
    expect(pre.tryLocal(KEY, 200, 301)).toBeUndefined(); // older than 200 ms
    pre.synced(KEY, spec, { totalHits: 11, timeToExpireMs: 100, isBlocked: false }, 400);
    expect(pre.tryLocal(KEY, 200, 500)).toBeUndefined(); // the window ended
    pre.synced(KEY, spec, { totalHits: 1, timeToExpireMs: 60_000, isBlocked: true }, 600);
    expect(pre.tryLocal(KEY, 200, 610)).toBeUndefined();
  });

  it('never counts a small budget locally', () => {
    const pre = new LocalPreCount();
    const small = { ...spec, limit: 20 };
    pre.synced(KEY, small, { totalHits: 0, timeToExpireMs: 60_000, isBlocked: false }, 0);
    expect(pre.tryLocal(KEY, 20, 1)).toBeUndefined();
  });

  it('keeps the highest count of a window when answers arrive out of order', () => {
    const pre = new LocalPreCount();
    pre.synced(KEY, spec, { totalHits: 50, timeToExpireMs: 30_000, isBlocked: false }, 0);
    pre.synced(KEY, spec, { totalHits: 40, timeToExpireMs: 30_010, isBlocked: false }, 5);
    expect(pre.tryLocal(KEY, 200, 10)?.totalHits).toBe(51);
  });

  it('takes every pending hit for one flush, once', () => {
    const pre = new LocalPreCount();
    const other = '{p:rate-limit:actor:1:actor}:hits';
    pre.synced(KEY, spec, { totalHits: 0, timeToExpireMs: 60_000, isBlocked: false }, 0);
    pre.synced(other, { ...spec, name: 'actor' }, { totalHits: 0, timeToExpireMs: 60_000, isBlocked: false }, 0);
    pre.tryLocal(KEY, 200, 1);
    pre.tryLocal(KEY, 200, 2);
    pre.tryLocal(other, 200, 3);
    expect(pre.hasPending()).toBe(true);
    expect(pre.takeAllPending()).toEqual([
      { hitKey: KEY, hits: 2, spec },
      { hitKey: other, hits: 1, spec: { ...spec, name: 'actor' } },
    ]);
    expect(pre.hasPending()).toBe(false);
  });

  it('forgets idle budgets past its size bound, never one with pending hits', () => {
    const pre = new LocalPreCount({ freshMs: 200, minMargin: 20, marginShare: 0.1, maxEntries: 2 });
    pre.synced('a', spec, { totalHits: 0, timeToExpireMs: 60_000, isBlocked: false }, 0);
    pre.tryLocal('a', 200, 1);
    pre.synced('b', spec, { totalHits: 0, timeToExpireMs: 60_000, isBlocked: false }, 0);
    pre.synced('c', spec, { totalHits: 0, timeToExpireMs: 60_000, isBlocked: false }, 1_000);
    expect(pre.size).toBe(2);
    expect(pre.takePending('a')).toBe(1);
  });
});
