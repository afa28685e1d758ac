import type { PlannerConfig } from './types';

/*
 * Batch depth: how many PRs a chain batch takes. Larger batches need fewer CI runs; a failed
 * batch costs a bisection round, so the depth shrinks as the learned per-PR failure rate rises.
 */

/** Probability that a candidate of `size` independent PRs passes, each bad with probability `q`. */
export function batchSuccessProbability(size: number, q: number): number {
  return Math.pow(1 - clamp(q, 0, 1), size);
}

/**
 * The adaptive batch depth: the largest size whose estimated success probability is still at
 * least `targetBatchSuccess`, clamped to [minBatch, maxBatch]. A rising failure rate shrinks
 * batches (a failed batch costs a bisection round), a falling one grows them (fewer CI runs).
 */
export function batchDepthFor(failureRate: number, config: PlannerConfig): number {
  const q = clamp(failureRate, 1e-6, 0.999);
  const raw = Math.floor(Math.log(config.targetBatchSuccess) / Math.log(1 - q));
  return clamp(raw, config.minBatch, config.maxBatch);
}

/**
 * Size of the next chain batch: spread the waiting PRs over the free runners so that CI runs in
 * parallel when the queue is short, but never above the adaptive depth.
 */
export function nextBatchSize(waiting: number, freeSlots: number, depth: number, minBatch: number): number {
  if (waiting <= 0) return 0;
  const spread = Math.ceil(waiting / Math.max(1, freeSlots));
  return Math.min(waiting, clamp(spread, minBatch, depth));
}

export function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}
