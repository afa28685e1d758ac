import { compilePathGroups, type CompiledPathGroups, lanesFor } from './path-matcher';
import type { CheckFailure, EntryState, MergeQueueState } from './types';

/*
 * Named suspects (issue 40, points 4 and 5): a PR whose lanes hold the path group of a failing
 * test's file (or target) is named by that failure. Path groups are the default source of a PR's
 * targets. Only the first MAX_NAMING_PATHS failures with a path are matched, so a result naming
 * many tests costs the planner a bounded amount of matching.
 */

/** At most this many failing tests' paths are matched against the path groups per question. */
export const MAX_NAMING_PATHS = 10;

const compiledGroups = new WeakMap<object, CompiledPathGroups>();

/** Whether `e` is named by `failures`: its lanes hold the path group of a failing test's file (or target). */
export function isNamed(s: MergeQueueState, e: EntryState, failures: readonly CheckFailure[]): boolean {
  const groups = s.config.pathGroups;
  if (!groups || groups.length === 0 || !e.lanes || e.lanes.length === 0) return false;
  let m = compiledGroups.get(groups);
  if (!m) {
    m = compilePathGroups(groups);
    compiledGroups.set(groups, m);
  }
  let matched = 0;
  for (const f of failures) {
    const path = f.file ?? f.target;
    if (!path) continue;
    if (++matched > MAX_NAMING_PATHS) break;
    const verdict = lanesFor(m, [path]);
    // A path in no group (or over the limits) names every lane: it tells nothing.
    if (!verdict || verdict.reason !== null) continue;
    if (verdict.lanes.some((l) => e.lanes!.includes(l))) return true;
  }
  return false;
}

/** A suspect the posterior rule tests alone first: named by the failure it is suspected for. */
export function isNamedSuspect(s: MergeQueueState, e: EntryState): boolean {
  return s.config.flakyRetries === null && e.suspectGroup !== null && !!e.suspectedFor && isNamed(s, e, e.suspectedFor);
}
