import {
  BATCH_TRANSITIONS,
  ENTRY_TRANSITIONS,
  IllegalTransitionError,
  QUEUE_TRANSITIONS,
  assertBatchTransition,
  assertEntryTransition,
  assertQueueTransition,
  isReachable,
} from './transitions';
import { MERGE_QUEUE_BATCH_STATUSES, MERGE_QUEUE_ENTRY_STATUSES, MERGE_QUEUE_STATUSES } from './types';

describe('merge-queue transition tables', () => {
  it('cover exactly the statuses of the spec', () => {
    expect(Object.keys(QUEUE_TRANSITIONS).sort()).toEqual([...MERGE_QUEUE_STATUSES].sort());
    expect(Object.keys(BATCH_TRANSITIONS).sort()).toEqual([...MERGE_QUEUE_BATCH_STATUSES].sort());
    expect(Object.keys(ENTRY_TRANSITIONS).sort()).toEqual([...MERGE_QUEUE_ENTRY_STATUSES].sort());
  });

  it('make landed, failed, withdrawn, merged, removed and failed entries final', () => {
    for (const s of ['landed', 'failed', 'withdrawn'] as const) expect(BATCH_TRANSITIONS[s]).toEqual([]);
    for (const s of ['merged', 'removed', 'failed'] as const) expect(ENTRY_TRANSITIONS[s]).toEqual([]);
  });

  it('reject any transition outside the tables', () => {
    expect(() => assertBatchTransition('landed', 'testing', 'b1')).toThrow(IllegalTransitionError);
    expect(() => assertBatchTransition('preparing', 'landed', 'b1')).toThrow(/preparing -> landed/);
    expect(() => assertEntryTransition('queued', 'merged', 'e1')).toThrow(IllegalTransitionError);
    expect(() => assertQueueTransition('disabled', 'paused')).toThrow(IllegalTransitionError);
    expect(() => assertBatchTransition('ready', 'merging', 'b1')).not.toThrow();
    expect(() => assertEntryTransition('merging', 'merged', 'e1')).not.toThrow();
    expect(() => assertQueueTransition('active', 'paused')).not.toThrow();
  });

  it('only lets a batch land through merging or reconciling', () => {
    expect(isReachable('batch', 'testing', 'landed')).toBe(true);
    expect(isReachable('batch', 'landed', 'testing')).toBe(false);
    for (const [from, tos] of Object.entries(BATCH_TRANSITIONS)) {
      if (tos.includes('landed')) expect(['merging', 'reconciling']).toContain(from);
    }
  });
});
