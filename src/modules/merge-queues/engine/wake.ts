import { heavyThresholdMs, type MergeQueueState } from '../planner';

/**
 * When a tick next has something to do for this state (the sweep's `nextWakeAt`): the earliest
 * check deadline of a batch whose CI may be running (`testing`, `reconciling`), or the moment a
 * testing run goes past the heavy threshold (the tick learns the run is heavy, ci-weight.ts).
 * `handledUpTo`: the time of a tick the state has already seen; moments up to it are done and do
 * not count (a reconciling batch past its deadline is not ticked again and again). Null: nothing
 * timed (an idle queue, or one whose CI is not started).
 */
export function nextWakeAt(state: MergeQueueState, handledUpTo: number | null = null): number | null {
  const threshold = heavyThresholdMs(state.stats, state.config.heavyCiFactor);
  let next = Infinity;
  const consider = (at: number) => {
    if (handledUpTo !== null && at <= handledUpTo) return;
    if (at < next) next = at;
  };
  for (const b of state.batches) {
    if ((b.status !== 'testing' && b.status !== 'reconciling') || b.ciStartedAt === null) continue;
    consider(b.ciStartedAt + state.config.checkTimeoutMs);
    // The tick notes a run strictly longer than the threshold.
    if (b.status === 'testing' && !b.ciSeenHeavy && Number.isFinite(threshold)) consider(b.ciStartedAt + Math.floor(threshold) + 1);
  }
  return Number.isFinite(next) ? next : null;
}
