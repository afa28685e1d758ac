import { checkedConfig } from './config';
import { clearHold } from './holds';
import { applyUrgentRuleToAll } from './priority';
import { type Ctx, liveBatches, moveBase, setQueueStatus } from './step';
import type { QueueSettings } from './types';
import { withdraw } from './withdrawal';

/*
 * The queue's own status (see the queue table in docs/merge-queue.md): pause and resume,
 * disable and enable, migration, and outside pushes to the base. Planning happens only while the
 * queue is idle or active (reducer.ts); a queue on hold still records CI results and entry changes.
 */

/**
 * Pauses a planning queue. During a move (`migrating`, which already holds planning and landing)
 * the pause is remembered: the status stays `migrating` and the queue is `paused` when the move
 * completes (onMigrated).
 */
export function onPause(ctx: Ctx): void {
  if (ctx.s.status === 'idle' || ctx.s.status === 'active') setQueueStatus(ctx, 'paused');
  else if (ctx.s.status === 'migrating' && !ctx.s.pausedBeforeMigration) {
    ctx.s.pausedBeforeMigration = true;
    ctx.changed = true;
  }
}

/**
 * Resumes a paused queue; during a move it takes back a pause sent before or during the move. A
 * hold (holds.ts) is cleared: whoever resumes says the reason is dealt with.
 */
export function onResume(ctx: Ctx): void {
  clearHold(ctx);
  if (ctx.s.status === 'migrating' && ctx.s.pausedBeforeMigration) {
    delete ctx.s.pausedBeforeMigration;
    ctx.changed = true;
    return;
  }
  if (ctx.s.status !== 'paused') return;
  setQueueStatus(ctx, 'active');
  applyUrgentRuleToAll(ctx);
}

/** Withdraws every batch in flight; a land already in flight finishes first (withdraw() defers it). */
export function onDisable(ctx: Ctx): void {
  if (ctx.s.status === 'disabled') return;
  delete ctx.s.pausedBeforeMigration;
  setQueueStatus(ctx, 'disabled');
  for (const b of liveBatches(ctx)) withdraw(ctx, b, 'queue disabled');
}

export function onEnable(ctx: Ctx): void {
  if (ctx.s.status !== 'disabled') return;
  clearHold(ctx);
  setQueueStatus(ctx, 'active');
}

/**
 * New settings (already checked with checkedConfig). Bounds and timeouts apply to what is
 * planned next. A different set of required checks changes what "tested" means, so every batch
 * not already landing is withdrawn and its PRs are planned again (a land in flight finishes:
 * it was tested against the checks that were required when it was issued).
 */
export function onConfigure(ctx: Ctx, settings: QueueSettings): void {
  let next: typeof ctx.s.config;
  try {
    next = checkedConfig({ ...ctx.s.config, ...settings });
  } catch {
    return; // the API checks settings first; an impossible one changes nothing here
  }
  const same = (Object.keys(settings) as (keyof QueueSettings)[]).every((k) => JSON.stringify(ctx.s.config[k]) === JSON.stringify(next[k]));
  if (same) return;
  const checksChanged = JSON.stringify([...ctx.s.config.requiredChecks].sort()) !== JSON.stringify([...next.requiredChecks].sort());
  ctx.s.config = { ...next, requiredChecks: [...next.requiredChecks] };
  ctx.changed = true;
  if (checksChanged) for (const b of liveBatches(ctx)) withdraw(ctx, b, 'the required checks changed');
}

export function onMigrate(ctx: Ctx): void {
  if (ctx.s.status === 'idle' || ctx.s.status === 'active' || ctx.s.status === 'paused') {
    if (ctx.s.status === 'paused') ctx.s.pausedBeforeMigration = true;
    setQueueStatus(ctx, 'migrating');
  }
}

/** The move is done: batches built on the old base go stale (blame.ts) and are planned again. */
export function onMigrated(ctx: Ctx, baseSha: string): void {
  if (ctx.s.status !== 'migrating') return;
  // A queue paused before or during the move (and not resumed since) is paused on the new base.
  setQueueStatus(ctx, ctx.s.pausedBeforeMigration ? 'paused' : 'active');
  delete ctx.s.pausedBeforeMigration;
  moveBase(ctx, baseSha);
  applyUrgentRuleToAll(ctx);
}
