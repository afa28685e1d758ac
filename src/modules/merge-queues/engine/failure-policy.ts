/*
 * What the merge-queue worker does after a queue's executor failed (a provider answering 5xx or
 * 429, the network, an unexpected error): wait, then try again, longer each time, and after too
 * many failures in a row put the queue on hold (quarantine) so that it stops costing requests and
 * the other queues go on. Pure: the caller gives the count, the provider's Retry-After (read from
 * the answer by git-providers' parseRetryAfter, seconds or an HTTP date) and a
 * random number, and stores the result (the count lives in Postgres on the queue's row).
 */

export interface FailurePolicy {
  /** The first retry waits up to this long (MERGE_QUEUE_RETRY_BASE_MS). */
  baseMs: number;
  /** No wait is longer than this, Retry-After included (MERGE_QUEUE_RETRY_MAX_MS). */
  maxMs: number;
  /** The queue is quarantined at this many failures in a row (MERGE_QUEUE_QUARANTINE_AFTER). */
  quarantineAfter: number;
}

export type FailureDecision = { quarantine: true } | { quarantine: false; delayMs: number };

/**
 * After the `failures`-th failure in a row (1 for the first): quarantine, or the wait before the
 * next try. The wait is exponential backoff with full jitter, `random * min(max, base * 2^(n-1))`
 * (`random` in [0, 1)), so that queues failing together do not retry together; a provider's
 * Retry-After is a floor (never earlier than it asked), and `maxMs` caps both (a provider cannot
 * hold a queue for longer than the operator allows).
 */
export function decideAfterFailure(policy: FailurePolicy, failures: number, retryAfterMs: number | undefined, random: number): FailureDecision {
  if (failures >= policy.quarantineAfter) return { quarantine: true };
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  const jittered = Math.floor(Math.min(Math.max(random, 0), 1) * ceiling);
  const floor = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) ? Math.max(0, retryAfterMs) : 0;
  return { quarantine: false, delayMs: Math.min(policy.maxMs, Math.max(floor, jittered)) };
}
