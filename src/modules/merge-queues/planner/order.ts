import { byPlanningOrder } from './priority';
import type { BatchState, EntryState, MergeQueueState } from './types';

/*
 * Queue order (docs/merge-queue.md, "Order"). Git merges are not commutative: a PR that merges
 * cleanly in queue order may conflict, or arrive twice, when a PR queued behind it lands first.
 * So the queue never lets a PR overtake one queued ahead of it that is still on its way:
 *
 * - PRs of a bisected batch (a suspect group, and the PRs its probes cleared) keep their place.
 *   The chain takes no PR queued behind a suspect that is still being probed, a chain batch that
 *   would land PRs queued behind a held PR is withdrawn, and no batch lands before them.
 * - A probe lands by itself only when no live PR is queued ahead of its first PR.
 * - A PR that failed alone has lost its place: it goes to the back of the line (like a PR that is
 *   re-queued), and goes there again when its solo retry passes. Its retry is not a barrier.
 *
 * The functions read plain state so that the invariant checker (invariants.ts) uses the same rule.
 */

/** A PR that a bisection holds in its place: a suspect still being located, or one its probe cleared. */
export function isHeld(e: EntryState): boolean {
  return !e.setAside && (e.status === 'queued' || e.status === 'testing') && (e.suspectGroup !== null || e.cleared);
}

/** The unlanded batches `b` is built on, nearest the base first (state form of step.liveAncestors). */
function ancestorsIn(s: MergeQueueState, b: BatchState): BatchState[] {
  const out: BatchState[] = [];
  for (let id = b.parentId; id !== null;) {
    const parent = s.batches.find((x) => x.id === id);
    if (!parent || parent.status === 'landed') break;
    out.unshift(parent);
    id = parent.parentId;
  }
  return out;
}

/** The PR of `entries` that comes first (`edge` -1) or last (`edge` 1) in planning order. */
function edgeInOrder(entries: readonly EntryState[], edge: 1 | -1): EntryState | undefined {
  let pick: EntryState | undefined;
  for (const e of entries) if (!pick || edge * byPlanningOrder(e, pick) > 0) pick = e;
  return pick;
}

/**
 * The PR of `b` against which order is judged. A chain batch must not pass a held PR queued
 * ahead of any of its PRs (it can be withdrawn and re-formed in order). A probe is judged by its
 * first PR: its PRs were one suspect group, and a priority change can interleave another PR among
 * them; judging it by its last PR could leave two probes each waiting for the other.
 */
function judgedBy(s: MergeQueueState, b: BatchState): EntryState | undefined {
  return edgeInOrder(
    s.entries.filter((e) => b.entryIds.includes(e.id)),
    b.role === 'part' ? -1 : 1,
  );
}

/**
 * The held PRs that batch `b` would overtake if it landed now: held, queued ahead of its judged
 * PR (above) in planning order, and carried neither by `b` nor by a batch it is built on.
 */
export function heldOvertakenBy(s: MergeQueueState, b: BatchState): EntryState[] {
  const carried = new Set([...ancestorsIn(s, b).flatMap((a) => a.entryIds), ...b.entryIds]);
  const judged = judgedBy(s, b);
  if (!judged) return [];
  const proven = new Set(b.provenOver ?? []);
  return s.entries.filter((e) => !carried.has(e.id) && !proven.has(e.id) && isHeld(e) && byPlanningOrder(e, judged) < 0);
}

/**
 * EXPERIMENT: the merge-tree check, injected by the simulator: whether every PR of `held` still
 * merges cleanly onto the base plus `onTop` (PR numbers, in merge order).
 */
export const overtakeCheck: { fn: ((held: readonly number[], onTop: readonly number[]) => boolean) | null; deferHeavy: number; deferMs: number } = {
  fn: null,
  deferHeavy: 0,
  deferMs: 0,
};

/**
 * The live PRs a probe landing by itself would overtake: any PR queued (not set aside) or in
 * another batch, ahead of its first PR in planning order.
 */
export function waitingOvertakenBy(s: MergeQueueState, b: BatchState): EntryState[] {
  const judged = judgedBy(s, b);
  if (!judged) return [];
  return s.entries.filter(
    (e) => !b.entryIds.includes(e.id) && ((e.status === 'queued' && !e.setAside) || e.status === 'testing') && byPlanningOrder(e, judged) < 0,
  );
}

/** Whether landing `b` now keeps queue order (the rule above). */
export function landKeepsOrder(s: MergeQueueState, b: BatchState): boolean {
  if (heldOvertakenBy(s, b).length > 0) return false;
  return b.role !== 'part' || waitingOvertakenBy(s, b).length === 0;
}

/**
 * The first PR in planning order that the chain may not pass: a suspect of a bisected batch that
 * is still waiting for, or in, a probe. Null when nothing is being bisected.
 */
export function chainBarrier(entries: readonly EntryState[]): EntryState | null {
  let first: EntryState | null = null;
  for (const e of entries) {
    if (e.suspectGroup === null || e.setAside || (e.status !== 'queued' && e.status !== 'testing')) continue;
    if (!first || byPlanningOrder(e, first) < 0) first = e;
  }
  return first;
}

/** The waiting PRs the chain may take now: those queued ahead of the barrier. */
export function aheadOfBarrier(waiting: readonly EntryState[], barrier: EntryState | null): EntryState[] {
  return barrier ? waiting.filter((e) => byPlanningOrder(e, barrier) < 0) : [...waiting];
}
