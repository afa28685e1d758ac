import { applyEarlyChecks } from './checks';
import { markLanded } from './landing';
import { type Ctx, entriesOf, issue, moveBase, nextId, outcome, setBatchStatus, setEntryStatus } from './step';
import type { BatchState, EntryState, MergeQueueOperationKind, ReadBackFacts } from './types';
import { withdraw } from './withdrawal';

/*
 * Reconciliation: after an operation ended `unknown`, the batch is `reconciling` and a `readBack`
 * asks for the truth. Until every reconciling batch is resolved the reducer plans nothing else
 * (see reducer.ts). The readBack's facts decide where the batch resumes; work withdrawn meanwhile
 * (`withdrawOnResolve`) is withdrawn once they are known.
 */

/** An operation of `b` ended unknown: the batch stops where it is and asks for a readBack. */
export function enterReconciliation(ctx: Ctx, b: BatchState, interrupted: MergeQueueOperationKind): void {
  b.interruptedKind = interrupted;
  setBatchStatus(ctx, b, 'reconciling');
  reissueReadBack(ctx, b);
}

/** Asks (again) for the facts about `b`; a readBack that failed or ended unknown is repeated. */
export function reissueReadBack(ctx: Ctx, b: BatchState): void {
  issue(ctx, b, {
    id: nextId(ctx, 'operation'),
    kind: 'readBack',
    batchId: b.id,
    candidateSha: b.candidateSha,
    interrupted: b.interruptedKind ?? 'prepare',
  });
}

/** A removal or head update deferred during the land, or a set-aside: the batch may not land as it is. */
function changedWhileLanding(e: EntryState): boolean {
  return e.pendingRemoval || e.pendingHeadSha !== null || e.setAside;
}

/** After a crash the executor's read-back is the truth: resume exactly where the work stopped. */
export function resolveReadBack(ctx: Ctx, b: BatchState, facts: ReadBackFacts): void {
  const interrupted: MergeQueueOperationKind = b.interruptedKind ?? 'prepare';
  b.operation = null;
  b.interruptedKind = null;
  ctx.changed = true;
  moveBase(ctx, facts.baseSha);
  switch (interrupted) {
    case 'land':
      if (b.candidateSha !== null && facts.candidateLanded) return markLanded(ctx, b, facts.baseSha);
      // Not landed: a removal, new head or set-aside that arrived while the land was in flight
      // must not be merged by the next land, so the batch is withdrawn and the change applied.
      if (b.withdrawOnResolve || entriesOf(ctx, b).some(changedWhileLanding)) {
        b.withdrawOnResolve = false;
        return withdraw(ctx, b, 'entry removed, updated or set aside while landing', true);
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
        applyEarlyChecks(ctx, b);
        if (b.status === 'testing' && outcome(ctx, b) === 'passed') setBatchStatus(ctx, b, 'ready');
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
