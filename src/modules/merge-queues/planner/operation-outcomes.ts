import { blockConflictingEntry, candidatePrepared } from './candidates';
import { isLateStartCi } from './checks';
import { markLanded } from './landing';
import { enterReconciliation, reissueReadBack, resolveReadBack } from './reconciliation';
import { type Ctx, findByOperation, moveBase } from './step';
import type { ReadBackFacts } from './types';
import { cleanupSucceeded, cleanupUnfinished, withdraw } from './withdrawal';

/*
 * The executor's answers. Each outcome is matched to the batch whose current operation it
 * answers (or to a pending cleanup); anything else is stale and changes nothing. A late startCi
 * outcome is ignored (checks.ts). Then the outcome goes to the rule of its kind: a readBack to
 * reconciliation, a land to landing, prepare/publish/startCi to candidate building.
 */

export function onOperationStarted(ctx: Ctx, operationId: string): void {
  const b = findByOperation(ctx, operationId);
  if (b?.operation && b.operation.outcome === 'pending') {
    b.operation.outcome = 'running';
    ctx.changed = true;
  }
}

export function onOperationSucceeded(ctx: Ctx, operationId: string, candidateSha: string | undefined, facts: ReadBackFacts | undefined): void {
  if (cleanupSucceeded(ctx, operationId)) return;
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
      return candidatePrepared(ctx, b, candidateSha);
    case 'publish':
      b.published = true;
      return;
    case 'startCi':
      return;
    case 'land':
      return markLanded(ctx, b, b.candidateSha);
  }
}

export function onOperationFailed(ctx: Ctx, operationId: string, reason: string, conflictEntryId: string | undefined, baseSha: string | undefined): void {
  if (cleanupUnfinished(ctx, operationId)) return;
  const b = findByOperation(ctx, operationId);
  if (!b || !b.operation) return;
  if (isLateStartCi(ctx, b)) return;
  const kind = b.operation.kind;
  if (kind === 'readBack') return reissueReadBack(ctx, b);
  b.operation = null;
  ctx.changed = true;
  if (baseSha !== undefined) moveBase(ctx, baseSha);
  if (kind === 'prepare' && conflictEntryId !== undefined) blockConflictingEntry(ctx, b, conflictEntryId, reason);
  // A rejected land means the base moved under us (the executor compares-and-swaps it). The land
  // did not happen, so a removal or head update deferred during it applies now.
  withdraw(ctx, b, `${kind} failed: ${reason}`, true);
}

export function onOperationUnknown(ctx: Ctx, operationId: string): void {
  if (cleanupUnfinished(ctx, operationId)) return;
  const b = findByOperation(ctx, operationId);
  if (!b || !b.operation) return;
  if (isLateStartCi(ctx, b)) return;
  if (b.operation.kind === 'readBack') return reissueReadBack(ctx, b);
  enterReconciliation(ctx, b, b.operation.kind);
}
