import type { BatchState, CheckFailure, MergeQueueState } from './types';

/*
 * Fail-first hints (issue 40): the tests a candidate should run first because a PR it holds is a
 * suspect for them. A run that holds a culprit and runs its failing tests first fails in a fraction
 * of its time; a run of innocent PRs loses nothing. The hints are evidence the planner already
 * holds (the failing tests of the run that made each PR a suspect); they never decide blame.
 */

/** At most this many tests are hinted per candidate. */
export const MAX_FAIL_FIRST_TESTS = 100;

/** The key a failure is learnt and remembered by: its check and its test. */
export function failureKey(f: Pick<CheckFailure, 'check' | 'test'>): string {
  return `${f.check}\u241f${f.test}`;
}

/**
 * The tests `batch`'s candidate should run first: the failures that made any PR it holds (its
 * own and those of the batches it is built on, as its CI will run them) a suspect, each once, in
 * the order the PRs are merged, at most MAX_FAIL_FIRST_TESTS.
 */
export function failFirstTests(s: MergeQueueState, batch: BatchState): CheckFailure[] {
  const ids = batch.ciContentIds.length > 0 ? batch.ciContentIds : contentIds(s, batch);
  const byId = new Map(s.entries.map((e) => [e.id, e]));
  const seen = new Set<string>();
  const out: CheckFailure[] = [];
  for (const id of ids) {
    for (const f of byId.get(id)?.suspectedFor ?? []) {
      // A check-level failure (CI named no test, flakes.ts checkFailure) hints no test.
      if (f.test === '') continue;
      const key = failureKey(f);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(f);
      if (out.length >= MAX_FAIL_FIRST_TESTS) return out;
    }
  }
  return out;
}

/** The entries a batch's candidate holds that are not on the base: those of its parents, then its own. */
function contentIds(s: MergeQueueState, batch: BatchState): string[] {
  const chain: BatchState[] = [];
  const byId = new Map(s.batches.map((b) => [b.id, b]));
  for (let b: BatchState | undefined = batch; b; b = b.parentId ? byId.get(b.parentId) : undefined) chain.unshift(b);
  return chain.flatMap((b) => b.entryIds);
}
