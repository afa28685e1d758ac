import { batchDepthFor } from './batch-depth';
import { checkedPathGroups } from './lanes';
import type { MergeQueueState, PlannerConfig } from './types';

/*
 * The planner's tunables and a fresh queue. Every tunable a queue may set is a field of
 * `PlannerConfig` (documented there) with its default below; the fixed constants of each rule sit
 * beside that rule (CHAIN_FAILURE_EWMA_ALPHA in chain.ts, the CI-weight constants in
 * ci-weight.ts, MAX_SETTLE_STEPS in reducer.ts). docs/merge-queue.md maps each to its rule.
 */

export const DEFAULT_PLANNER_CONFIG: PlannerConfig = {
  requiredChecks: ['ci'],
  maxParallel: 4,
  minBatch: 1,
  maxBatch: 16,
  flakyRetries: null,
  checkTimeoutMs: 5 * 60 * 60 * 1000,
  urgentPriority: 100,
  historyLimit: 200,
  failureEwmaAlpha: 0.01,
  initialFailureRate: 0.03,
  targetBatchSuccess: 0.6,
  minChainSuccess: 0.1,
  initialCiDurationMs: 27 * 60 * 1000,
  probeShare: 0.5,
  heavyCiFactor: 1.75,
  restartMargin: 1.25,
  speculationTolerance: 0.5,
  initialHeavyRate: 0.1,
  screening: true,
  screenPoolSize: 0,
  screenedFailureRate: 0.005,
};

/** F (the chain batch failure rate) starts as the failure chance of a batch of this many PRs. */
export const INITIAL_CHAIN_BATCH_SIZE = 4;
/** The heavy-run mean starts at this multiple of `initialCiDurationMs`, until heavy runs are seen. */
export const INITIAL_HEAVY_CI_FACTOR = 2.5;

/** `config` with its own arrays, or an Error saying what the planner cannot honour. */
export function checkedConfig(input: PlannerConfig): PlannerConfig {
  const config = { ...input, requiredChecks: [...input.requiredChecks] };
  if (config.requiredChecks.length === 0) throw new Error('at least one required check is needed');
  if (new Set(config.requiredChecks).size !== config.requiredChecks.length) throw new Error('required checks must be distinct');
  if (config.maxParallel < 1) throw new Error('maxParallel must be at least 1');
  if (config.minBatch < 1 || config.maxBatch < config.minBatch) {
    throw new Error('batch bounds must satisfy 1 <= minBatch <= maxBatch');
  }
  if (config.pathGroups !== undefined) config.pathGroups = checkedPathGroups(config.pathGroups);
  return config;
}

/** A fresh queue on `baseSha`; throws on a configuration the planner cannot honour. */
export function createMergeQueueState(input: { baseSha: string; config?: Partial<PlannerConfig> }): MergeQueueState {
  const config = checkedConfig({ ...DEFAULT_PLANNER_CONFIG, ...input.config });
  return {
    revision: 0,
    status: 'idle',
    baseSha: input.baseSha,
    batchDepth: batchDepthFor(config.initialFailureRate, config),
    counters: { batch: 0, operation: 0, entry: 0, group: 0 },
    entries: [],
    batches: [],
    cleanups: [],
    stats: {
      failureRate: config.initialFailureRate,
      batchFailureRate: 1 - Math.pow(1 - config.initialFailureRate, INITIAL_CHAIN_BATCH_SIZE),
      ciDurationMs: config.initialCiDurationMs,
      lightCiMs: config.initialCiDurationMs,
      heavyCiMs: INITIAL_HEAVY_CI_FACTOR * config.initialCiDurationMs,
      heavyRate: config.initialHeavyRate,
      restartedBatches: 0,
      landedBatches: 0,
      failedBatches: 0,
    },
    config,
  };
}
