import { batchDepthFor } from './batch-depth';
import type {
  MergeQueueEvent,
  MergeQueueOperation,
  MergeQueueState,
  PlannerConfig,
  PlannerResult,
  StatusTransition,
} from './merge-queue.types';
import { noteLongRuns, restartRunsOfLandedWork } from './planner-ci-weight';
import { type Ctx, isFinalBatch, setQueueStatus } from './planner-context';
import { applyEvent } from './planner-events';
import { advanceOperations, land, planNewBatches, prune, settleOnce } from './planner-planning';

export { batchOutcome, isFinalBatch } from './planner-context';

export const DEFAULT_PLANNER_CONFIG: PlannerConfig = {
  requiredChecks: ['ci'],
  maxParallel: 4,
  minBatch: 1,
  maxBatch: 16,
  flakyRetries: 1,
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
};

/** A fresh queue on `baseSha`; throws on a configuration the planner cannot honour. */
export function createMergeQueueState(input: {
  baseSha: string;
  config?: Partial<PlannerConfig>;
}): MergeQueueState {
  const config: PlannerConfig = { ...DEFAULT_PLANNER_CONFIG, ...input.config };
  config.requiredChecks = [...config.requiredChecks];
  if (config.requiredChecks.length === 0) throw new Error('at least one required check is needed');
  if (config.maxParallel < 1) throw new Error('maxParallel must be at least 1');
  if (config.minBatch < 1 || config.maxBatch < config.minBatch) {
    throw new Error('batch bounds must satisfy 1 <= minBatch <= maxBatch');
  }
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
      batchFailureRate: 1 - Math.pow(1 - config.initialFailureRate, 4),
      ciDurationMs: config.initialCiDurationMs,
      lightCiMs: config.initialCiDurationMs,
      heavyCiMs: 2.5 * config.initialCiDurationMs,
      heavyRate: config.initialHeavyRate,
      restartedBatches: 0,
      landedBatches: 0,
      failedBatches: 0,
    },
    config,
  };
}

/**
 * The merge-queue reducer. Pure and deterministic: it never mutates `state`, reads no clock or
 * randomness, and returns the next state plus the operations the executor must perform. An event
 * that changes nothing (duplicate, stale, unknown id) returns the same state object and no
 * operations; every other event increments `revision` by exactly one.
 */
export function reduceMergeQueue(state: MergeQueueState, event: MergeQueueEvent): PlannerResult {
  const s = cloneState(state);
  const ctx: Ctx = {
    s,
    ops: [],
    transitions: [],
    changed: false,
    at: event.at,
    entryById: new Map(),
    batchById: new Map(),
  };
  // Pruning before the event keeps an entry that turns final visible for at least one revision.
  prune(ctx);
  for (const e of s.entries) ctx.entryById.set(e.id, e);
  for (const b of s.batches) ctx.batchById.set(b.id, b);
  applyEvent(ctx, event);
  if (!ctx.changed) return { state, operations: [], transitions: [] };
  maintain(ctx);
  s.revision = state.revision + 1;
  return { state: s, operations: ctx.ops, transitions: ctx.transitions };
}

/** Runs a sequence of events through the reducer; a convenience for tests and replays. */
export function reduceAll(state: MergeQueueState, events: readonly MergeQueueEvent[]): PlannerResult {
  let current = state;
  const operations: MergeQueueOperation[] = [];
  const transitions: StatusTransition[] = [];
  for (const event of events) {
    const result = reduceMergeQueue(current, event);
    current = result.state;
    operations.push(...result.operations);
    transitions.push(...result.transitions);
  }
  return { state: current, operations, transitions };
}

function cloneState(s: MergeQueueState): MergeQueueState {
  return {
    ...s,
    counters: { ...s.counters },
    entries: s.entries.map((e) => ({ ...e })),
    batches: s.batches.map((b) => ({
      ...b,
      entryIds: [...b.entryIds],
      prNumbers: [...b.prNumbers],
      ciContentIds: [...b.ciContentIds],
      checks: b.checks.map((c) => ({ ...c })),
      operation: b.operation ? { ...b.operation } : null,
    })),
    cleanups: s.cleanups.map((c) => ({ ...c })),
    stats: { ...s.stats },
    config: { ...s.config, requiredChecks: [...s.config.requiredChecks] },
  };
}

// ---------------------------------------------------------------------------------------------
// maintain(): derive consequences and plan, unless the queue is on hold or reconciling.

function maintain(ctx: Ctx): void {
  const { s } = ctx;
  const planning = s.status === 'idle' || s.status === 'active';
  const reconciling = s.batches.some((b) => b.status === 'reconciling');
  if (planning && !reconciling) {
    let guard = 0;
    while (settleOnce(ctx) && guard++ < 10_000);
    land(ctx);
    noteLongRuns(ctx);
    restartRunsOfLandedWork(ctx);
    planNewBatches(ctx);
    advanceOperations(ctx);
  }
  if (planning) setQueueStatus(ctx, hasWork(ctx) ? 'active' : 'idle');
  s.batchDepth = batchDepthFor(s.stats.failureRate, s.config);
}

function hasWork(ctx: Ctx): boolean {
  return (
    ctx.s.batches.some((b) => !isFinalBatch(b)) ||
    ctx.s.entries.some((e) => e.status === 'queued' && !e.setAside)
  );
}
