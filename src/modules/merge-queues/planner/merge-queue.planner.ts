import { batchDepthFor, ewma, mayExtendChain, nextBatchSize } from './batch-depth';
import {
  type CiDurationModel,
  expectedCiMs,
  expectedRemainingMs,
  heavyThresholdMs,
  observeLandedWeight,
  observePassingRun,
  posteriorAfterRun,
} from './ci-weight';
import {
  assertBatchTransition,
  assertEntryTransition,
  assertQueueTransition,
} from './merge-queue.transitions';
import type {
  BatchRole,
  BatchState,
  EnqueueInput,
  EntryState,
  MergeQueueBatchStatus,
  MergeQueueEntryStatus,
  MergeQueueEvent,
  MergeQueueOperation,
  MergeQueueOperationKind,
  MergeQueueState,
  MergeQueueStatus,
  PlannerConfig,
  PlannerResult,
  ReadBackFacts,
  StatusTransition,
} from './merge-queue.types';

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

interface Ctx {
  s: MergeQueueState;
  ops: MergeQueueOperation[];
  /** Every status step taken in this event, recorded by the asserting setters. */
  transitions: StatusTransition[];
  changed: boolean;
  at: number;
  entryById: Map<string, EntryState>;
  batchById: Map<string, BatchState>;
}

const LIVE_ENTRY: readonly MergeQueueEntryStatus[] = ['queued', 'testing', 'blocked', 'merging'];
const FINAL_BATCH: readonly MergeQueueBatchStatus[] = ['landed', 'failed', 'withdrawn'];

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

/** A required check's combined result on the batch's candidate. */
export function batchOutcome(
  batch: BatchState,
  requiredChecks: readonly string[],
): 'pending' | 'passed' | 'failed' {
  let allPassed = requiredChecks.length > 0;
  for (const name of requiredChecks) {
    const check = batch.checks.find((c) => c.name === name);
    if (check?.state === 'failure') return 'failed';
    if (check?.state !== 'success') allPassed = false;
  }
  return allPassed ? 'passed' : 'pending';
}

export function isFinalBatch(batch: BatchState): boolean {
  return FINAL_BATCH.includes(batch.status);
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
// Small helpers

function nextId(ctx: Ctx, kind: 'batch' | 'operation' | 'group'): string {
  ctx.s.counters[kind] += 1;
  const prefix = kind === 'batch' ? 'b' : kind === 'operation' ? 'op' : 'g';
  return `${prefix}${ctx.s.counters[kind]}`;
}

function setQueueStatus(ctx: Ctx, to: MergeQueueStatus): void {
  if (ctx.s.status === to) return;
  assertQueueTransition(ctx.s.status, to);
  ctx.transitions.push({ subject: 'queue', id: 'queue', from: ctx.s.status, to });
  ctx.s.status = to;
  ctx.changed = true;
}

function setBatchStatus(ctx: Ctx, b: BatchState, to: MergeQueueBatchStatus): void {
  if (b.status === to) return;
  assertBatchTransition(b.status, to, b.id);
  ctx.transitions.push({ subject: 'batch', id: b.id, from: b.status, to });
  b.status = to;
  ctx.changed = true;
}

function setEntryStatus(ctx: Ctx, e: EntryState, to: MergeQueueEntryStatus): void {
  if (e.status === to) return;
  assertEntryTransition(e.status, to, e.id);
  ctx.transitions.push({ subject: 'entry', id: e.id, from: e.status, to });
  e.status = to;
  ctx.changed = true;
}

function liveBatches(ctx: Ctx): BatchState[] {
  return ctx.s.batches.filter((b) => !isFinalBatch(b));
}

function childrenOf(ctx: Ctx, b: BatchState): BatchState[] {
  return ctx.s.batches.filter((c) => c.parentId === b.id && !isFinalBatch(c));
}

function isSealed(b: BatchState): boolean {
  return b.status === 'merging' || b.status === 'reconciling';
}

function entriesOf(ctx: Ctx, b: BatchState): EntryState[] {
  return b.entryIds.map((id) => ctx.entryById.get(id)).filter((e): e is EntryState => !!e);
}

function outcome(ctx: Ctx, b: BatchState): 'pending' | 'passed' | 'failed' {
  return batchOutcome(b, ctx.s.config.requiredChecks);
}

function issue(ctx: Ctx, b: BatchState, op: MergeQueueOperation): void {
  b.operation = { id: op.id, kind: op.kind, outcome: 'pending' };
  ctx.ops.push(op);
  ctx.changed = true;
}

function issueCleanup(ctx: Ctx, b: BatchState): void {
  const id = nextId(ctx, 'operation');
  ctx.s.cleanups.push({ operationId: id, batchId: b.id, candidateSha: b.candidateSha });
  ctx.ops.push({ id, kind: 'cleanup', batchId: b.id, candidateSha: b.candidateSha });
  ctx.changed = true;
}

function resetEvidence(e: EntryState): void {
  e.failuresAlone = 0;
  e.suspectGroup = null;
  e.cleared = false;
  e.heavyProbability = null;
}

/** Takes an entry out of its batch, applying a removal or head update deferred while sealed. */
function releaseEntry(ctx: Ctx, e: EntryState, to: 'queued' | 'failed'): void {
  e.batchId = null;
  ctx.changed = true;
  if (e.pendingRemoval) {
    e.pendingRemoval = false;
    e.pendingHeadSha = null;
    setEntryStatus(ctx, e, 'removed');
    return;
  }
  if (e.pendingHeadSha !== null) {
    e.headSha = e.pendingHeadSha;
    e.pendingHeadSha = null;
    resetEvidence(e);
    setEntryStatus(ctx, e, 'queued');
    return;
  }
  setEntryStatus(ctx, e, to);
}

/** Withdraws a batch and everything built on it; sealed batches are withdrawn once resolved. */
function withdraw(ctx: Ctx, b: BatchState, reason: string, resolved = false): void {
  if (isFinalBatch(b)) return;
  for (const child of childrenOf(ctx, b)) withdraw(ctx, child, `built on withdrawn ${b.id}`);
  if (isSealed(b) && !resolved) {
    if (!b.withdrawOnResolve) {
      b.withdrawOnResolve = true;
      ctx.changed = true;
    }
    return;
  }
  const hadArtifacts = b.operation !== null || b.candidateSha !== null;
  setBatchStatus(ctx, b, 'withdrawn');
  b.operation = null;
  b.failureReason = b.failureReason ?? reason;
  for (const e of entriesOf(ctx, b)) {
    if (e.batchId === b.id && (e.status === 'testing' || e.status === 'merging')) {
      releaseEntry(ctx, e, 'queued');
    }
  }
  if (hadArtifacts) issueCleanup(ctx, b);
}

function createBatch(
  ctx: Ctx,
  role: BatchRole,
  entries: EntryState[],
  parent: BatchState | null,
): BatchState {
  const b: BatchState = {
    id: nextId(ctx, 'batch'),
    position: ctx.s.counters.batch,
    entryIds: entries.map((e) => e.id),
    prNumbers: entries.map((e) => e.number),
    status: 'preparing',
    role,
    parentId: parent ? parent.id : null,
    baseSha: parent ? null : ctx.s.baseSha,
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
  };
  for (const e of entries) {
    setEntryStatus(ctx, e, 'testing');
    e.batchId = b.id;
  }
  ctx.s.batches.push(b);
  ctx.batchById.set(b.id, b);
  ctx.changed = true;
  return b;
}

function findByOperation(ctx: Ctx, operationId: string): BatchState | undefined {
  return ctx.s.batches.find((b) => b.operation?.id === operationId && !isFinalBatch(b));
}

// ---------------------------------------------------------------------------------------------
// Events: record the facts. Consequences that need planning happen in maintain().

function applyEvent(ctx: Ctx, ev: MergeQueueEvent): void {
  switch (ev.type) {
    case 'enqueue':
      return onEnqueue(ctx, ev.entry);
    case 'headUpdated':
      return onHeadUpdated(ctx, ev.entryId, ev.headSha);
    case 'remove':
      return onRemove(ctx, ev.entryId);
    case 'setAside':
      return onSetAside(ctx, ev.entryId, ev.setAside);
    case 'setPriority':
      return onSetPriority(ctx, ev.entryId, ev.priority);
    case 'pause':
      if (ctx.s.status === 'idle' || ctx.s.status === 'active') setQueueStatus(ctx, 'paused');
      return;
    case 'resume':
      if (ctx.s.status !== 'paused') return;
      setQueueStatus(ctx, 'active');
      applyUrgentRuleToAll(ctx);
      return;
    case 'disable':
      if (ctx.s.status === 'disabled') return;
      setQueueStatus(ctx, 'disabled');
      for (const b of liveBatches(ctx)) withdraw(ctx, b, 'queue disabled');
      return;
    case 'enable':
      if (ctx.s.status === 'disabled') setQueueStatus(ctx, 'active');
      return;
    case 'migrate':
      if (ctx.s.status === 'idle' || ctx.s.status === 'active' || ctx.s.status === 'paused') {
        setQueueStatus(ctx, 'migrating');
      }
      return;
    case 'migrated':
      if (ctx.s.status !== 'migrating') return;
      setQueueStatus(ctx, 'active');
      moveBase(ctx, ev.baseSha);
      applyUrgentRuleToAll(ctx);
      return;
    case 'baseMoved':
      moveBase(ctx, ev.baseSha);
      return;
    case 'tick':
      return onTick(ctx);
    case 'operationStarted': {
      const b = findByOperation(ctx, ev.operationId);
      if (b?.operation && b.operation.outcome === 'pending') {
        b.operation.outcome = 'running';
        ctx.changed = true;
      }
      return;
    }
    case 'operationSucceeded':
      return onSucceeded(ctx, ev.operationId, ev.candidateSha, ev.readBack);
    case 'operationFailed':
      return onFailed(ctx, ev.operationId, ev.reason, ev.conflictEntryId, ev.baseSha);
    case 'operationUnknown':
      return onUnknown(ctx, ev.operationId);
    case 'checkReported':
      return onCheck(ctx, ev.batchId, ev.candidateSha, ev.name, ev.state);
  }
}

function moveBase(ctx: Ctx, sha: string): void {
  if (ctx.s.baseSha === sha) return;
  ctx.s.baseSha = sha;
  ctx.changed = true;
}

function onEnqueue(ctx: Ctx, input: EnqueueInput): void {
  if (ctx.entryById.has(input.id)) return;
  const duplicate = ctx.s.entries.some((e) => e.number === input.number && LIVE_ENTRY.includes(e.status));
  if (duplicate) return;
  ctx.s.counters.entry += 1;
  const e: EntryState = {
    id: input.id,
    number: input.number,
    headSha: input.headSha,
    url: input.url,
    title: input.title ?? null,
    status: 'queued',
    priority: input.priority ?? 0,
    setAside: false,
    position: ctx.s.counters.entry,
    batchId: null,
    block: null,
    enqueuedAt: ctx.at,
    failuresAlone: 0,
    suspectGroup: null,
    cleared: false,
    pendingHeadSha: null,
    pendingRemoval: false,
    heavyProbability: null,
  };
  ctx.s.entries.push(e);
  ctx.entryById.set(e.id, e);
  ctx.changed = true;
  applyUrgentRule(ctx, e);
}

function onHeadUpdated(ctx: Ctx, entryId: string, headSha: string): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status)) return;
  if (e.headSha === headSha && e.pendingHeadSha === null && e.status !== 'blocked') return;
  const b = e.batchId ? ctx.batchById.get(e.batchId) : undefined;
  if (b && isSealed(b)) {
    e.pendingHeadSha = headSha;
    ctx.changed = true;
    if (b.status === 'reconciling') withdraw(ctx, b, `new head for #${e.number}`);
    return;
  }
  if (b) withdraw(ctx, b, `new head for #${e.number}`);
  e.headSha = headSha;
  e.block = null;
  resetEvidence(e);
  setEntryStatus(ctx, e, 'queued');
  ctx.changed = true;
}

function onRemove(ctx: Ctx, entryId: string): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status)) return;
  const b = e.batchId ? ctx.batchById.get(e.batchId) : undefined;
  if (b && isSealed(b)) {
    if (!e.pendingRemoval) {
      e.pendingRemoval = true;
      ctx.changed = true;
    }
    if (b.status === 'reconciling') withdraw(ctx, b, `#${e.number} removed`);
    return;
  }
  if (b) withdraw(ctx, b, `#${e.number} removed`);
  e.batchId = null;
  setEntryStatus(ctx, e, 'removed');
}

function onSetAside(ctx: Ctx, entryId: string, setAside: boolean): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status) || e.setAside === setAside) return;
  e.setAside = setAside;
  ctx.changed = true;
  const b = e.batchId ? ctx.batchById.get(e.batchId) : undefined;
  if (setAside && b && !isSealed(b)) withdraw(ctx, b, `#${e.number} set aside`);
}

function onSetPriority(ctx: Ctx, entryId: string, priority: number): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status) || e.priority === priority) return;
  e.priority = priority;
  ctx.changed = true;
  applyUrgentRule(ctx, e);
}

/**
 * Urgent rule: a queued entry at or above `urgentPriority` withdraws every batch that is still
 * preparing or testing and holds no urgent entry, so the urgent PR is tested next on the base.
 * Batches that are ready, merging or reconciling are kept: they are about to land anyway.
 * The rule applies only while the queue plans (idle or active): a paused, migrating or disabled
 * queue lets the CI runs that already exist finish, and resume applies the rule to every urgent
 * entry still queued.
 */
function applyUrgentRule(ctx: Ctx, e: EntryState): void {
  if (ctx.s.status !== 'idle' && ctx.s.status !== 'active') return;
  const urgent = ctx.s.config.urgentPriority;
  if (e.priority < urgent || e.status !== 'queued' || e.setAside) return;
  for (const b of liveBatches(ctx)) {
    if (isFinalBatch(b) || (b.status !== 'preparing' && b.status !== 'testing')) continue;
    const holdsUrgent = entriesOf(ctx, b).some((x) => x.priority >= urgent);
    if (!holdsUrgent) withdraw(ctx, b, `urgent #${e.number} jumps the queue`);
  }
}

function applyUrgentRuleToAll(ctx: Ctx): void {
  for (const e of ctx.s.entries) applyUrgentRule(ctx, e);
}

function onTick(ctx: Ctx): void {
  noteLongRuns(ctx);
  const { checkTimeoutMs, requiredChecks } = ctx.s.config;
  for (const b of ctx.s.batches) {
    if (b.status !== 'testing' || b.ciStartedAt === null) continue;
    if (ctx.at - b.ciStartedAt < checkTimeoutMs) continue;
    if (outcome(ctx, b) !== 'pending') continue;
    for (const name of requiredChecks) {
      const check = b.checks.find((c) => c.name === name);
      if (check && check.state === 'pending') {
        check.state = 'failure';
        b.failureReason = `check ${name} did not report within ${Math.round(checkTimeoutMs / 60000)} min`;
        ctx.changed = true;
      }
    }
  }
}

function onCheck(
  ctx: Ctx,
  batchId: string,
  candidateSha: string,
  name: string,
  state: 'pending' | 'success' | 'failure',
): void {
  const b = ctx.batchById.get(batchId);
  if (!b || isFinalBatch(b) || b.candidateSha !== candidateSha) return;
  if (b.status !== 'testing' && b.status !== 'reconciling') return;
  // A check report on the candidate proves CI started: the startCi is done whatever its executor
  // reports later (its late outcome is then ignored).
  if (b.status === 'testing' && isUnfinishedStartCi(b)) {
    b.operation = null;
    ctx.changed = true;
  }
  if (state === 'pending') return;
  const check = b.checks.find((c) => c.name === name);
  if (!check || check.state !== 'pending') return;
  check.state = state;
  ctx.changed = true;
  if (state === 'failure') b.failureReason = `check ${name} failed`;
  if (b.status === 'testing' && outcome(ctx, b) === 'passed') {
    if (b.ciStartedAt !== null) learnFromPassingRun(ctx, b, ctx.at - b.ciStartedAt);
    setBatchStatus(ctx, b, 'ready');
  }
}

// ---------------------------------------------------------------------------------------------
// CI weight: which PRs make the runs that hold them long (see ci-weight.ts)

function durationModel(ctx: Ctx): CiDurationModel {
  const { lightCiMs, heavyCiMs, heavyRate } = ctx.s.stats;
  return { lightCiMs, heavyCiMs, heavyRate };
}

function heavyProbabilities(ctx: Ctx, ids: readonly string[]): (number | null)[] {
  return ids.map((id) => ctx.entryById.get(id)?.heavyProbability ?? null);
}

/** Bayes' update of the entries a run held, once the run was seen light or heavy. */
function learnWeights(ctx: Ctx, b: BatchState, seenHeavy: boolean): void {
  const posterior = posteriorAfterRun(heavyProbabilities(ctx, b.ciContentIds), seenHeavy, durationModel(ctx));
  b.ciContentIds.forEach((id, i) => {
    const e = ctx.entryById.get(id);
    if (e && e.heavyProbability !== posterior[i]) e.heavyProbability = posterior[i];
  });
  ctx.changed = true;
}

function learnFromPassingRun(ctx: Ctx, b: BatchState, durationMs: number): void {
  const { stats, config } = ctx.s;
  stats.ciDurationMs = ewma(stats.ciDurationMs, 0.1, durationMs);
  const learned = observePassingRun(durationModel(ctx), durationMs, config.heavyCiFactor);
  Object.assign(stats, learned.model);
  // A run already seen heavy while it was running has taught its entries that once.
  if (!b.ciSeenHeavy) learnWeights(ctx, b, learned.heavy);
}

/** A run still pending past the heavy threshold already says that something it holds is heavy. */
function noteLongRuns(ctx: Ctx): void {
  const threshold = heavyThresholdMs(durationModel(ctx), ctx.s.config.heavyCiFactor);
  for (const b of ctx.s.batches) {
    if (b.status !== 'testing' || b.ciStartedAt === null || b.ciSeenHeavy) continue;
    if (ctx.at - b.ciStartedAt <= threshold || outcome(ctx, b) !== 'pending') continue;
    learnWeights(ctx, b, true);
    b.ciSeenHeavy = true;
  }
}

/**
 * A speculative candidate whose CI started while PRs ahead of it were unlanded runs their tests
 * too. Once those PRs have landed, the same candidate rebuilt on the new base would run only the
 * rest: when the learned durations say a fresh run ends sooner than the running one (heavy PRs
 * have landed, the rest are light), the batch is withdrawn and its PRs planned again at once.
 */
function restartRunsOfLandedWork(ctx: Ctx): void {
  const model = durationModel(ctx);
  const { restartMargin } = ctx.s.config;
  for (const b of ctx.s.batches) {
    if (b.role !== 'chain' || b.status !== 'testing' || b.ciStartedAt === null) continue;
    if (outcome(ctx, b) !== 'pending' || b.operation !== null) continue;
    const landed = b.ciContentIds.filter((id) => ctx.entryById.get(id)?.status === 'merged');
    if (landed.length === 0) continue;
    const fresh = b.ciContentIds.filter((id) => !landed.includes(id));
    const running = heavyProbabilities(ctx, b.ciContentIds);
    const remaining = expectedRemainingMs(ctx.at, b.ciStartedAt, running, model);
    if (remaining <= expectedCiMs(heavyProbabilities(ctx, fresh), model) * restartMargin) continue;
    const numbers = landed.map((id) => `#${ctx.entryById.get(id)?.number}`).join(', ');
    ctx.s.stats.restartedBatches += 1;
    withdraw(ctx, b, `restarted on the new base: its CI was still running the tests of ${numbers}, which landed`);
  }
}

function isUnfinishedStartCi(b: BatchState): boolean {
  // A finished operation is cleared at once, so a startCi still recorded is unfinished.
  return b.operation?.kind === 'startCi';
}

/**
 * A startCi outcome that arrives once the batch is past `testing` (its checks already reported) is
 * stale: CI evidently ran. The operation is cleared and the outcome otherwise ignored, so neither
 * `failed` (withdraw) nor `unknown` (ready -> reconciling, not in the table) applies to it.
 */
function isLateStartCi(ctx: Ctx, b: BatchState): boolean {
  if (b.operation?.kind !== 'startCi' || b.status === 'testing') return false;
  b.operation = null;
  ctx.changed = true;
  return true;
}

function onSucceeded(
  ctx: Ctx,
  operationId: string,
  candidateSha: string | undefined,
  facts: ReadBackFacts | undefined,
): void {
  const cleanupIndex = ctx.s.cleanups.findIndex((c) => c.operationId === operationId);
  if (cleanupIndex >= 0) {
    ctx.s.cleanups.splice(cleanupIndex, 1);
    ctx.changed = true;
    return;
  }
  const b = findByOperation(ctx, operationId);
  if (!b || !b.operation) return;
  if (isLateStartCi(ctx, b)) return;
  const kind = b.operation.kind;
  if (kind === 'readBack') {
    if (!facts) return reissueReadBack(ctx, b);
    return resolveReadBack(ctx, b, facts);
  }
  b.operation = null;
  ctx.changed = true;
  switch (kind) {
    case 'prepare':
      if (!candidateSha) return withdraw(ctx, b, 'prepare reported no candidate');
      b.candidateSha = candidateSha;
      return;
    case 'publish':
      b.published = true;
      return;
    case 'startCi':
      return;
    case 'land':
      return landBatch(ctx, b, b.candidateSha);
  }
}

function onFailed(
  ctx: Ctx,
  operationId: string,
  reason: string,
  conflictEntryId: string | undefined,
  baseSha: string | undefined,
): void {
  const cleanup = ctx.s.cleanups.find((c) => c.operationId === operationId);
  if (cleanup) return reissueCleanup(ctx, cleanup.operationId);
  const b = findByOperation(ctx, operationId);
  if (!b || !b.operation) return;
  if (isLateStartCi(ctx, b)) return;
  const kind = b.operation.kind;
  if (kind === 'readBack') return reissueReadBack(ctx, b);
  b.operation = null;
  ctx.changed = true;
  if (baseSha !== undefined) moveBase(ctx, baseSha);
  if (kind === 'prepare' && conflictEntryId !== undefined) {
    const e = ctx.entryById.get(conflictEntryId);
    if (e && e.batchId === b.id && e.status === 'testing') {
      e.batchId = null;
      e.block = `Merge conflict while building candidate ${b.id}: ${reason}`;
      resetEvidence(e);
      setEntryStatus(ctx, e, 'blocked');
    }
  }
  // A rejected land means the base moved under us (the executor compares-and-swaps it).
  withdraw(ctx, b, `${kind} failed: ${reason}`, true);
}

function onUnknown(ctx: Ctx, operationId: string): void {
  const cleanup = ctx.s.cleanups.find((c) => c.operationId === operationId);
  if (cleanup) return reissueCleanup(ctx, cleanup.operationId);
  const b = findByOperation(ctx, operationId);
  if (!b || !b.operation) return;
  if (isLateStartCi(ctx, b)) return;
  if (b.operation.kind === 'readBack') return reissueReadBack(ctx, b);
  b.interruptedKind = b.operation.kind;
  setBatchStatus(ctx, b, 'reconciling');
  reissueReadBack(ctx, b);
}

function reissueCleanup(ctx: Ctx, operationId: string): void {
  const i = ctx.s.cleanups.findIndex((c) => c.operationId === operationId);
  const old = ctx.s.cleanups[i];
  ctx.s.cleanups.splice(i, 1);
  const id = nextId(ctx, 'operation');
  ctx.s.cleanups.push({ operationId: id, batchId: old.batchId, candidateSha: old.candidateSha });
  ctx.ops.push({ id, kind: 'cleanup', batchId: old.batchId, candidateSha: old.candidateSha });
  ctx.changed = true;
}

function reissueReadBack(ctx: Ctx, b: BatchState): void {
  issue(ctx, b, {
    id: nextId(ctx, 'operation'),
    kind: 'readBack',
    batchId: b.id,
    candidateSha: b.candidateSha,
    interrupted: b.interruptedKind ?? 'prepare',
  });
}

/** After a crash the executor's read-back is the truth: resume exactly where the work stopped. */
function resolveReadBack(ctx: Ctx, b: BatchState, facts: ReadBackFacts): void {
  const interrupted: MergeQueueOperationKind = b.interruptedKind ?? 'prepare';
  b.operation = null;
  b.interruptedKind = null;
  ctx.changed = true;
  moveBase(ctx, facts.baseSha);
  switch (interrupted) {
    case 'land':
      if (b.candidateSha !== null && facts.candidateLanded) return landBatch(ctx, b, facts.baseSha);
      // Not landed: a removal or new head that arrived while the land was in flight must not be
      // merged by the next land, so the batch is withdrawn and the deferred change applied.
      if (b.withdrawOnResolve || entriesOf(ctx, b).some((e) => e.pendingRemoval || e.pendingHeadSha !== null)) {
        b.withdrawOnResolve = false;
        return withdraw(ctx, b, 'entry removed or updated while landing', true);
      }
      for (const e of entriesOf(ctx, b)) if (e.status === 'merging') setEntryStatus(ctx, e, 'testing');
      setBatchStatus(ctx, b, 'ready');
      break;
    case 'prepare':
      b.candidateSha = facts.candidateSha;
      setBatchStatus(ctx, b, 'preparing');
      break;
    case 'publish':
      b.published = facts.published;
      setBatchStatus(ctx, b, 'preparing');
      break;
    default:
      if (facts.ciStarted) {
        setBatchStatus(ctx, b, 'testing');
        if (outcome(ctx, b) === 'passed') setBatchStatus(ctx, b, 'ready');
      } else {
        b.checks = [];
        b.ciStartedAt = null;
        setBatchStatus(ctx, b, 'preparing');
      }
  }
  if (b.withdrawOnResolve) {
    b.withdrawOnResolve = false;
    withdraw(ctx, b, 'withdrawn while reconciling');
  }
}

function landBatch(ctx: Ctx, b: BatchState, newBase: string | null): void {
  const { s } = ctx;
  setBatchStatus(ctx, b, 'landed');
  b.operation = null;
  b.withdrawOnResolve = false;
  if (newBase !== null) s.baseSha = newBase;
  for (const e of entriesOf(ctx, b)) {
    e.pendingHeadSha = null;
    e.pendingRemoval = false;
    setEntryStatus(ctx, e, 'merged');
    s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 0);
    Object.assign(s.stats, observeLandedWeight(durationModel(ctx), e.heavyProbability));
  }
  if (b.role === 'chain') s.stats.batchFailureRate = ewma(s.stats.batchFailureRate, 0.1, 0);
  s.stats.landedBatches += 1;
  for (const child of childrenOf(ctx, b)) {
    child.parentId = null;
    child.baseSha = child.baseSha ?? b.candidateSha;
  }
  issueCleanup(ctx, b);
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

/** One consequence at a time, so each step sees the state the previous one left. */
function settleOnce(ctx: Ctx): boolean {
  const { s } = ctx;
  for (const b of s.batches) {
    if (isFinalBatch(b) || isSealed(b)) continue;
    const root = b.parentId === null;
    const stale = root && b.baseSha !== s.baseSha;
    const result = outcome(ctx, b);
    if (stale) {
      if (b.role === 'part' && b.status === 'testing' && result === 'pending') continue;
      if (b.role === 'part' && result === 'failed') {
        blame(ctx, b);
        return true;
      }
      if (b.role === 'part' && result === 'passed') clearAndWithdraw(ctx, b, 'base moved before it could land');
      else withdraw(ctx, b, 'base moved before it could land');
      return true;
    }
    if (result === 'failed') {
      const children = childrenOf(ctx, b);
      for (const child of children) withdraw(ctx, child, `built on failing ${b.id}`);
      if (root) {
        blame(ctx, b);
        return true;
      }
      if (children.length > 0) return true;
    }
    if (result === 'passed' && b.status === 'testing') {
      setBatchStatus(ctx, b, 'ready');
      return true;
    }
    if (result === 'passed' && b.role === 'part' && s.batches.some((c) => c.role === 'chain' && !isFinalBatch(c))) {
      clearAndWithdraw(ctx, b, 'probe passed while the chain was landing');
      return true;
    }
  }
  return false;
}

function clearAndWithdraw(ctx: Ctx, b: BatchState, reason: string): void {
  for (const e of entriesOf(ctx, b)) {
    e.cleared = true;
    e.suspectGroup = null;
    // It passed on the base: its earlier solo failures were spurious.
    e.failuresAlone = 0;
  }
  withdraw(ctx, b, reason);
}

/**
 * A failed candidate built directly on the base: its own PRs are to blame. A single PR is retried
 * alone until the flaky budget is spent, then `failed`; a larger batch becomes a suspect group
 * that the planner bisects into parts.
 */
function blame(ctx: Ctx, b: BatchState): void {
  const { s } = ctx;
  setBatchStatus(ctx, b, 'failed');
  b.operation = null;
  s.stats.failedBatches += 1;
  if (b.role === 'chain') s.stats.batchFailureRate = ewma(s.stats.batchFailureRate, 0.1, 1);
  const entries = entriesOf(ctx, b).filter((e) => e.batchId === b.id && e.status === 'testing');
  if (b.role === 'part') releaseSiblingSuspects(ctx, entries);
  if (entries.length === 1) {
    const e = entries[0];
    e.failuresAlone += 1;
    e.cleared = false;
    e.suspectGroup = null;
    if (e.failuresAlone > s.config.flakyRetries) {
      s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 1);
      releaseEntry(ctx, e, 'failed');
    } else {
      releaseEntry(ctx, e, 'queued');
    }
  } else {
    const group = nextId(ctx, 'group');
    for (const e of entries) {
      e.suspectGroup = group;
      e.cleared = false;
      releaseEntry(ctx, e, 'queued');
    }
  }
  issueCleanup(ctx, b);
}

/**
 * A failing part has located a culprit of its group: the group's PRs not yet probed are no more
 * suspect than any other PR and go back to the chain instead of being probed one by one.
 */
function releaseSiblingSuspects(ctx: Ctx, failing: EntryState[]): void {
  const groups = new Set(failing.map((e) => e.suspectGroup).filter((g): g is string => g !== null));
  if (groups.size === 0) return;
  for (const e of ctx.s.entries) {
    if (e.status === 'queued' && e.suspectGroup !== null && groups.has(e.suspectGroup)) {
      e.suspectGroup = null;
      ctx.changed = true;
    }
  }
}

function land(ctx: Ctx): void {
  const { s } = ctx;
  if (s.batches.some((b) => b.status === 'merging' || b.status === 'reconciling')) return;
  const landable = (b: BatchState) =>
    b.status === 'ready' &&
    b.parentId === null &&
    b.baseSha === s.baseSha &&
    b.candidateSha !== null &&
    outcome(ctx, b) === 'passed';
  const chainLive = s.batches.some((b) => b.role === 'chain' && !isFinalBatch(b));
  const next = chainLive
    ? s.batches.find((b) => b.role === 'chain' && landable(b))
    : s.batches.find((b) => landable(b));
  if (!next || next.candidateSha === null) return;
  setBatchStatus(ctx, next, 'merging');
  for (const e of entriesOf(ctx, next)) setEntryStatus(ctx, e, 'merging');
  issue(ctx, next, {
    id: nextId(ctx, 'operation'),
    kind: 'land',
    batchId: next.id,
    candidateSha: next.candidateSha,
    expectedBaseSha: s.baseSha,
    prNumbers: [...next.prNumbers],
  });
}

function holdsRunner(ctx: Ctx, b: BatchState): boolean {
  if (b.status === 'preparing') return true;
  if (b.status === 'testing') return outcome(ctx, b) === 'pending';
  return b.status === 'reconciling' && b.interruptedKind !== 'land' && outcome(ctx, b) === 'pending';
}

function byPlanningOrder(a: EntryState, b: EntryState): number {
  return b.priority - a.priority || a.position - b.position;
}

interface IsolationUnit {
  entries: EntryState[];
  group: boolean;
}

function planNewBatches(ctx: Ctx): void {
  const { s } = ctx;
  const live = s.batches.filter((b) => !isFinalBatch(b));
  let free = s.config.maxParallel - live.filter((b) => holdsRunner(ctx, b)).length;
  if (free <= 0) return;
  const waiting = s.entries.filter((e) => e.status === 'queued' && !e.setAside).sort(byPlanningOrder);
  if (waiting.length === 0) return;

  const units: IsolationUnit[] = [];
  const groups = new Map<string, IsolationUnit>();
  for (const e of waiting) {
    if (e.suspectGroup !== null) {
      let unit = groups.get(e.suspectGroup);
      if (!unit) {
        unit = { entries: [], group: true };
        groups.set(e.suspectGroup, unit);
        units.push(unit);
      }
      unit.entries.push(e);
    } else if (e.failuresAlone > 0 && !e.cleared) {
      units.push({ entries: [e], group: false });
    }
  }
  const normal = waiting.filter((e) => e.suspectGroup === null && !(e.failuresAlone > 0 && !e.cleared));
  if (units.length > 0) {
    // Probes get the runners they need when nothing else waits, otherwise at most a share of
    // them, so the chain keeps landing while a failed batch is being bisected.
    const probing = live.filter((b) => b.role === 'part' && holdsRunner(ctx, b)).length;
    const cap = Math.max(1, Math.round(s.config.maxParallel * s.config.probeShare));
    const budget = normal.length === 0 ? free : Math.max(0, cap - probing);
    free -= planIsolation(ctx, units, Math.min(free, budget));
  }
  if (live.some((b) => b.role === 'part' && b.status === 'merging')) return;
  const root = live.find((b) => b.role === 'chain' && b.parentId === null && b.baseSha === s.baseSha);
  let tip: BatchState | null = null;
  let chainLength = 0;
  for (let cursor = root ?? null; cursor; ) {
    tip = cursor;
    chainLength += 1;
    // A failed candidate behind one still testing cannot land whoever is to blame: the chain
    // continues on its parent without it, as Zuul's dependent pipeline does.
    const kids = childrenOf(ctx, cursor).filter((c) => outcome(ctx, c) !== 'failed');
    cursor = kids.length > 0 ? kids[0] : null;
  }
  let queue = normal;
  while (free > 0 && queue.length > 0) {
    if (tip && outcome(ctx, tip) === 'failed') break;
    if (!mayExtendChain(chainLength, s.stats.batchFailureRate, s.config)) break;
    let size = nextBatchSize(queue.length, free, s.batchDepth, s.config.minBatch);
    let cleared = 0;
    while (cleared < queue.length && queue[cleared].cleared) cleared += 1;
    size = Math.max(size, Math.min(cleared, s.config.maxBatch));
    const taken = queue.slice(0, size);
    if (tip && !speculationPays(ctx, tip, taken)) break;
    queue = queue.slice(size);
    tip = createBatch(ctx, 'chain', taken, tip);
    chainLength += 1;
    free -= 1;
  }
}

/**
 * Whether stacking `taken` on the chain ending at `tip` is expected to land it sooner than waiting
 * for the chain to land and testing it on the new base. A candidate on the chain runs the tests of
 * every unlanded PR ahead, so behind a heavy PR it is heavy too; then waiting is often sooner
 * (and frees the runner). Estimates come from the learned CI weights (ci-weight.ts).
 */
function speculationPays(ctx: Ctx, tip: BatchState, taken: readonly EntryState[]): boolean {
  const model = durationModel(ctx);
  const chain: BatchState[] = [];
  for (let b: BatchState | undefined = tip; b; b = b.parentId ? ctx.batchById.get(b.parentId) : undefined) {
    chain.unshift(b);
  }
  let chainLand = ctx.at;
  const held: string[] = [];
  for (const b of chain) {
    held.push(...b.entryIds);
    chainLand = Math.max(chainLand, ctx.at + expectedWaitUntilPassed(ctx, b, held, model));
  }
  const own = taken.map((e) => e.heavyProbability);
  const stacked = Math.max(chainLand, ctx.at + expectedCiMs([...heavyProbabilities(ctx, held), ...own], model));
  const waited = chainLand + expectedCiMs(own, model);
  // Stacking keeps a runner busy and can be undone (restartRunsOfLandedWork), so it wins ties.
  return stacked <= waited + ctx.s.config.speculationTolerance * model.lightCiMs;
}

/** Expected time from now until batch `b` (whose candidate holds `held`) has passed. */
function expectedWaitUntilPassed(ctx: Ctx, b: BatchState, held: readonly string[], model: CiDurationModel): number {
  const result = outcome(ctx, b);
  if (result === 'passed' || b.status === 'ready' || b.status === 'merging') return 0;
  if (b.status === 'testing' && b.ciStartedAt !== null && result === 'pending') {
    const running = heavyProbabilities(ctx, b.ciContentIds);
    return expectedRemainingMs(ctx.at, b.ciStartedAt, running, model);
  }
  return expectedCiMs(heavyProbabilities(ctx, held), model);
}

/**
 * Isolation: suspect groups are split into parts tested side by side on the base, using free
 * runners (n-ary bisection); single PRs that failed alone are retried alone. Parts are probes: a
 * passing part clears its PRs, which then ride in the next chain batch; it lands by itself only
 * when no chain batch is live, so probing never invalidates the chain. Returns the parts created.
 */
function planIsolation(ctx: Ctx, units: IsolationUnit[], free: number): number {
  let created = 0;
  const budget: number[] = units.map(() => 0);
  let left = free;
  for (let i = 0; i < units.length && left > 0; i++) {
    budget[i] = 1;
    left -= 1;
  }
  let progress = true;
  while (left > 0 && progress) {
    progress = false;
    for (let i = 0; i < units.length && left > 0; i++) {
      if (units[i].group && budget[i] > 0 && budget[i] < units[i].entries.length) {
        budget[i] += 1;
        left -= 1;
        progress = true;
      }
    }
  }
  units.forEach((unit, i) => {
    const slots = budget[i];
    if (slots === 0) return;
    if (!unit.group || unit.entries.length === 1) {
      createBatch(ctx, 'part', unit.entries, null);
      created += 1;
      return;
    }
    // Always split in at least two, so a part never repeats the failed candidate; with one slot
    // only the first half starts now and the rest waits as a smaller suspect group.
    const parts = Math.max(2, slots);
    const chunks = splitEvenly(unit.entries, Math.min(parts, unit.entries.length));
    for (const chunk of chunks.slice(0, slots)) {
      createBatch(ctx, 'part', chunk, null);
      created += 1;
    }
  });
  return created;
}

function splitEvenly<T>(items: T[], parts: number): T[][] {
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < parts; i++) {
    const size = Math.floor(items.length / parts) + (i < items.length % parts ? 1 : 0);
    out.push(items.slice(start, start + size));
    start += size;
  }
  return out.filter((c) => c.length > 0);
}

/** Moves each live batch one step through prepare -> publish -> startCi. */
function advanceOperations(ctx: Ctx): void {
  const { s } = ctx;
  for (const b of s.batches) {
    if (b.status !== 'preparing' || b.operation !== null) continue;
    if (b.candidateSha === null) {
      if (b.parentId === null) {
        if (b.baseSha !== s.baseSha) continue;
      } else {
        const parent = ctx.batchById.get(b.parentId);
        if (!parent || parent.candidateSha === null) continue;
        b.baseSha = parent.candidateSha;
      }
      if (b.baseSha === null) continue;
      issue(ctx, b, {
        id: nextId(ctx, 'operation'),
        kind: 'prepare',
        batchId: b.id,
        baseSha: b.baseSha,
        heads: entriesOf(ctx, b).map((e) => ({ entryId: e.id, number: e.number, headSha: e.headSha })),
      });
    } else if (!b.published) {
      issue(ctx, b, {
        id: nextId(ctx, 'operation'),
        kind: 'publish',
        batchId: b.id,
        candidateSha: b.candidateSha,
      });
    } else {
      b.checks = s.config.requiredChecks.map((name) => ({ name, state: 'pending' as const }));
      b.ciStartedAt = ctx.at;
      b.ciContentIds = [...unlandedAncestorEntries(ctx, b), ...b.entryIds];
      b.ciSeenHeavy = false;
      setBatchStatus(ctx, b, 'testing');
      issue(ctx, b, {
        id: nextId(ctx, 'operation'),
        kind: 'startCi',
        batchId: b.id,
        candidateSha: b.candidateSha,
        requiredChecks: [...s.config.requiredChecks],
      });
    }
  }
}

/** Entries of the live batches `b` is built on, nearest the base first. */
function unlandedAncestorEntries(ctx: Ctx, b: BatchState): string[] {
  const out: string[][] = [];
  for (let id = b.parentId; id !== null; ) {
    const parent = ctx.batchById.get(id);
    if (!parent || parent.status === 'landed') break;
    out.unshift(parent.entryIds);
    id = parent.parentId;
  }
  return out.flat();
}

/** Drops the oldest final entries and batches beyond `historyLimit`; live ones are never dropped. */
function prune(ctx: Ctx): void {
  const { s } = ctx;
  const limit = s.config.historyLimit;
  const finalEntries = s.entries.filter((e) => !LIVE_ENTRY.includes(e.status)).length;
  if (finalEntries > limit) {
    let drop = finalEntries - limit;
    s.entries = s.entries.filter((e) => {
      if (drop > 0 && !LIVE_ENTRY.includes(e.status)) {
        drop -= 1;
        return false;
      }
      return true;
    });
  }
  const finalBatches = s.batches.filter(isFinalBatch).length;
  if (finalBatches > limit) {
    let drop = finalBatches - limit;
    const referenced = new Set(s.entries.map((e) => e.batchId));
    s.batches = s.batches.filter((b) => {
      if (drop > 0 && isFinalBatch(b) && !referenced.has(b.id)) {
        drop -= 1;
        return false;
      }
      return true;
    });
  }
}
