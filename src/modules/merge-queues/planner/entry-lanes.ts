import { MAX_PATH_GROUPS } from './lanes';
import type { LanesVerdict } from './path-matcher';
import { type Ctx, LIVE_ENTRY } from './step';
import type { EntryState, MergeQueueState } from './types';

/*
 * An entry's lanes in the planner state (`EntryState.lanes`, issue 40 part 5): the path groups the
 * changed paths of the head it is to be tested with fall in, the default source of the targets a
 * failing test names it by. The engine matches the paths outside the queue's lock
 * (changed-paths/) and hands the answer to the planner as an `entryLanes` event; the planner keeps
 * it only while it describes that head under the queue's current path groups. Pure.
 */

/**
 * The head whose lanes an entry carries: the head waiting for a land in flight to end (its
 * `pendingHeadSha`, which becomes its head if the land does not happen), else its head. The same
 * head the engine asks the changed paths of (engine/store/entry-sql.ts WANTED_HEAD_SQL).
 */
export function lanesHeadOf(e: Pick<EntryState, 'headSha' | 'pendingHeadSha'>): string {
  return e.pendingHeadSha ?? e.headSha;
}

/**
 * What the planner may take of a matched verdict: the lanes when the paths were known (matched,
 * or a path in no group: every lane, a fact about the PR); null (not known) when the PR is in
 * every lane for want of knowing better: the provider could not list its paths in full, a path
 * over the matcher's limits, or matching past its deadline.
 */
export function knownLanes(verdict: LanesVerdict): string[] | null {
  if (verdict.reason === null || verdict.reason.kind === 'outside') return [...verdict.lanes];
  return null;
}

/**
 * `entryLanes`: a live entry takes `lanes` when `headSha` is the head it is to be tested with and
 * every lane is one of the queue's current path groups (at most MAX_PATH_GROUPS, kept in the
 * groups' order, once each). Anything else is a stale answer (an older head, other groups, no
 * groups) and changes nothing.
 */
export function onEntryLanes(ctx: Ctx, entryId: string, headSha: string, lanes: readonly string[]): void {
  const e = ctx.entryById.get(entryId);
  if (!e || !LIVE_ENTRY.includes(e.status) || lanesHeadOf(e) !== headSha) return;
  const names = (ctx.s.config.pathGroups ?? []).map((g) => g.name);
  if (names.length === 0 || !lanes.every((lane) => names.includes(lane))) return;
  const next = names.filter((name) => lanes.includes(name)).slice(0, MAX_PATH_GROUPS);
  if (e.lanes !== undefined && e.lanes.length === next.length && e.lanes.every((lane, i) => lane === next[i])) return;
  e.lanes = next;
  ctx.changed = true;
}

/**
 * After an event: lanes that no longer describe their entry are dropped (not known again until
 * the engine answers for the new head): those of an entry whose head to be tested with changed
 * (a push, a deferred head or removal that applied, a pending head dropped by a land), and every
 * entry's when the path groups changed. Entries in `after` are the event's own copies.
 */
export function dropStaleLanes(before: MergeQueueState, after: MergeQueueState): void {
  if (!after.entries.some((e) => e.lanes !== undefined)) return;
  if (JSON.stringify(before.config.pathGroups ?? []) !== JSON.stringify(after.config.pathGroups ?? [])) {
    for (const e of after.entries) delete e.lanes;
    return;
  }
  const heads = new Map(before.entries.map((e) => [e.id, lanesHeadOf(e)]));
  for (const e of after.entries) if (e.lanes !== undefined && heads.get(e.id) !== lanesHeadOf(e)) delete e.lanes;
}
