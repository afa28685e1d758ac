import { globProblem } from './glob';
import { alternativesOf, globstarsOf, type LanesReason, type LanesVerdict, PATH_MATCH_LIMITS } from './path-matcher';

/*
 * Lanes (issue 22, part 4): a queue configured with path groups has one lane per group, and a PR
 * belongs to the lanes whose groups its changed paths touch. Pure: the paths come from the
 * provider (`git diff --name-only`, GitHub's compare API) and are matched with the queue's groups
 * compiled into one automaton (path-matcher.ts: no regular expressions, no backtracking; a path
 * costs a bounded number of steps per character), under the shape limits checked here.
 * docs/merge-queue.md ("Lanes") states the rules.
 */

/** A named set of path patterns: one lane of the queue. */
export interface PathGroup {
  /** A short slug, unique in the queue (`api`, `web-app`, `docs`). */
  name: string;
  /**
   * Glob patterns over repository-relative paths (glob.ts: `*`, `?`, `[...]`, `{a,b}`, `**`; dot
   * files included); a pattern ending in `/` means everything under that directory
   * (`services/api/` is `services/api/**`).
   */
  paths: string[];
}

export const MAX_PATH_GROUPS = 16;
export const MAX_GROUP_PATTERNS = 50;
export const MAX_PATTERN_LENGTH = 200;
export const PATH_GROUP_NAME = /^[a-z0-9][a-z0-9._-]{0,39}$/;

/**
 * What is known of a PR's changed paths: the list, or null when the provider could not give all
 * of them (GitHub's compare lists at most 300 files) or they were never asked (the queue had no
 * path groups when the PR was enqueued or its head last moved).
 */
export type ChangedPaths = readonly string[] | null;

/**
 * What an entry row keeps of its PR's changed paths (issue 41): the list when it holds at most
 * `maxPaths` paths of at most `maxChars` characters together; beyond, only its lanes (and how many
 * paths there were), and a change of path groups asks the provider again. Views never read them.
 */
export const KEPT_PATHS_LIMITS = { maxPaths: 1_000, maxChars: 100_000 } as const;

/** The paths an entry row keeps (KEPT_PATHS_LIMITS), or null: none (not known, or too many to keep). */
export function keptPaths(paths: ChangedPaths): readonly string[] | null {
  if (paths === null || paths.length > KEPT_PATHS_LIMITS.maxPaths) return null;
  let chars = 0;
  for (const path of paths) if ((chars += path.length) > KEPT_PATHS_LIMITS.maxChars) return null;
  return paths;
}

/** Every lane of the groups, for `reason`. */
export function everyLane(groups: readonly PathGroup[], reason: LanesReason | null): LanesVerdict {
  return { lanes: groups.map((g) => g.name), reason };
}

/** A queue's path groups as its stored settings hold them (the planner's config; none: the queue is one line). */
export function pathGroupsOf(queue: { settings: unknown }): PathGroup[] {
  return (queue.settings as { pathGroups?: PathGroup[] } | null)?.pathGroups ?? [];
}

/** `groups` with their own arrays, or an Error naming what is wrong (the API checks the shape first). */
export function checkedPathGroups(groups: readonly PathGroup[]): PathGroup[] {
  if (groups.length > MAX_PATH_GROUPS) throw new Error(`at most ${MAX_PATH_GROUPS} path groups`);
  const names = new Set<string>();
  let alternatives = 0;
  const checked = groups.map((group, i) => {
    if (!PATH_GROUP_NAME.test(group.name)) throw new Error(`pathGroups.${i}.name must match ${PATH_GROUP_NAME.source}`);
    if (names.has(group.name)) throw new Error(`pathGroups.${i}.name "${group.name}" is used twice`);
    names.add(group.name);
    if (group.paths.length === 0 || group.paths.length > MAX_GROUP_PATTERNS)
      throw new Error(`pathGroups.${i}.paths must hold 1 to ${MAX_GROUP_PATTERNS} patterns`);
    group.paths.forEach((pattern, j) => {
      const problem = patternProblem(pattern);
      if (problem) throw new Error(`pathGroups.${i}.paths.${j} ${problem}`);
      if (globstarsOf(pattern) > PATH_MATCH_LIMITS.maxGlobstars)
        throw new Error(`pathGroups.${i}.paths.${j} must hold at most ${PATH_MATCH_LIMITS.maxGlobstars} ** segments (a trailing / counts as one)`);
      alternatives += alternativesOf(pattern);
    });
    return { name: group.name, paths: [...group.paths] };
  });
  if (alternatives > PATH_MATCH_LIMITS.maxQueueAlternatives)
    throw new Error(
      `pathGroups expand to ${alternatives} alternatives (braces included), more than the ${PATH_MATCH_LIMITS.maxQueueAlternatives} a queue may hold`,
    );
  return checked;
}

/** Why `pattern` is not a usable repository-relative pattern, or null. */
function patternProblem(pattern: string): string | null {
  if (pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH) return `must be 1 to ${MAX_PATTERN_LENGTH} characters`;
  if (pattern.startsWith('/')) return 'must be relative to the repository root (no leading /)';
  if (pattern.startsWith('!')) return 'must not be a negation (!): list what the group holds';
  if (pattern.split('/').some((part) => part === '..' || part === '.')) return 'must not hold . or .. segments';
  if (/[\0-\x1f\\]/.test(pattern)) return 'must not hold control characters or backslashes';
  if (/[?*+@!]\(/.test(pattern)) return 'must not use extglobs (+(...), @(...), !(...), *(...), ?(...)): list the alternatives with {a,b}';
  return globProblem(pattern);
}
