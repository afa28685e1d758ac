import { applyUrgentRuleToAll } from './priority';
import { type Ctx, liveBatches, moveBase, setQueueStatus } from './step';
import { withdraw } from './withdrawal';

/*
 * The queue's own status (see the queue table in docs/merge-queue.md): pause and resume,
 * disable and enable, migration, and outside pushes to the base. Planning happens only while the
 * queue is idle or active (reducer.ts); a queue on hold still records CI results and entry changes.
 */

export function onPause(ctx: Ctx): void {
  if (ctx.s.status === 'idle' || ctx.s.status === 'active') setQueueStatus(ctx, 'paused');
}

export function onResume(ctx: Ctx): void {
  if (ctx.s.status !== 'paused') return;
  setQueueStatus(ctx, 'active');
  applyUrgentRuleToAll(ctx);
}

/** Withdraws every batch in flight; a land already in flight finishes first (withdraw() defers it). */
export function onDisable(ctx: Ctx): void {
  if (ctx.s.status === 'disabled') return;
  setQueueStatus(ctx, 'disabled');
  for (const b of liveBatches(ctx)) withdraw(ctx, b, 'queue disabled');
}

export function onEnable(ctx: Ctx): void {
  if (ctx.s.status === 'disabled') setQueueStatus(ctx, 'active');
}

export function onMigrate(ctx: Ctx): void {
  if (ctx.s.status === 'idle' || ctx.s.status === 'active' || ctx.s.status === 'paused') {
    setQueueStatus(ctx, 'migrating');
  }
}

/** The move is done: batches built on the old base go stale (blame.ts) and are planned again. */
export function onMigrated(ctx: Ctx, baseSha: string): void {
  if (ctx.s.status !== 'migrating') return;
  setQueueStatus(ctx, 'active');
  moveBase(ctx, baseSha);
  applyUrgentRuleToAll(ctx);
}
