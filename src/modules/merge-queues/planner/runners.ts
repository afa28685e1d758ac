import { batchOutcome } from './step';
import type { BatchState } from './types';

/**
 * Runner accounting: a batch holds a runner while it is preparing, testing with no result yet,
 * or reconciling a step before its CI result (it will resume there). A batch with a result, or
 * one whose land is in flight, does not.
 */
export function holdsRunner(b: BatchState, requiredChecks: readonly string[]): boolean {
  if (b.status === 'preparing') return true;
  if (b.status === 'testing') return batchOutcome(b, requiredChecks) === 'pending';
  return b.status === 'reconciling' && b.interruptedKind !== 'land' && batchOutcome(b, requiredChecks) === 'pending';
}
