import { learnFromPassingRun, noteLongRuns } from './ci-weight';
import { type Ctx, isFinalBatch, outcome, setBatchStatus } from './step';
import type { BatchState, MergeQueueCheckState } from './types';

/*
 * Check results: recording what CI reports on a candidate, and the timeout that fails a check
 * that never reports. A check report also proves that its candidate's CI started, which settles
 * an outstanding startCi. What a failed candidate means is decided in blame.ts.
 */

/** Records one check report on the batch's current candidate; a passing candidate becomes ready. */
export function recordCheck(
  ctx: Ctx,
  batchId: string,
  candidateSha: string,
  name: string,
  state: MergeQueueCheckState,
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

/**
 * The heartbeat: runs still pending past the heavy threshold teach the CI weights, and a required
 * check still pending `checkTimeoutMs` after CI started counts as failed.
 */
export function onTick(ctx: Ctx): void {
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

function isUnfinishedStartCi(b: BatchState): boolean {
  // A finished operation is cleared at once, so a startCi still recorded is unfinished.
  return b.operation?.kind === 'startCi';
}

/**
 * A startCi outcome that arrives once the batch is past `testing` (its checks already reported) is
 * stale: CI evidently ran. The operation is cleared and the outcome otherwise ignored, so neither
 * `failed` (withdraw) nor `unknown` (ready -> reconciling, not in the table) applies to it.
 */
export function isLateStartCi(ctx: Ctx, b: BatchState): boolean {
  if (b.operation?.kind !== 'startCi' || b.status === 'testing') return false;
  b.operation = null;
  ctx.changed = true;
  return true;
}
