import { type Ctx, entriesOf, findByOperation, setBatchStatus, setEntryStatus, setQueueStatus } from './step';
import type { EntryState, QueueHold } from './types';
import { withdraw } from './withdrawal';

/*
 * Holds: the queue stops by itself, visibly, instead of looping. A land the provider refused for
 * a reason that will not go away (a protected branch, a missing permission, a deleted base ref)
 * and a queue the worker quarantined after too many failures in a row both leave the queue
 * `paused` with the reason in its state (`hold`), in the event trail (the event's `reason`) and
 * on the affected entries' `block`. Nothing is retried until someone resumes the queue (or
 * disables and enables it): then the hold and the blocks it set are cleared and planning goes on
 * (a refused batch is still `ready`: its land is issued again, once).
 */

/** The `block` text an entry carries while a hold names it. */
export function holdBlock(hold: Pick<QueueHold, 'kind' | 'reason'>): string {
  return hold.kind === 'landRefused' ? `Landing refused by the provider: ${hold.reason}` : `Queue quarantined: ${hold.reason}`;
}

/**
 * The provider refused the land of a batch for good: the land did not happen. The batch goes
 * back to `ready` (its candidate passed and is still good; a CI round would be wasted) unless a
 * change deferred during the land means it may not land as it is, in which case it is withdrawn
 * and the change applied. The queue is held.
 */
export function onLandRefused(ctx: Ctx, operationId: string, reason: string): void {
  const b = findByOperation(ctx, operationId);
  if (!b || b.operation?.kind !== 'land') return;
  b.operation = null;
  ctx.changed = true;
  const entries = entriesOf(ctx, b);
  if (b.withdrawOnResolve || entries.some((e) => e.pendingRemoval || e.pendingHeadSha !== null || e.setAside)) {
    b.withdrawOnResolve = false;
    withdraw(ctx, b, `land refused: ${reason}`, true);
  } else {
    for (const e of entries) if (e.status === 'merging') setEntryStatus(ctx, e, 'testing');
    setBatchStatus(ctx, b, 'ready');
  }
  placeHold(
    ctx,
    'landRefused',
    reason,
    entries.filter((e) => e.status === 'testing' || e.status === 'queued'),
  );
}

/** The worker quarantined the queue; the entries of the operation that kept failing carry the reason. */
export function onQuarantined(ctx: Ctx, reason: string, operationId: string | undefined): void {
  const b = operationId === undefined ? undefined : findByOperation(ctx, operationId);
  placeHold(ctx, 'quarantined', reason, b ? entriesOf(ctx, b) : []);
}

/**
 * Holds the queue: `paused` (a move in progress ends paused; a disabled queue stays disabled) with
 * the reason. A second hold replaces the first (its blocks are cleared first).
 */
function placeHold(ctx: Ctx, kind: QueueHold['kind'], reason: string, entries: EntryState[]): void {
  clearHold(ctx);
  const { s } = ctx;
  if (s.status === 'idle' || s.status === 'active') setQueueStatus(ctx, 'paused');
  else if (s.status === 'migrating') s.pausedBeforeMigration = true;
  const hold: QueueHold = { kind, reason, since: ctx.at, entryIds: entries.map((e) => e.id) };
  for (const e of entries) if (e.status !== 'blocked') e.block = holdBlock(hold);
  s.hold = hold;
  ctx.changed = true;
}

/** Clears the hold, and the blocks it set that are still its own (an entry blocked since keeps its reason). */
export function clearHold(ctx: Ctx): void {
  const hold = ctx.s.hold;
  if (!hold) return;
  const text = holdBlock(hold);
  for (const id of hold.entryIds) {
    const e = ctx.entryById.get(id);
    if (e && e.block === text && e.status !== 'blocked') e.block = null;
  }
  delete ctx.s.hold;
  ctx.changed = true;
}
