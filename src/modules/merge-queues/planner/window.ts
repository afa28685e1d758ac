import { byPlanningOrder } from './priority';
import { type EntryState, FINAL_ENTRY_STATUSES, type MergeQueueEventType, type MergeQueueState, type PlannerConfig } from './types';

/*
 * The planner's window (docs/merge-queue.md, "What an event loads"). Most of a long queue is a
 * line of waiting PRs that no rule looks at one by one: planning takes at most `maxParallel`
 * batches of at most `maxBatch` PRs from the head of the line, and every other rule reads the
 * entries of live batches, the entries with bisection or hold facts, or the entries an event
 * names. So an event may be reduced over a window of the state: every entry that is not a plain
 * waiting one, and the first `windowSize` plain waiting ones in planning order (priority
 * descending, then arrival). The entries left out are untouched by the event, and the reducer's
 * result on the window equals its result on the whole state, as long as `windowHolds` says so
 * before each event (then the head of the line that planning may take is the same in both).
 * `reducer.property.spec.ts` runs random sequences both ways and compares them.
 */

/**
 * A waiting entry with no fact of its own beyond its place in line: queued, in no batch, not
 * blocked, not a suspect or cleared by a bisection, never failed alone, no deferred change. The
 * store keeps this as the entry row's `plannerPlain`, and the window leaves out all but the
 * first ones of these.
 */
export function isPlainWaiting(e: EntryState): boolean {
  return (
    e.status === 'queued' &&
    e.batchId === null &&
    e.block === null &&
    e.suspectGroup === null &&
    !e.cleared &&
    e.failuresAlone === 0 &&
    e.pendingHeadSha === null &&
    !e.pendingRemoval &&
    !e.screened &&
    !e.screenGroup &&
    !e.screenId &&
    !e.screenBlocked
  );
}

/** Events whose rules may read every waiting entry (the urgent rule on resume, holds, a new config): reduced over the whole state. */
export const WHOLE_STATE_EVENTS: readonly MergeQueueEventType[] = [
  'pause',
  'resume',
  'disable',
  'enable',
  'migrate',
  'migrated',
  'configure',
  'landRefused',
  'quarantined',
];

/**
 * How many plain waiting entries (not set aside) a window loads: what planning can take and one
 * more (see windowHolds), and a margin for a request of several events (an entry update can be
 * three). Each event loads its window afresh, so the margin need not cover more than one request.
 */
export function windowSize(config: Pick<PlannerConfig, 'maxParallel' | 'maxBatch'>): number {
  return config.maxParallel * config.maxBatch + 1 + 8;
}

/** The place in line of the last plain waiting entry a window holds; null when the window left none out. */
export interface WindowEdge {
  priority: number;
  position: number;
}

/** Planning order (priority.ts byPlanningOrder) of an entry against the window's edge: <= 0 is at or ahead of it. */
function againstEdge(e: Pick<EntryState, 'priority' | 'position'>, edge: WindowEdge): number {
  return edge.priority - e.priority || e.position - edge.position;
}

/**
 * Whether reducing one more event over this window gives the whole state's result. Every entry
 * left out is behind `edge` in planning order and unchanged, so the waiting line of the window and
 * of the whole state agree up to the edge; planning reads at most `maxParallel * maxBatch` PRs of
 * that line and its length only up to that many (chain.ts, bisection.ts planProbes, batch-depth.ts
 * nextBatchSize), and one event takes at most one entry out of it before planning (the entry it
 * names). So the window holds when more than `maxParallel * maxBatch` waiting entries that planning
 * would take into the chain (not set aside, not a bisection unit) are at or ahead of the edge.
 */
export function windowHolds(state: MergeQueueState, edge: WindowEdge | null): boolean {
  if (edge === null) return true;
  const needed = state.config.maxParallel * state.config.maxBatch + 1;
  let ahead = 0;
  for (const e of state.entries) {
    if (e.status !== 'queued' || e.setAside || e.suspectGroup !== null || (e.failuresAlone > 0 && !e.cleared)) continue;
    if (againstEdge(e, edge) <= 0 && ++ahead >= needed) return true;
  }
  return false;
}

/**
 * The window of a whole state as the store loads it (for tests and replays): every entry
 * but the plain waiting ones, the first `size` plain waiting ones not set aside in planning order,
 * the first `front` plain waiting ones set aside or not (the front of the line commit statuses
 * show, see frontHolds), and the entries named by id or (live) by PR number, in the state's order;
 * with its edge and the front's edge.
 */
export function windowOf(
  state: MergeQueueState,
  size: number,
  named: { ids?: readonly string[]; numbers?: readonly number[] } = {},
  front = 0,
): { state: MergeQueueState; edge: WindowEdge | null; frontEdge: WindowEdge | null } {
  const line = state.entries.filter((e) => isPlainWaiting(e) && !e.setAside).sort(byPlanningOrder);
  const frontLine = front > 0 ? state.entries.filter(isPlainWaiting).sort(byPlanningOrder) : [];
  const kept = new Set([...line.slice(0, size), ...frontLine.slice(0, front)].map((e) => e.id));
  const edgeOf = (list: EntryState[], n: number) => (list.length > n ? { priority: list[n - 1].priority, position: list[n - 1].position } : null);
  const ids = new Set(named.ids ?? []);
  const numbers = new Set(named.numbers ?? []);
  const entries = state.entries.filter(
    (e) => !isPlainWaiting(e) || kept.has(e.id) || ids.has(e.id) || (numbers.has(e.number) && !['merged', 'removed', 'failed'].includes(e.status)),
  );
  return { state: { ...state, entries }, edge: edgeOf(line, size), frontEdge: front > 0 ? edgeOf(frontLine, front) : null };
}

/**
 * Whether a window gives the commit statuses of the first `shown` places of the whole line
 * (commit-statuses.ts numbers the live PRs that are not blocked, those in batches first, then the
 * waiting ones in planning order, set aside or not, and gives those places an estimate, eta.ts).
 * - Places: the window holds every entry that is not plain waiting and every plain waiting one up
 *   to `frontEdge`; each entry it left out is plain waiting and behind that edge, so behind every
 *   live entry of the window that is in a batch or waiting at or ahead of the edge. With at least
 *   `shown` of those, no entry left out is among the first `shown`.
 * - Estimates: eta.ts cuts the waiting line (not set aside) into rounds of `min(batchDepth,
 *   ceil(waiting / maxParallel))` PRs from its head, and a round's length is what it costs. When
 *   the planner's window left entries out (`edge`), the window must hold `maxParallel *
 *   batchDepth` waiting entries (the rounds are then `batchDepth` long in both) and fill every round
 *   that a shown place falls in (the last one is not cut short).
 */
export function frontHolds(state: MergeQueueState, edge: WindowEdge | null, frontEdge: WindowEdge | null, shown: number): boolean {
  // No front edge: the window left no plain waiting entry out, so it is the whole line.
  if (frontEdge === null) return true;
  const line = liveLine(state);
  const ahead = line.filter((e) => e.status !== 'queued' || againstEdge(e, frontEdge) <= 0).length;
  if (ahead < shown) return false;
  if (edge === null) return true;
  const depth = state.batchDepth;
  const waiting = line.filter((e) => e.status === 'queued' && !e.setAside).length;
  if (waiting < state.config.maxParallel * depth) return false;
  const shownWaiting = line.slice(0, shown).filter((e) => e.status === 'queued' && !e.setAside).length;
  return waiting >= Math.ceil(shownWaiting / depth) * depth;
}

/** The line commit statuses number: the live PRs that are not blocked, those in batches first, then the waiting ones in planning order. */
export function liveLine(state: MergeQueueState): EntryState[] {
  const live = state.entries.filter((e) => !FINAL_ENTRY_STATUSES.includes(e.status) && e.status !== 'blocked');
  return [...live.filter((e) => e.status !== 'queued'), ...live.filter((e) => e.status === 'queued').sort(byPlanningOrder)];
}

/** The entries an event names (by id, or by PR number for an enqueue's duplicate check): a window loads them too. */
export function namedBy(events: readonly { type: string }[]): { ids: string[]; numbers: number[] } {
  const ids: string[] = [];
  const numbers: number[] = [];
  for (const ev of events) {
    const e = ev as { entryId?: unknown; entry?: { number?: unknown }; conflictEntryId?: unknown };
    if (typeof e.entryId === 'string') ids.push(e.entryId);
    if (typeof e.conflictEntryId === 'string') ids.push(e.conflictEntryId);
    if (ev.type === 'enqueue' && typeof e.entry?.number === 'number') numbers.push(e.entry.number);
  }
  return { ids, numbers };
}
