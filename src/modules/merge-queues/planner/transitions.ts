import type { MergeQueueBatchStatus, MergeQueueEntryStatus, MergeQueueStatus } from './types';

/** Allowed queue status changes; the meaning of each status is in docs/merge-queue.md. */
export const QUEUE_TRANSITIONS: Readonly<Record<MergeQueueStatus, readonly MergeQueueStatus[]>> = {
  idle: ['active', 'paused', 'migrating', 'disabled'],
  active: ['idle', 'paused', 'migrating', 'disabled'],
  paused: ['idle', 'active', 'migrating', 'disabled'],
  migrating: ['idle', 'active', 'paused', 'disabled'],
  disabled: ['idle', 'active'],
};

/** Allowed batch status changes; landed, failed and withdrawn are final. */
export const BATCH_TRANSITIONS: Readonly<Record<MergeQueueBatchStatus, readonly MergeQueueBatchStatus[]>> = {
  preparing: ['testing', 'withdrawn', 'reconciling'],
  testing: ['ready', 'failed', 'withdrawn', 'reconciling'],
  ready: ['merging', 'withdrawn'],
  // merging -> ready: the provider refused the land for good (holds.ts); it did not happen.
  merging: ['landed', 'withdrawn', 'reconciling', 'ready'],
  reconciling: ['preparing', 'testing', 'ready', 'landed', 'withdrawn'],
  landed: [],
  failed: [],
  withdrawn: [],
};

/** Allowed entry status changes; merged, removed and failed are final. */
export const ENTRY_TRANSITIONS: Readonly<Record<MergeQueueEntryStatus, readonly MergeQueueEntryStatus[]>> = {
  queued: ['testing', 'removed'],
  testing: ['queued', 'blocked', 'merging', 'failed', 'removed'],
  blocked: ['queued', 'removed'],
  merging: ['merged', 'testing', 'queued', 'removed'],
  merged: [],
  removed: [],
  failed: [],
};

export class IllegalTransitionError extends Error {
  constructor(
    readonly subject: 'queue' | 'batch' | 'entry',
    readonly from: string,
    readonly to: string,
    readonly id: string,
  ) {
    super(`illegal ${subject} transition ${from} -> ${to} (${id})`);
    this.name = 'IllegalTransitionError';
  }
}

function allowed<S extends string>(table: Readonly<Record<S, readonly S[]>>, from: S, to: S): boolean {
  return from === to || table[from].includes(to);
}

/** Throws IllegalTransitionError unless the queue table allows from -> to (staying put is allowed). */
export function assertQueueTransition(from: MergeQueueStatus, to: MergeQueueStatus, id = 'queue'): void {
  if (!allowed(QUEUE_TRANSITIONS, from, to)) throw new IllegalTransitionError('queue', from, to, id);
}

/** Throws IllegalTransitionError unless the batch table allows from -> to (staying put is allowed). */
export function assertBatchTransition(from: MergeQueueBatchStatus, to: MergeQueueBatchStatus, id: string): void {
  if (!allowed(BATCH_TRANSITIONS, from, to)) throw new IllegalTransitionError('batch', from, to, id);
}

/** Throws IllegalTransitionError unless the entry table allows from -> to (staying put is allowed). */
export function assertEntryTransition(from: MergeQueueEntryStatus, to: MergeQueueEntryStatus, id: string): void {
  if (!allowed(ENTRY_TRANSITIONS, from, to)) throw new IllegalTransitionError('entry', from, to, id);
}

/** True when a status change is in the table; used by the invariant checker. */
export function isAllowedTransition(subject: 'queue' | 'batch' | 'entry', from: string, to: string): boolean {
  const table: Readonly<Record<string, readonly string[]>> =
    subject === 'queue' ? QUEUE_TRANSITIONS : subject === 'batch' ? BATCH_TRANSITIONS : ENTRY_TRANSITIONS;
  return from === to || (table[from] ?? []).includes(to);
}

/**
 * True when `to` can be reached from `from` through allowed transitions; one reducer step may
 * take several (testing -> ready -> merging), each asserted on the way.
 */
export function isReachable(subject: 'queue' | 'batch' | 'entry', from: string, to: string): boolean {
  const table: Readonly<Record<string, readonly string[]>> =
    subject === 'queue' ? QUEUE_TRANSITIONS : subject === 'batch' ? BATCH_TRANSITIONS : ENTRY_TRANSITIONS;
  const seen = new Set<string>([from]);
  const frontier = [from];
  while (frontier.length > 0) {
    const current = frontier.pop() as string;
    if (current === to) return true;
    for (const nextStatus of table[current] ?? []) {
      if (!seen.has(nextStatus)) {
        seen.add(nextStatus);
        frontier.push(nextStatus);
      }
    }
  }
  return false;
}
