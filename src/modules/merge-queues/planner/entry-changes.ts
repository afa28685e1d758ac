import { applyUrgentRule } from './priority';
import { type Ctx, isSealed, LIVE_ENTRY, setEntryStatus } from './step';
import type { BatchState, EnqueueInput, EntryState } from './types';
import { applyRemoval, resetEvidence, withdraw } from './withdrawal';

/*
 * Changes to one entry: admission, a new head, removal, set-aside and priority. A change that
 * invalidates a batch withdraws it (and what is built on it). While the batch's land is in flight
 * (`merging`) a removal or new head is deferred: it applies if the land does not happen, and is
 * dropped if it does (the PR is merged). While the batch is `reconciling` it is withdrawn once
 * the readBack has answered (withdraw() defers it).
 */

export function onEnqueue(ctx: Ctx, input: EnqueueInput): void {
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

export function onHeadUpdated(ctx: Ctx, entryId: string, headSha: string, stopLand = false): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status)) return;
  if (e.headSha === headSha && e.pendingHeadSha === null && e.status !== 'blocked') return;
  const b = e.batchId ? ctx.batchById.get(e.batchId) : undefined;
  if (b && stopLand && stopUnstartedLand(ctx, b, `new commits were pushed to #${e.number}`)) {
    e.headSha = headSha;
    e.block = null;
    resetEvidence(e);
    setEntryStatus(ctx, e, 'queued');
    return;
  }
  if (b && isSealed(b)) {
    e.pendingHeadSha = headSha;
    ctx.changed = true;
    if (b.status === 'reconciling') withdraw(ctx, b, `new head for #${e.number}`);
    return;
  }
  if (b) withdraw(ctx, b, `new head for #${e.number}`);
  // A screen holding the old head tells nothing about the new one.
  const screen = e.screenId ? ctx.batchById.get(e.screenId) : undefined;
  if (screen) withdraw(ctx, screen, `new head for #${e.number}`);
  e.screenId = null;
  e.headSha = headSha;
  e.block = null;
  resetEvidence(e);
  setEntryStatus(ctx, e, 'queued');
  ctx.changed = true;
}

/**
 * A removal with a reason (`removal`) leaves the entry `block`ed with it and, when given, the
 * pushed head as its head (kept in `removal` while a land in flight defers it). `stopLand`: see
 * stopUnstartedLand.
 */
export function onRemove(ctx: Ctx, entryId: string, removal?: { reason: string; headSha?: string }, stopLand = false): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status)) return;
  const b = e.batchId ? ctx.batchById.get(e.batchId) : undefined;
  if (b && stopLand) stopUnstartedLand(ctx, b, `#${e.number} removed`);
  if (b && isSealed(b)) {
    if (!e.pendingRemoval) {
      e.pendingRemoval = true;
      ctx.changed = true;
    }
    if (removal !== undefined && JSON.stringify(e.removal) !== JSON.stringify(removal)) {
      e.removal = { ...removal };
      ctx.changed = true;
    }
    if (b.status === 'reconciling') withdraw(ctx, b, `#${e.number} removed`);
    return;
  }
  if (b) withdraw(ctx, b, `#${e.number} removed`);
  e.batchId = null;
  e.screenId = null;
  if (removal !== undefined) applyRemoval(e, removal);
  setEntryStatus(ctx, e, 'removed');
}

/**
 * A push to a PR whose batch is `merging` with its `land` not yet started (still `pending`: no
 * executor has claimed it, which happens under the same queue lock): the batch is withdrawn now,
 * and the executor's claim finds the land superseded, so the pushed-over head does not land. A
 * land already started is the provider's to finish (fencing, docs/merge-queue.md): the change is
 * deferred as usual. Returns true when the batch was withdrawn.
 */
function stopUnstartedLand(ctx: Ctx, b: BatchState, reason: string): boolean {
  if (b.status !== 'merging' || b.operation?.kind !== 'land' || b.operation.outcome !== 'pending') return false;
  withdraw(ctx, b, reason, true);
  return true;
}

/**
 * The entry stays queued and is skipped by planning; a batch holding it that is not yet landing is
 * withdrawn. Like a removal or a new head: while the batch's land is in flight the land may
 * finish (the PR is merged), and if it does not happen the batch is withdrawn (the flag itself
 * is the deferred change, see resolveReadBack); a batch reconciling is withdrawn once the
 * readBack has answered.
 */
export function onSetAside(ctx: Ctx, entryId: string, setAside: boolean): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status) || e.setAside === setAside) return;
  e.setAside = setAside;
  ctx.changed = true;
  const b = e.batchId ? ctx.batchById.get(e.batchId) : undefined;
  if (!setAside || !b || b.status === 'merging') return;
  withdraw(ctx, b, `#${e.number} set aside`);
}

/** A live entry's PR has a new title: only the title changes (nothing is planned on it). */
export function onTitleChanged(ctx: Ctx, entryId: string, title: string): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status) || e.title === title) return;
  e.title = title;
  ctx.changed = true;
}

export function onSetPriority(ctx: Ctx, entryId: string, priority: number): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status) || e.priority === priority) return;
  e.priority = priority;
  ctx.changed = true;
  applyUrgentRule(ctx, e);
}
