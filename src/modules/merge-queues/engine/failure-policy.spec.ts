import { decideAfterFailure, type FailurePolicy } from './failure-policy';

const policy: FailurePolicy = { baseMs: 1_000, maxMs: 60_000, quarantineAfter: 8 };

describe('merge-queue failure policy', () => {
  it('backs off exponentially: the ceiling doubles with each failure in a row, up to the maximum', () => {
    // random just below 1: the wait is (almost) the ceiling itself.
    const waits = [1, 2, 3, 4, 5, 6, 7].map((n) => decideAfterFailure(policy, n, undefined, 0.999999));
    expect(waits.map((d) => (d.quarantine ? -1 : Math.round(d.delayMs / 1000)))).toEqual([1, 2, 4, 8, 16, 32, 60]);
  });

  it('uses full jitter: any wait from 0 to the ceiling, chosen by the random number', () => {
    expect(decideAfterFailure(policy, 3, undefined, 0)).toEqual({ quarantine: false, delayMs: 0 });
    expect(decideAfterFailure(policy, 3, undefined, 0.5)).toEqual({ quarantine: false, delayMs: 2_000 });
    expect(decideAfterFailure(policy, 3, undefined, 0.25)).toEqual({ quarantine: false, delayMs: 1_000 });
  });

  it("never retries before the provider's Retry-After, and never waits longer than the maximum", () => {
    expect(decideAfterFailure(policy, 1, 5_000, 0.1)).toEqual({ quarantine: false, delayMs: 5_000 });
    // The backoff wins when it is longer than Retry-After.
    expect(decideAfterFailure(policy, 6, 5_000, 0.999999)).toEqual({ quarantine: false, delayMs: 31_999 });
    // A provider asking for an hour cannot hold the queue past the maximum.
    expect(decideAfterFailure(policy, 1, 3_600_000, 0.1)).toEqual({ quarantine: false, delayMs: 60_000 });
  });

  it('quarantines at the configured number of failures in a row, not before', () => {
    expect(decideAfterFailure(policy, 7, undefined, 0.5).quarantine).toBe(false);
    expect(decideAfterFailure(policy, 8, undefined, 0.5)).toEqual({ quarantine: true });
    expect(decideAfterFailure(policy, 9, 1_000, 0.5)).toEqual({ quarantine: true });
  });

  it('stays finite for huge failure counts', () => {
    expect(decideAfterFailure({ ...policy, quarantineAfter: 10_000 }, 5_000, undefined, 0.999999)).toEqual({ quarantine: false, delayMs: 59_999 });
  });
});
