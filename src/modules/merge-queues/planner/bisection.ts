import { byPlanningOrder } from './priority';
import { childrenOf, type Ctx, createBatch, entriesOf, isFinalBatch, liveAncestors, nextId, outcome } from './step';
import type { BatchState, EntryState } from './types';
import { withdraw } from './withdrawal';

/*
 * Bisection (isolation probes). The PRs of a blamed batch become a suspect group; the group is
 * split into parts (`role: 'part'`) tested side by side on the base (n-ary bisection), and a PR
 * that failed alone is retried alone. A passing part clears its PRs, which then ride in the next
 * chain batch (it lands by itself only when no chain batch is live), so probing never
 * invalidates the chain. What a failure means (blame, the flaky budget) is in blame.ts.
 */

/** PRs waiting to be probed together: a suspect group, or one PR that failed alone. */
export interface IsolationUnit {
  entries: EntryState[];
  group: boolean;
}

/** Splits the waiting entries (in planning order) into isolation units and the rest (`normal`). */
export function isolationUnits(waiting: readonly EntryState[]): { units: IsolationUnit[]; normal: EntryState[] } {
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
  return { units, normal };
}

/**
 * Starts probes on at most `free` runners and returns how many it started. Probes get all free
 * runners when nothing else waits (`normalWaiting === 0`), otherwise at most `probeShare` of the
 * runners counting those `probing` already, so the chain keeps landing while a failed batch is
 * being bisected.
 */
export function planProbes(ctx: Ctx, units: IsolationUnit[], free: number, probing: number, normalWaiting: number): number {
  const { maxParallel, probeShare } = ctx.s.config;
  const cap = Math.max(1, Math.round(maxParallel * probeShare));
  // Under the order rule the chain cannot pass a suspect group, so its probes are what unblocks
  // landing: they may take every free runner. Solo retries (queued at the back) keep the share.
  const held = units.some((u) => u.group);
  const chainWants = Math.ceil(normalWaiting / Math.max(1, ctx.s.batchDepth));
  const shared = Math.max(0, cap - probing);
  const budget = normalWaiting === 0 ? free : held ? Math.max(shared, free - chainWants) : shared;
  return planIsolation(ctx, units, Math.min(free, budget));
}

/**
 * Isolation: suspect groups are split into parts tested side by side on the base, using free
 * runners (n-ary bisection); single PRs that failed alone are retried alone. Every unit gets one
 * runner before any group gets a second. Returns the parts created.
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

/**
 * A part passed but cannot land (the base moved, or the chain is landing): its PRs are cleared
 * and ride in the next chain batch. They passed on the base, so their earlier solo failures were
 * spurious.
 */
export function clearAndWithdraw(ctx: Ctx, b: BatchState, reason: string): void {
  for (const e of entriesOf(ctx, b)) {
    // A solo retry of a PR that failed alone passed: it lost its place when it failed and PRs
    // queued since may be in the chain, so it goes to the back of the line again (order.ts).
    if (e.suspectGroup === null && e.failuresAlone > 0 && !e.cleared) {
      ctx.s.counters.entry += 1;
      e.position = ctx.s.counters.entry;
    }
    e.cleared = true;
    e.suspectGroup = null;
    e.failuresAlone = 0;
  }
  withdraw(ctx, b, reason);
}

/**
 * A failing part has located a culprit of its group: the group's PRs not yet probed are no more
 * suspect than any other PR and go back to the chain instead of being probed one by one.
 */
export function releaseSiblingSuspects(ctx: Ctx, failing: EntryState[]): void {
  const groups = new Set(failing.map((e) => e.suspectGroup).filter((g): g is string => g !== null));
  if (groups.size === 0) return;
  for (const e of ctx.s.entries) {
    if (e.status === 'queued' && e.suspectGroup !== null && groups.has(e.suspectGroup)) {
      e.suspectGroup = null;
      ctx.changed = true;
    }
  }
}

/**
 * Early bisection of a failed chain tip. A chain batch whose candidate failed while a batch it is
 * built on is still unresolved ends the chain (chain.ts): nothing behind it may land first (queue
 * order), so the runners the chain cannot use sat idle until the batch ahead resolved. Instead its
 * PRs become a suspect group at once, split over the free runners (at least two) into parts
 * stacked on its parent: each part's candidate is the parent's candidate plus the part, exactly
 * the probe the bisection would run on the base once the parent lands. If the parent lands, the
 * parts are re-parented onto the new base and are ordinary probes on it (a passing part first in
 * line lands by itself; a failing one is blamed). If the parent fails or is withdrawn, the parts
 * go with it and their PRs lose the suspicion (withdrawal.ts), as the failed batch's PRs would
 * have. Only a batch of plain PRs (not cleared, never failed alone, no deferred change), all
 * queued behind every PR of the batches ahead, is bisected early. Returns the parts created.
 */
export function bisectFailedTip(ctx: Ctx, free: number): number {
  if (free < 2 || ctx.s.config.earlyBisection !== true) return 0;
  for (const t of ctx.s.batches) {
    if (t.role !== 'chain' || t.status !== 'testing' || t.parentId === null || outcome(ctx, t) !== 'failed') continue;
    if (childrenOf(ctx, t).length > 0) continue;
    const parent = ctx.batchById.get(t.parentId);
    if (!parent || isFinalBatch(parent) || parent.role !== 'chain' || parent.withdrawOnResolve || outcome(ctx, parent) === 'failed') continue;
    const entries = entriesOf(ctx, t).filter((e) => e.batchId === t.id && e.status === 'testing');
    if (entries.length < 2 || entries.length !== t.entryIds.length) continue;
    const plain = entries.every(
      (e) => !e.cleared && e.failuresAlone === 0 && e.suspectGroup === null && e.pendingHeadSha === null && !e.pendingRemoval && !e.setAside,
    );
    if (!plain) continue;
    // Its PRs become held: every PR the batches ahead of it carry must come before them in
    // planning order, or those batches would overtake held PRs when they land (order.ts).
    const ahead = liveAncestors(ctx, t).flatMap((a) => entriesOf(ctx, a));
    if (entries.some((e) => ahead.some((a) => byPlanningOrder(e, a) < 0))) continue;
    withdraw(ctx, t, `bisected early: failed while ${parent.id} ahead of it was still testing`);
    const group = nextId(ctx, 'group');
    for (const e of entries) e.suspectGroup = group;
    const chunks = splitEvenly(entries, Math.min(Math.max(free, ctx.s.config.maxParallel), entries.length));
    for (const chunk of chunks) createBatch(ctx, 'part', chunk, parent);
    return chunks.length;
  }
  return 0;
}
