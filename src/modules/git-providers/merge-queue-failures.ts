import { ProviderFailure } from './git-provider.port';

/**
 * What a failure of a MergeQueueGit call means for the merge-queue engine:
 * - `refused`: the provider said no for a reason that waiting will not change (a protected branch
 *   or a ruleset, a missing permission, a token the provider rejects, a deleted ref or repository);
 *   retrying is a loop, so the queue stops with the reason until someone deals with it;
 * - `transient`: the provider could not answer now (5xx, a timeout, the network, a rate limit,
 *   secondary ones included); the same call is tried again later, never before `retryAfterMs`
 *   when the provider said when (Retry-After);
 * - `unexpected`: anything else (a bug, a git command that failed): the operation's outcome is in
 *   doubt and is reconciled, and the failures in a row still count toward quarantine.
 */
export type MergeQueueGitFailure =
  { kind: 'refused'; reason: string } | { kind: 'transient'; reason: string; retryAfterMs?: number } | { kind: 'unexpected'; reason: string };

/** Refusals GitHub words as 422 (or 409): protected branches, rulesets, and refs that are gone. */
const REFUSAL =
  /protected branch|repository rule violation|rule violations?|required status check|changes must be made through a pull request|not accessible by|must have (push|admin|write) access|reference does not exist/i;

export function classifyMergeQueueGitFailure(error: unknown): MergeQueueGitFailure {
  if (!(error instanceof ProviderFailure)) return { kind: 'unexpected', reason: error instanceof Error ? error.message : String(error) };
  const reason = error.reason;
  switch (error.kind) {
    case 'rate_limited':
    case 'unavailable':
    case 'timeout':
    case 'unresolved':
      return {
        kind: 'transient',
        reason: `${error.kind}: ${reason}`,
        ...(error.retryAfterSeconds !== undefined && { retryAfterMs: error.retryAfterSeconds * 1000 }),
      };
    case 'unauthorized':
    case 'forbidden':
    case 'not_found':
    case 'refused':
      return { kind: 'refused', reason: `${error.kind}: ${reason}` };
    case 'rejected':
      return REFUSAL.test(reason) ? { kind: 'refused', reason } : { kind: 'unexpected', reason };
  }
}
