import { budgetExhausted, incrementalSince, jobMinutes, retryAfterSeconds, runnerOs, runsToImport, INCREMENTAL_OVERLAP_MS } from './usage-rules';

const job = (labels: string[], startedAt: string | null, completedAt: string | null) => ({ labels, runnerGroupName: null, startedAt, completedAt });
const run = (id: string, createdAt: string) => ({
  id,
  workflowId: '1',
  workflowName: 'CI',
  event: 'push',
  status: 'completed',
  conclusion: 'success',
  runAttempt: 1,
  createdAt,
  runStartedAt: createdAt,
  updatedAt: createdAt,
});

describe('usage rules', () => {
  it('classifies runners by label, self-hosted first', () => {
    expect(runnerOs(job(['ubuntu-latest'], null, null))).toBe('UBUNTU');
    expect(runnerOs(job(['windows-2022'], null, null))).toBe('WINDOWS');
    expect(runnerOs(job(['macos-14'], null, null))).toBe('MACOS');
    expect(runnerOs(job(['self-hosted', 'windows'], null, null))).toBe('SELF_HOSTED');
  });

  it('rounds each job up to the minute; self-hosted and unfinished jobs bill nothing', () => {
    expect(jobMinutes(job(['ubuntu-latest'], '2026-01-01T00:00:00Z', '2026-01-01T00:01:01Z'))).toEqual({ durationSeconds: 61, billableMinutes: 2 });
    expect(jobMinutes(job(['ubuntu-latest'], '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z'))).toEqual({ durationSeconds: 60, billableMinutes: 1 });
    expect(jobMinutes(job(['self-hosted'], '2026-01-01T00:00:00Z', '2026-01-01T00:10:00Z'))).toEqual({ durationSeconds: 600, billableMinutes: 0 });
    expect(jobMinutes(job(['ubuntu-latest'], '2026-01-01T00:00:00Z', null))).toEqual({ durationSeconds: 0, billableMinutes: 0 });
  });

  it('stops an incremental walk at the first run older than its lower bound', () => {
    const runs = [run('3', '2026-01-03T00:00:00Z'), run('2', '2026-01-02T00:00:00Z'), run('1', '2026-01-01T00:00:00Z')];
    expect(runsToImport(runs, true, null)).toEqual({ runs, last: false });
    expect(runsToImport(runs, false, null)).toEqual({ runs, last: true });
    expect(runsToImport(runs, true, new Date('2026-01-02T00:00:00Z'))).toEqual({ runs: runs.slice(0, 2), last: true });
    expect(runsToImport([], true, null).last).toBe(true);
    expect(incrementalSince(new Date('2026-01-02T00:00:00Z'))?.getTime()).toBe(Date.parse('2026-01-02T00:00:00Z') - INCREMENTAL_OVERLAP_MS);
    expect(incrementalSince(undefined)).toBeNull();
  });

  it('asks the caller to wait for the cooldown, or the provider reset when later', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds(now, 60, null)).toBe(60);
    expect(retryAfterSeconds(now, 60, new Date(now + 30_000))).toBe(60);
    expect(retryAfterSeconds(now, 60, new Date(now + 90_500))).toBe(91);
    expect(retryAfterSeconds(now, 0, new Date(now - 5_000))).toBe(0);
  });

  it('stops an import at its deadline (time in workers) or past its byte budget', () => {
    const caps = { deadlineMs: 60_000, maxBytes: 1_000 };
    expect(budgetExhausted({ runningMs: 59_999, bytesRead: 1_000 }, caps)).toBeUndefined();
    expect(budgetExhausted({ runningMs: 60_000, bytesRead: 0 }, caps)).toBe('DEADLINE_EXCEEDED');
    expect(budgetExhausted({ runningMs: 0, bytesRead: 1_001 }, caps)).toBe('BYTES_LIMIT_REACHED');
  });
});
