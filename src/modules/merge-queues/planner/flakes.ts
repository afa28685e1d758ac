import { failureKey } from './fail-first';
import type { Ctx } from './step';
import type { CheckFailure, FlakeStat, MergeQueueState } from './types';

/*
 * Flake learning (issue 40, point 4): what the queue learns of each failure key (a check and a
 * test, or a check alone when CI named no test) from "failed, then passed on the same commit".
 * Every failed result counts a failure for its keys and is remembered by its commit (bounded); a
 * later result of the same check on that commit (a CI re-run, or a new candidate that is the same
 * commit: candidates are deterministic) re-tested it: a key that did not fail again flaked.
 * The tables are replaced, never changed in place (the reducer's input state is shared).
 *
 * The flake rate of a key, r = P(the key fails on a run of good changes), is estimated as
 *   r = share * rate,  share = (flaked + 1) / (retested + 3),  rate = (failed + 1) / (resultsSeen + 50)
 * `rate` is how often the key fails at all (a prior of one failure in 50 results), `share` the part
 * of its failures that are flakes, learnt from re-tests only (a prior of 1/3, so a key never
 * re-tested is taken as flaky a third of the time it fails rather than never). Failures of bad
 * changes that were never re-tested keep `share` at its prior: r is overestimated rather than
 * underestimated, which costs a solo run rather than a good PR.
 */

/** Failure keys with a flake history at most; the least recently failed is forgotten first. */
export const MAX_FLAKE_KEYS = 200;
/** Failed results remembered by commit, waiting for a re-test; the oldest is forgotten first. */
export const MAX_RECENT_FAILURES = 50;
/** Prior of `share` (above): flakes, and re-tests beyond them. */
export const FLAKE_SHARE_PRIOR = { flaked: 1, retested: 3 } as const;
/** Prior of `rate` (above): failures in results. */
export const FAILURE_RATE_PRIOR = { failed: 1, results: 50 } as const;

/** The key of a check's failure when CI named no test: the check alone (`test` empty). */
export function checkFailure(check: string): CheckFailure {
  return { check, test: '' };
}

/** The keys of `failures`, each once, in order. */
export function keysOf(failures: readonly CheckFailure[]): string[] {
  return [...new Set(failures.map(failureKey))];
}

/** The flake rate of `key` (the formula above). */
export function flakeRate(s: MergeQueueState, key: string): number {
  const st: Partial<FlakeStat> = s.stats.flakes?.[key] ?? {};
  const share = ((st.flaked ?? 0) + FLAKE_SHARE_PRIOR.flaked) / ((st.retested ?? 0) + FLAKE_SHARE_PRIOR.retested);
  const rate = ((st.failed ?? 0) + FAILURE_RATE_PRIOR.failed) / ((s.stats.resultsSeen ?? 0) + FAILURE_RATE_PRIOR.results);
  return Math.min(1, share * rate);
}

/**
 * One finished result of check `name` on commit `sha` (`failures`: the failing tests it named,
 * with a failing result): counts it, learns whether an earlier failure on the same commit
 * flaked, and remembers a failure until its commit is tested again.
 */
export function learnFromResult(ctx: Ctx, sha: string, name: string, passed: boolean, failures: readonly CheckFailure[]): void {
  const { stats } = ctx.s;
  stats.resultsSeen = (stats.resultsSeen ?? 0) + 1;
  ctx.changed = true;
  const recent = stats.recentFailures ?? [];
  const earlier = recent.find((f) => f.sha === sha && f.check === name);
  const named = failures.filter((f) => f.check === name);
  const keys = passed ? [] : keysOf(named.length > 0 ? named : [checkFailure(name)]);
  const flakes = { ...(stats.flakes ?? {}) };
  if (earlier) {
    // Re-tested: a key of the earlier failure that did not fail again flaked. A failure that names
    // no test says nothing of the earlier tests one by one: only its check-level key failed again.
    const again = new Set(passed ? [] : keys);
    const failedAgainUnnamed = !passed && named.length === 0;
    for (const key of earlier.keys) {
      const st = flakes[key] ?? { failed: 0, flaked: 0, at: ctx.at };
      const flaked = !again.has(key) && !failedAgainUnnamed;
      flakes[key] = { ...st, retested: (st.retested ?? 0) + 1, flaked: st.flaked + (flaked ? 1 : 0) };
    }
  }
  for (const key of keys) {
    const st = flakes[key] ?? { failed: 0, flaked: 0, at: ctx.at };
    flakes[key] = { ...st, failed: st.failed + 1, at: ctx.at };
  }
  if (earlier || keys.length > 0) stats.flakes = bounded(flakes);
  let next = earlier ? recent.filter((f) => f !== earlier) : recent;
  if (keys.length > 0) next = [...next, { sha, check: name, keys }].slice(-MAX_RECENT_FAILURES);
  if (next !== recent) stats.recentFailures = next;
}

/** The table within MAX_FLAKE_KEYS, keeping the most recently failed keys. */
function bounded(flakes: Record<string, FlakeStat>): Record<string, FlakeStat> {
  const keys = Object.keys(flakes);
  if (keys.length <= MAX_FLAKE_KEYS) return flakes;
  const kept = keys.sort((a, b) => flakes[b].at - flakes[a].at || (a < b ? -1 : 1)).slice(0, MAX_FLAKE_KEYS);
  return Object.fromEntries(kept.map((k) => [k, flakes[k]]));
}
