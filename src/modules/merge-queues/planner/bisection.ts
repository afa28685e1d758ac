import { isNamedSuspect } from './named-suspects';
import { type Ctx, createBatch, entriesOf } from './step';
import type { BatchState, EntryState, MergeQueueState } from './types';
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

/**
 * Splits the waiting entries (in planning order) into isolation units and the rest (`normal`).
 * Under the posterior rule (posterior.ts) the named suspects of a group are tested alone first:
 * each is a unit of its own, ahead of every group, so they take the first runners; the rest of
 * their group is bisected as before, on the runners left.
 */
export function isolationUnits(waiting: readonly EntryState[], s?: MergeQueueState): { units: IsolationUnit[]; normal: EntryState[] } {
  const named: IsolationUnit[] = [];
  const units: IsolationUnit[] = [];
  const groups = new Map<string, IsolationUnit>();
  for (const e of waiting) {
    if (s && isNamedSuspect(s, e)) {
      named.push({ entries: [e], group: false });
    } else if (e.suspectGroup !== null) {
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
  units.unshift(...named);
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
      delete e.suspectedFor;
      delete e.badProbability;
      ctx.changed = true;
    }
  }
}
