import { GitCommandError } from './local-git.runner';
import { ProviderFailure } from './git-provider.port';
import { classifyMergeQueueGitFailure } from './merge-queue-failures';
import { classifyHttpFailure, parseRetryAfter } from './provider-failures';

describe(classifyMergeQueueGitFailure.name, () => {
  const http = (status: number, message: string, headers: Record<string, string> = {}) =>
    classifyMergeQueueGitFailure(classifyHttpFailure({ status, message, headers }));

  it("reads GitHub's refusals of a ref update as refusals that waiting will not change", () => {
    expect(http(422, 'Protected branch update failed for refs/heads/main.')).toEqual({
      kind: 'refused',
      reason: 'Protected branch update failed for refs/heads/main.',
    });
    expect(http(422, 'Repository rule violations found\n\nChanges must be made through a pull request.')).toMatchObject({ kind: 'refused' });
    expect(http(422, 'Required status check "ci" is expected.')).toMatchObject({ kind: 'refused' });
    expect(http(422, 'Reference does not exist')).toMatchObject({ kind: 'refused' });
    expect(http(403, 'Resource not accessible by integration')).toEqual({ kind: 'refused', reason: 'forbidden: Resource not accessible by integration' });
    expect(http(401, 'Bad credentials')).toMatchObject({ kind: 'refused' });
    expect(http(404, 'Not Found')).toMatchObject({ kind: 'refused' });
  });

  it('reads 5xx, rate limits and the network as transient, with Retry-After when the provider gave it', () => {
    expect(http(503, 'Service Unavailable', { 'retry-after': '7' })).toEqual({
      kind: 'transient',
      reason: 'unavailable: Service Unavailable',
      retryAfterMs: 7_000,
    });
    expect(http(502, 'Server Error')).toEqual({ kind: 'transient', reason: 'unavailable: Server Error' });
    expect(http(429, 'You have exceeded a secondary rate limit', { 'retry-after': '60' })).toMatchObject({ kind: 'transient', retryAfterMs: 60_000 });
    expect(http(403, 'You have exceeded a secondary rate limit', { 'retry-after': '30' })).toMatchObject({ kind: 'transient', retryAfterMs: 30_000 });
    // Without a header GitHub's message says it; the wait is then a minute (provider-failures.ts).
    expect(http(403, 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.')).toMatchObject({
      kind: 'transient',
      retryAfterMs: 60_000,
    });
    expect(classifyMergeQueueGitFailure(new ProviderFailure('timeout', 'no answer in 10000 ms'))).toMatchObject({ kind: 'transient' });
  });

  it('leaves anything else unexpected (the operation is reconciled)', () => {
    expect(http(409, 'Reference update failed')).toMatchObject({ kind: 'unexpected' });
    expect(http(422, 'Update is not a fast forward')).toMatchObject({ kind: 'unexpected' });
    expect(classifyMergeQueueGitFailure(new GitCommandError('git merge-tree failed'))).toMatchObject({ kind: 'unexpected' });
    expect(classifyMergeQueueGitFailure('boom')).toEqual({ kind: 'unexpected', reason: 'boom' });
  });
});

describe(parseRetryAfter.name, () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('gives a 503 with an HTTP-date Retry-After its wait in seconds', () => {
    const failure = classifyHttpFailure({
      status: 503,
      message: 'Service Unavailable',
      headers: { 'retry-after': new Date(Date.now() + 5_000).toUTCString() },
    });
    expect(failure.kind).toBe('unavailable');
    expect(failure.retryAfterSeconds).toBeGreaterThanOrEqual(4);
    expect(failure.retryAfterSeconds).toBeLessThanOrEqual(5);
  });
});
