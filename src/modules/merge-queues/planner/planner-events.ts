import { ewma } from './batch-depth';
import { observeLandedWeight } from './ci-weight';
import type {
  BatchState,
  EnqueueInput,
  EntryState,
  MergeQueueEvent,
  MergeQueueOperationKind,
  ReadBackFacts,
} from './merge-queue.types';
import { durationModel, learnFromPassingRun, noteLongRuns } from './planner-ci-weight';
import {
  childrenOf,
  type Ctx,
  entriesOf,
  findByOperation,
  isFinalBatch,
  isSealed,
  issue,
  issueCleanup,
  LIVE_ENTRY,
  liveBatches,
  nextId,
  outcome,
  resetEvidence,
  setBatchStatus,
  setEntryStatus,
  setQueueStatus,
  withdraw,
} from './planner-context';

// ---------------------------------------------------------------------------------------------
// Events: record the facts. Consequences that need planning happen in maintain().

export function applyEvent(ctx: Ctx, ev: MergeQueueEvent): void {
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
