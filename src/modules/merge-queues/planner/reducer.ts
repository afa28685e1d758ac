import { batchDepthFor } from './batch-depth';
import { settleOnce } from './blame';
import { advanceCandidates } from './candidates';
import { planNewBatches } from './chain';
import { onTick, recordCheck } from './checks';
import { noteLongRuns, restartRunsOfLandedWork } from './ci-weight';
import { onEnqueue, onHeadUpdated, onRemove, onSetAside, onSetPriority, onTitleChanged } from './entry-changes';
import { onLandRefused, onQuarantined } from './holds';
import { issueLand } from './landing';
import { onOperationFailed, onOperationStarted, onOperationSucceeded, onOperationUnknown } from './operation-outcomes';
import { prune } from './pruning';
import { onConfigure, onDisable, onEnable, onMigrate, onMigrated, onPause, onResume } from './queue-controls';
import { type Ctx, isFinalBatch, moveBase, setQueueStatus } from './step';
import type { MergeQueueEvent, MergeQueueOperation, MergeQueueState, PlannerResult, StatusTransition } from './types';

/*
 * The reducer: one event in, the next state and the operations out. An event first records its
 * facts (applyEvent: each kind goes to the rule that owns it); then, unless the queue is on hold
 * or a batch is reconciling, one planning pass derives the consequences in a fixed order
 * (maintain). The map from each rule to its file is in docs/merge-queue.md.
 */

/** Safety bound on the settle loop; each settle step finalises or advances a batch, so it ends far sooner. */
export const MAX_SETTLE_STEPS = 10_000;

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

/** Records the event's facts. Consequences that need planning happen in maintain(). */
function applyEvent(ctx: Ctx, ev: MergeQueueEvent): void {
  switch (ev.type) {
    case 'enqueue':
      return onEnqueue(ctx, ev.entry);
    case 'headUpdated':
      return onHeadUpdated(ctx, ev.entryId, ev.headSha, ev.stopLand === true);
    case 'remove':
      return onRemove(ctx, ev.entryId, ev.reason === undefined ? undefined : { reason: ev.reason, headSha: ev.headSha }, ev.stopLand === true);
    case 'setAside':
      return onSetAside(ctx, ev.entryId, ev.setAside);
    case 'setPriority':
      return onSetPriority(ctx, ev.entryId, ev.priority);
    case 'titleChanged':
      return onTitleChanged(ctx, ev.entryId, ev.title);
    case 'pause':
      return onPause(ctx);
    case 'resume':
      return onResume(ctx);
    case 'disable':
      return onDisable(ctx);
    case 'enable':
      return onEnable(ctx);
    case 'migrate':
      return onMigrate(ctx);
    case 'configure':
      return onConfigure(ctx, ev.config);
    case 'migrated':
      return onMigrated(ctx, ev.baseSha);
    case 'baseMoved':
      return moveBase(ctx, ev.baseSha);
    case 'tick':
      return onTick(ctx);
    case 'operationStarted':
      return onOperationStarted(ctx, ev.operationId);
    case 'operationSucceeded':
      return onOperationSucceeded(ctx, ev.operationId, ev.candidateSha, ev.readBack);
    case 'operationFailed':
      return onOperationFailed(ctx, ev.operationId, ev.reason, ev.conflictEntryId, ev.baseSha);
    case 'operationUnknown':
      return onOperationUnknown(ctx, ev.operationId);
    case 'landRefused':
      return onLandRefused(ctx, ev.operationId, ev.reason);
    case 'quarantined':
      return onQuarantined(ctx, ev.reason, ev.operationId);
    case 'checkReported':
      return recordCheck(ctx, ev.batchId, ev.candidateSha, ev.name, ev.state, ev.notCounted, ev);
  }
}

/**
 * The planning pass, in order: settle results (blame, withdraw, ready), land the head, learn from
 * long runs, restart runs of landed work, start new batches, advance candidates. Nothing is
 * planned while the queue is on hold or any batch is reconciling.
 */
function maintain(ctx: Ctx): void {
  const { s } = ctx;
  const planning = s.status === 'idle' || s.status === 'active';
  const reconciling = s.batches.some((b) => b.status === 'reconciling');
  if (planning && !reconciling) {
    let guard = 0;
    while (settleOnce(ctx) && guard++ < MAX_SETTLE_STEPS);
    issueLand(ctx);
    noteLongRuns(ctx);
    restartRunsOfLandedWork(ctx);
    planNewBatches(ctx);
    advanceCandidates(ctx);
  }
  if (planning) setQueueStatus(ctx, hasWork(ctx) ? 'active' : 'idle');
  s.batchDepth = batchDepthFor(s.stats.failureRate, s.config);
}

function hasWork(ctx: Ctx): boolean {
  return ctx.s.batches.some((b) => !isFinalBatch(b)) || ctx.s.entries.some((e) => e.status === 'queued' && !e.setAside);
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
    ...(s.hold && { hold: { ...s.hold, entryIds: [...s.hold.entryIds] } }),
    stats: { ...s.stats },
    config: { ...s.config, requiredChecks: [...s.config.requiredChecks] },
  };
}
