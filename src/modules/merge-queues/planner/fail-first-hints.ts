import { failFirstTests } from './fail-first';
import type { BatchState, CheckFailure, EntryState, MergeQueueState } from './types';

/*
 * Fail-first hints as the queue shows them (issue 40): on a batch's details, by its candidate
 * commit for CI, and counted on the chain. Pure: what the planner holds in, the hints out.
 */

/** A PR the candidate holds that is a suspect, and the failing tests that made it one. */
export interface SuspectHint {
  entryId: string;
  number: number;
  /** The batch (planner id) the PR is in: this one, or one it is built on. */
  batchId: string;
  failures: CheckFailure[];
}

export interface BatchHints {
  /** The entries the candidate holds that are not on the base, in merge order (the parents' first). */
  holds: string[];
  suspects: SuspectHint[];
  /** The tests to run first (failFirstTests), at most MAX_FAIL_FIRST_TESTS. */
  failFirst: CheckFailure[];
}

/**
 * The hints of `batch`, from the batches it is built on (`chain`, any order; those the planner no
 * longer holds are left out) and the entries the planner holds (others are ignored: a PR the
 * planner dropped is final, and suspects no one).
 */
export function batchHints(batch: BatchState, chain: readonly BatchState[], entries: readonly EntryState[]): BatchHints {
  const batches = [...chain.filter((b) => b.id !== batch.id), batch];
  const byBatch = new Map(batches.map((b) => [b.id, b]));
  const lineage: BatchState[] = [];
  for (let b: BatchState | undefined = batch; b && !lineage.includes(b); b = b.parentId ? byBatch.get(b.parentId) : undefined) lineage.unshift(b);
  const holds = batch.ciContentIds.length > 0 ? [...batch.ciContentIds] : lineage.flatMap((b) => b.entryIds);
  const byEntry = new Map(entries.map((e) => [e.id, e]));
  const suspects = holds.flatMap((id): SuspectHint[] => {
    const e = byEntry.get(id);
    if (!e?.suspectedFor?.length) return [];
    const inBatch = lineage.find((b) => b.entryIds.includes(id)) ?? batch;
    return [{ entryId: e.id, number: e.number, batchId: inBatch.id, failures: e.suspectedFor.map((f) => ({ ...f })) }];
  });
  // failFirstTests reads only the state's entries and batches; given what the candidate holds, it walks no parent.
  const state = { entries: [...entries], batches } as Pick<MergeQueueState, 'entries' | 'batches'> as MergeQueueState;
  return { holds, suspects, failFirst: holds.length > 0 ? failFirstTests(state, { ...batch, ciContentIds: holds }) : [] };
}

/**
 * The hints as text for a test runner: each test's name on a line of its own, each name once (two
 * checks may name the same test), line breaks inside a name made spaces; empty when there is none.
 */
export function failFirstText(tests: readonly Pick<CheckFailure, 'test'>[]): string {
  const names = [...new Set(tests.map((t) => t.test.replace(/[\r\n]+/g, ' ').trim()).filter((t) => t.length > 0))];
  return names.length > 0 ? `${names.join('\n')}\n` : '';
}
