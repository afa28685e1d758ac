import type { MergeQueueState } from '../planner';

/** What one applied event did that the merge-queue metrics count (pure: from the state before and after). */
export interface MergeQueueMetricFacts {
  /** Planner ids of the batches that became `landed`. */
  landedBatchIds: string[];
  /** For each PR that became `merged`: the CI runs (batches holding it whose CI started) it took. */
  ciRunsPerLandedPr: number[];
  /** Suspect groups formed (a failed batch of several PRs to bisect, or a failing part split again). */
  bisections: number;
}

export function mergeQueueMetricFacts(before: MergeQueueState, after: MergeQueueState): MergeQueueMetricFacts {
  const batchBefore = new Map(before.batches.map((b) => [b.id, b.status]));
  const entryBefore = new Map(before.entries.map((e) => [e.id, e.status]));
  const landedBatchIds = after.batches.filter((b) => b.status === 'landed' && batchBefore.get(b.id) !== 'landed').map((b) => b.id);
  const ciRunsPerLandedPr = after.entries
    .filter((e) => e.status === 'merged' && entryBefore.get(e.id) !== 'merged')
    .map((e) => after.batches.filter((b) => b.entryIds.includes(e.id) && b.ciStartedAt !== null).length);
  const bisections = Math.max(0, (after.counters?.group ?? 0) - (before.counters?.group ?? 0));
  return { landedBatchIds, ciRunsPerLandedPr, bisections };
}
