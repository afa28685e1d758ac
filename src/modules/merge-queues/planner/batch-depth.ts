import type { PlannerConfig } from './merge-queue.types';

/** Exponentially weighted moving average of a 0/1 outcome; stays within [0, 1]. */
export function ewma(previous: number, alpha: number, observation: number): number {
  return previous + alpha * (observation - previous);
}

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

/**
 * Whether a chain of `chainLength` batches may grow by one: speculation pays only while the
 * chance that every batch ahead passes (so the new candidate can land) stays above the floor.
 */
export function mayExtendChain(
  chainLength: number,
  batchFailureRate: number,
  config: PlannerConfig,
): boolean {
  if (chainLength === 0) return true;
  return Math.pow(1 - clamp(batchFailureRate, 0, 0.999), chainLength) >= config.minChainSuccess;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}
