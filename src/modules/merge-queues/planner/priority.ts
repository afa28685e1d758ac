import { type Ctx, entriesOf, isFinalBatch, liveBatches } from './step';
import type { EntryState } from './types';
import { withdraw } from './withdrawal';

/*
 * Priority and the urgent rule. Planning order is priority descending, then arrival order. An
 * urgent entry (priority >= `urgentPriority`) jumps the queue by withdrawing the batches that
 * are still being tested without an urgent entry.
 */

/** Planning order: priority descending, then arrival order. */
export function byPlanningOrder(a: EntryState, b: EntryState): number {
  return b.priority - a.priority || a.position - b.position;
}

/**
 * Urgent rule: a queued entry at or above `urgentPriority` withdraws every batch that is still
 * preparing or testing and holds no urgent entry, so the urgent PR is tested next on the base.
 * Batches that are ready, merging or reconciling are kept: they are about to land anyway.
 * The rule applies only while the queue plans (idle or active): a paused, migrating or disabled
 * queue lets the CI runs that already exist finish, and resume applies the rule to every urgent
 * entry still queued.
 */
export function applyUrgentRule(ctx: Ctx, e: EntryState): void {
  if (ctx.s.status !== 'idle' && ctx.s.status !== 'active') return;
  const urgent = ctx.s.config.urgentPriority;
  if (e.priority < urgent || e.status !== 'queued' || e.setAside) return;
  for (const b of liveBatches(ctx)) {
    if (isFinalBatch(b) || (b.status !== 'preparing' && b.status !== 'testing')) continue;
    const holdsUrgent = entriesOf(ctx, b).some((x) => x.priority >= urgent);
    if (!holdsUrgent) withdraw(ctx, b, `urgent #${e.number} jumps the queue`);
  }
}

/** On resume and after a migration: the urgent rule for every urgent entry still queued. */
export function applyUrgentRuleToAll(ctx: Ctx): void {
  for (const e of ctx.s.entries) applyUrgentRule(ctx, e);
}
