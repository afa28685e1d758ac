import { batchSuccessProbability } from './batch-depth';
import { holdsRunner } from './runners';
import { byPlanningOrder } from './priority';
import { batchOutcome, isFinalBatch } from './step';
import type { BatchState, EntryState, MergeQueueState } from './types';

export interface EntryEstimate {
  entryId: string;
  number: number;
  /** Expected time the entry lands, in the same clock as the events' `at`. */
  estimatedMergeAt: number;
}

/**
 * Estimated time to merge for every entry that is queued (not set aside), testing or merging,
 * from the planner's state alone: the observed CI duration (EWMA), the runners free now and when
 * the running candidates finish, landing in order, and the expected cost of failures (each future
 * batch fails with the observed per-PR failure rate, and a failure costs about one more CI round
 * for everything behind it). Blocked and set-aside entries get no estimate: they wait on a person.
 */
export function estimateMergeTimes(state: MergeQueueState, now: number): EntryEstimate[] {
  const ci = state.stats.ciDurationMs;
  const q = state.stats.failureRate;
  const required = state.config.requiredChecks;
  // Screens (screening.ts) land nothing and give way to the chain: their PRs count as waiting.
  const live = state.batches.filter((b) => !isFinalBatch(b) && b.role !== 'screen');
  const slots: number[] = [];
  const readyAt = new Map<string, number>();
  for (const b of live) {
    const at = expectedReady(b, now, ci, required);
    readyAt.set(b.id, at);
    if (holdsRunner(b, required)) slots.push(at);
  }
  while (slots.length < state.config.maxParallel) slots.push(now);
  slots.sort((a, b) => a - b);

  const byId = new Map<string, EntryState>(state.entries.map((e) => [e.id, e]));
  const out: EntryEstimate[] = [];
  let lastLand = now;
  let penalty = 0;
  for (const b of live) {
    const ready = readyAt.get(b.id) ?? now;
    if (batchOutcome(b, required) === 'pending' && b.status !== 'merging') {
      penalty += (1 - batchSuccessProbability(b.entryIds.length, q)) * ci;
    }
    lastLand = Math.max(lastLand, ready);
    for (const id of b.entryIds) {
      const e = byId.get(id);
      if (e) out.push({ entryId: e.id, number: e.number, estimatedMergeAt: lastLand + penalty });
    }
  }

  const waiting = state.entries.filter((e) => e.status === 'queued' && !e.setAside).sort(byPlanningOrder);
  const size = Math.max(1, Math.min(state.batchDepth, Math.ceil(waiting.length / Math.max(1, state.config.maxParallel))));
  for (let i = 0; i < waiting.length; i += size) {
    const chunk = waiting.slice(i, i + size);
    const start = slots.shift() ?? now;
    const ready = start + ci;
    insertSorted(slots, ready);
    lastLand = Math.max(lastLand, ready);
    penalty += (1 - batchSuccessProbability(chunk.length, q)) * ci;
    for (const e of chunk) {
      out.push({ entryId: e.id, number: e.number, estimatedMergeAt: lastLand + penalty });
    }
  }
  return out;
}

function expectedReady(b: BatchState, now: number, ci: number, required: readonly string[]): number {
  switch (b.status) {
    case 'ready':
    case 'merging':
      return now;
    case 'testing':
      if (batchOutcome(b, required) === 'failed') return now + ci;
      return Math.max(now, (b.ciStartedAt ?? now) + ci);
    default:
      return now + ci;
  }
}

function insertSorted(list: number[], value: number): void {
  let i = list.length;
  while (i > 0 && list[i - 1] > value) i -= 1;
  list.splice(i, 0, value);
}
