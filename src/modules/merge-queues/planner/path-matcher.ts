import { compileSegment, expandBraces, matchesOne, type Token } from './glob';

/*
 * A queue's path groups compiled once into one automaton (issue 41): every alternative of every
 * pattern of every group is a branch of one NFA over the characters of a path, and a path is run
 * through a DFA built from it lazily (each DFA state is a set of NFA states, made the first time a
 * character leads to it and kept for the next paths). A path costs one cached step per character;
 * a step not cached yet costs at most the NFA's size, so the worst a path can cost is its length
 * times the queue's compiled size, whatever the patterns (glob.ts's matcher, kept as the reference,
 * costs pattern segments x path segments x both lengths per alternative: `**` 58 times against a
 * path 120 directories deep took 14.5 ms per pattern). The semantics are glob.ts's (the
 * differential test holds them to it): `*`, `?`, `[...]` stay in a segment, `**` as a whole
 * segment takes any number of segments (none included), a trailing `/` is `/**`.
 *
 * Pure: the caller bounds the time (`stop`, asked every STOP_EVERY steps); the engine runs large
 * matches on a worker thread with a deadline (changed-paths/path-matching.ts).
 */

/** The shape limits a queue's path groups are held to (documented in docs/api-conventions.md, "Limits"). */
export const PATH_MATCH_LIMITS = {
  /** `**` segments one pattern may hold (a trailing `/` counts as one), in each brace alternative. */
  maxGlobstars: 4,
  /** Alternatives all the patterns of a queue's groups expand to (braces), together. */
  maxQueueAlternatives: 1_000,
  /** A changed path longer than this (characters) is not matched: its PR is in every lane. */
  maxPathLength: 1_024,
  /** A changed path of more segments than this is not matched: its PR is in every lane. */
  maxPathDepth: 128,
} as const;

/** How many steps pass between two calls of `stop`. */
const STOP_EVERY = 4_096;
/** DFA states kept before the cache starts again (a bound on memory, not on correctness). */
const MAX_DFA_STATES = 20_000;
const SLASH = 47;

const enum Kind {
  Char,
  One,
  Set,
  Star,
  /** The end of a segment's tokens: `/` goes to the next pattern segment. */
  SegmentEnd,
  /** `**` at the start of a path segment: takes it (or none, by its closure). */
  GlobstarStart,
  /** `**` inside a path segment it takes. */
  GlobstarInside,
}

interface NfaState {
  kind: Kind;
  token: Token | null;
  /** The state a match (or `/`, for SegmentEnd) leads to, or a Star's or GlobstarStart's closure; -1: none. */
  next: number;
  /** GlobstarStart: its GlobstarInside (where a character of the segment it takes leads); -1 otherwise. */
  inside: number;
  /** The group (its index) this state accepts for when the path ends here; -1: none. */
  accepts: number;
}

interface DfaState {
  states: Int32Array;
  /** Bit g set: group g matches a path that ends here. */
  groups: number;
  moves: Map<number, DfaState>;
}

/** A queue's groups compiled: run paths through `lanesFor`. */
export interface CompiledPathGroups {
  names: readonly string[];
  /** NFA states: the most one uncached step costs. */
  size: number;
  nfa: NfaState[];
  starts: Int32Array;
  cache: Map<string, DfaState>;
  start: DfaState | null;
}

/** Why a PR is in every lane instead of the lanes its paths touch. */
export type LanesReason =
  | { kind: 'unlisted' }
  | { kind: 'outside'; path: string }
  | { kind: 'tooLong'; path: string; length: number }
  | { kind: 'tooDeep'; path: string; depth: number }
  | { kind: 'deadline'; ms: number };

/** A PR's lanes and, when it is in every lane for want of knowing better, why. */
export interface LanesVerdict {
  lanes: string[];
  reason: LanesReason | null;
}

/** A readable sentence for `reason` (what the chain shows beside the entry's lanes). */
export function lanesReasonText(reason: LanesReason): string {
  const shown = (path: string) => JSON.stringify(path.length > 80 ? `${path.slice(0, 80)}…` : path);
  switch (reason.kind) {
    case 'unlisted':
      return 'the provider could not list the changed paths in full: in every lane';
    case 'outside':
      return `${shown(reason.path)} is in no path group: in every lane`;
    case 'tooLong':
      return `${shown(reason.path)} is ${reason.length} characters long, more than the ${PATH_MATCH_LIMITS.maxPathLength} matched: in every lane`;
    case 'tooDeep':
      return `${shown(reason.path)} is ${reason.depth} segments deep, more than the ${PATH_MATCH_LIMITS.maxPathDepth} matched: in every lane`;
    case 'deadline':
      return `matching the changed paths took longer than ${reason.ms} ms: in every lane`;
  }
}

/** The `**` segments of each alternative of `pattern`, the most of them (a trailing `/` counts as one). */
export function globstarsOf(pattern: string): number {
  const source = pattern.endsWith('/') ? `${pattern}**` : pattern;
  return Math.max(...expandBraces(source).map((alternative) => alternative.split('/').filter((s) => s === '**').length));
}

/** How many alternatives `pattern` expands to (its braces). */
export function alternativesOf(pattern: string): number {
  return expandBraces(pattern).length;
}

/** Compiles the groups (patterns globProblem accepts; throws otherwise). */
export function compilePathGroups(groups: readonly { name: string; paths: readonly string[] }[]): CompiledPathGroups {
  const nfa: NfaState[] = [];
  const starts: number[] = [];
  const add = (state: NfaState) => nfa.push(state) - 1;
  groups.forEach((group, g) => {
    for (const pattern of group.paths) {
      const source = pattern.endsWith('/') ? `${pattern}**` : pattern;
      for (const alternative of expandBraces(source)) starts.push(compileAlternative(alternative.split('/'), g, add, nfa));
    }
  });
  return { names: groups.map((g) => g.name), size: nfa.length, nfa, starts: Int32Array.from(starts), cache: new Map(), start: null };
}

/**
 * Builds one alternative's states back to front; returns its first state. Each pattern segment
 * starts at the state returned for it: a glob segment's first token (or its SegmentEnd when it
 * has none), a `**` segment's GlobstarStart.
 */
function compileAlternative(segments: string[], group: number, add: (s: NfaState) => number, nfa: NfaState[]): number {
  let next = -1;
  // The segments after the current one can all take no path segment (all `**`): a path may end here.
  let tailEmpty = true;
  for (let i = segments.length - 1; i >= 0; i--) {
    const accepts = tailEmpty ? group : -1;
    if (segments[i] === '**') {
      const start = add({ kind: Kind.GlobstarStart, token: null, next, inside: -1, accepts });
      nfa[start].inside = add({ kind: Kind.GlobstarInside, token: null, next: start, inside: -1, accepts });
      next = start;
      continue;
    }
    let at = add({ kind: Kind.SegmentEnd, token: null, next, inside: -1, accepts });
    const tokens = compileSegment(segments[i]);
    for (let t = tokens.length - 1; t >= 0; t--) {
      const token = tokens[t];
      const kind = token.kind === 'char' ? Kind.Char : token.kind === 'one' ? Kind.One : token.kind === 'set' ? Kind.Set : Kind.Star;
      at = add({ kind, token, next: at, inside: -1, accepts: -1 });
    }
    next = at;
    tailEmpty = false;
  }
  return next;
}

/** Marks of the set being built: `mark[s] === stamp` when s is in it. */
interface Builder {
  mark: Int32Array;
  stamp: number;
  list: number[];
}

function builderFor(m: CompiledPathGroups): Builder {
  return { mark: new Int32Array(m.size), stamp: 0, list: [] };
}

/** Adds `s` and its closure (a star may take nothing, a `**` may take no segment). */
function addState(m: CompiledPathGroups, b: Builder, s: number): void {
  // Iterative: a chain of stars and `**`s is followed without recursion.
  while (s !== -1 && b.mark[s] !== b.stamp) {
    b.mark[s] = b.stamp;
    b.list.push(s);
    const state = m.nfa[s];
    if (state.kind === Kind.Star || state.kind === Kind.GlobstarStart) s = state.next;
    else return;
  }
}

function dfaOf(m: CompiledPathGroups, b: Builder): DfaState {
  b.list.sort((x, y) => x - y);
  const key = b.list.join(',');
  const known = m.cache.get(key);
  if (known) return known;
  if (m.cache.size >= MAX_DFA_STATES) {
    m.cache.clear();
    m.start = null;
  }
  let groups = 0;
  for (const s of b.list) if (m.nfa[s].accepts !== -1) groups |= 1 << m.nfa[s].accepts;
  const state: DfaState = { states: Int32Array.from(b.list), groups, moves: new Map() };
  m.cache.set(key, state);
  return state;
}

function startOf(m: CompiledPathGroups, b: Builder): DfaState {
  if (m.start && m.cache.size > 0) return m.start;
  b.stamp++;
  b.list = [];
  for (const s of m.starts) addState(m, b, s);
  m.start = dfaOf(m, b);
  return m.start;
}

/** Adds to the builder's set the NFA states `states` lead to on the character `code`. */
function stepInto(m: CompiledPathGroups, b: Builder, states: ArrayLike<number>, code: number): void {
  b.stamp++;
  b.list = [];
  const ch = String.fromCharCode(code);
  for (let i = 0; i < states.length; i++) {
    const s = states[i];
    const state = m.nfa[s];
    if (code === SLASH) {
      if (state.kind === Kind.SegmentEnd) addState(m, b, state.next);
      else if (state.kind === Kind.GlobstarStart) addState(m, b, s);
      else if (state.kind === Kind.GlobstarInside) addState(m, b, state.next);
      continue;
    }
    switch (state.kind) {
      case Kind.Char:
      case Kind.One:
      case Kind.Set:
        if (matchesOne(state.token!, ch)) addState(m, b, state.next);
        break;
      case Kind.Star:
      case Kind.GlobstarInside:
        addState(m, b, s);
        break;
      case Kind.GlobstarStart:
        addState(m, b, state.inside);
        break;
      default:
        break;
    }
  }
}

/** The DFA state `from` leads to on the character `code`, made and cached; counts the NFA states it looked at. */
function move(m: CompiledPathGroups, b: Builder, from: DfaState, code: number, work: { steps: number }): DfaState {
  stepInto(m, b, from.states, code);
  work.steps += from.states.length;
  const to = dfaOf(m, b);
  // A cache cleared meanwhile dropped `from`: remembering the move on it does no harm.
  from.moves.set(code, to);
  return to;
}

/**
 * The groups (bit g: group g) `path` matches, or null when `stop` asked to stop. `work.steps`
 * grows by the path's length plus the NFA states every uncached step looked at. A path that keeps
 * making new DFA states (patterns whose automaton grows with every character, `*a??????`) goes on
 * as a plain NFA simulation: the same states each step, without the cost of naming and caching
 * sets that will not come back.
 */
export function groupsOf(m: CompiledPathGroups, path: string, work: { steps: number; nextStop: number }, stop?: () => boolean): number | null {
  const b = builderOf(m);
  let at = startOf(m, b);
  let made = 0;
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    const known = at.moves.get(code);
    if (known) at = known;
    else if (++made > MAX_MADE_PER_PATH) return simulate(m, b, at.states, path, i, work, stop);
    else at = move(m, b, at, code, work);
    work.steps++;
    if (stop && work.steps >= work.nextStop) {
      work.nextStop = work.steps + STOP_EVERY;
      if (stop()) return null;
    }
  }
  return at.groups;
}

/** New DFA states one path may make before it goes on as an NFA simulation. */
const MAX_MADE_PER_PATH = 64;

/** The rest of `path` from `from` (the NFA states before character `start`), one set per character. */
function simulate(
  m: CompiledPathGroups,
  b: Builder,
  from: ArrayLike<number>,
  path: string,
  start: number,
  work: { steps: number; nextStop: number },
  stop?: () => boolean,
): number | null {
  let states: ArrayLike<number> = from;
  for (let i = start; i < path.length; i++) {
    stepInto(m, b, states, path.charCodeAt(i));
    work.steps += states.length + 1;
    states = b.list;
    if (stop && work.steps >= work.nextStop) {
      work.nextStop = work.steps + STOP_EVERY;
      if (stop()) return null;
    }
  }
  let groups = 0;
  for (let i = 0; i < states.length; i++) if (m.nfa[states[i]].accepts !== -1) groups |= 1 << m.nfa[states[i]].accepts;
  return groups;
}

const builders = new WeakMap<CompiledPathGroups, Builder>();
function builderOf(m: CompiledPathGroups): Builder {
  let b = builders.get(m);
  if (!b) builders.set(m, (b = builderFor(m)));
  return b;
}

/** Why `path` is not matched at all (over the length or depth limit), or null. */
export function pathOverLimits(path: string): LanesReason | null {
  if (path.length > PATH_MATCH_LIMITS.maxPathLength) return { kind: 'tooLong', path, length: path.length };
  let depth = 1;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === SLASH) depth++;
  if (depth > PATH_MATCH_LIMITS.maxPathDepth) return { kind: 'tooDeep', path, depth };
  return null;
}

/**
 * A PR's lanes under the compiled groups: those its paths match, in the groups' order; every lane
 * (with the reason) when the paths are not known, one is over the path limits or in no group;
 * none when it changes nothing. Null when `stop` asked to stop (the caller's deadline).
 */
export function lanesFor(m: CompiledPathGroups, paths: readonly string[] | null, stop?: () => boolean): LanesVerdict | null {
  const every = (reason: LanesReason): LanesVerdict => ({ lanes: [...m.names], reason });
  if (m.names.length === 0) return { lanes: [], reason: null };
  if (paths === null) return every({ kind: 'unlisted' });
  // The limits first, for every path: a PR over them is answered without matching anything.
  for (const path of paths) {
    const over = pathOverLimits(path);
    if (over) return every(over);
  }
  const work = { steps: 0, nextStop: STOP_EVERY };
  let hit = 0;
  for (const path of paths) {
    const groups = groupsOf(m, path, work, stop);
    if (groups === null) return null;
    // A change outside every group may affect every lane (a root build file, a shared library).
    if (groups === 0) return every({ kind: 'outside', path });
    hit |= groups;
  }
  return { lanes: m.names.filter((_, g) => (hit & (1 << g)) !== 0), reason: null };
}

/**
 * An upper bound of the steps matching `paths` can take: each character one cached step, or an
 * uncached one looking at every NFA state. The engine matches in the calling thread only below a
 * small bound, on a worker thread with a deadline above it.
 */
export function matchWorkBound(m: { size: number } | number, paths: readonly string[] | null): number {
  if (paths === null) return 0;
  const size = typeof m === 'number' ? m : m.size;
  let chars = 0;
  for (const path of paths) chars += Math.min(path.length, PATH_MATCH_LIMITS.maxPathLength + 1);
  return chars * (size + 1);
}

/** The NFA size the groups compile to, without compiling them: their characters, alternative by alternative. */
export function compiledSizeOf(groups: readonly { paths: readonly string[] }[]): number {
  let size = 0;
  for (const group of groups)
    for (const pattern of group.paths) {
      const source = pattern.endsWith('/') ? `${pattern}**` : pattern;
      for (const alternative of expandBraces(source)) size += alternative.length + 2;
    }
  return size;
}
