import { type BatchState, createMergeQueueState, newBatchState } from '../planner';
import { nextWakeAt } from './wake';

function batch(over: Partial<BatchState>): BatchState {
  const built = { status: 'testing' as const, candidateSha: 'c', published: true, ciStartedAt: 1_000 };
  return newBatchState({ id: 'b1', position: 1, entryIds: [], prNumbers: [], role: 'chain', parentId: null, baseSha: 'a' }, { ...built, ...over });
}

describe('nextWakeAt (the sweep wakes a queue then)', () => {
  const base = createMergeQueueState({ baseSha: 'a', config: { checkTimeoutMs: 60_000 } });
  const threshold = Math.floor(base.config.heavyCiFactor * base.stats.lightCiMs) + 1;

  it('is null for a queue with no CI running', () => {
    expect(nextWakeAt(base)).toBeNull();
    expect(nextWakeAt({ ...base, batches: [batch({ status: 'preparing', ciStartedAt: null })] })).toBeNull();
    expect(nextWakeAt({ ...base, batches: [batch({ status: 'landed' })] })).toBeNull();
  });

  it('is the earliest heavy threshold or check deadline of running CI', () => {
    const state = { ...base, batches: [batch({ id: 'b1', ciStartedAt: 5_000 }), batch({ id: 'b2', ciStartedAt: 2_000, ciSeenHeavy: true })] };
    expect(nextWakeAt(state)).toBe(Math.min(5_000 + threshold, 2_000 + 60_000));
    // A reconciling batch: its deadline only.
    expect(nextWakeAt({ ...base, batches: [batch({ status: 'reconciling', ciStartedAt: 7_000 })] })).toBe(67_000);
  });

  it('leaves out the moments a tick has already seen', () => {
    const state = { ...base, batches: [batch({ ciStartedAt: 1_000 })] };
    const [first, second] = [1_000 + threshold, 61_000].sort((a, b) => a - b);
    expect(nextWakeAt(state)).toBe(first);
    expect(nextWakeAt(state, first)).toBe(second);
    expect(nextWakeAt(state, second)).toBeNull();
  });
});
