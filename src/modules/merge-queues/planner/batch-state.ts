import type { BatchState } from './types';

/** What names a new batch: who it holds, its role and what it is built on. */
export type NewBatch = Pick<BatchState, 'id' | 'position' | 'entryIds' | 'prNumbers' | 'role' | 'parentId' | 'baseSha'>;

/**
 * A batch as the planner creates it: `preparing`, no candidate built, published or tested yet
 * (its fields in the order the planner state has always stored them). `later` sets fields a batch
 * reaches afterwards, for a state built in a test.
 */
export function newBatchState(batch: NewBatch, later: Partial<BatchState> = {}): BatchState {
  return {
    id: batch.id,
    position: batch.position,
    entryIds: batch.entryIds,
    prNumbers: batch.prNumbers,
    status: 'preparing',
    role: batch.role,
    parentId: batch.parentId,
    baseSha: batch.baseSha,
    candidateSha: null,
    published: false,
    ciStartedAt: null,
    ciContentIds: [],
    ciSeenHeavy: false,
    checks: [],
    failureReason: null,
    operation: null,
    interruptedKind: null,
    withdrawOnResolve: false,
    ...later,
  };
}
