/*
 * Path globs for path groups (lanes.ts), matched without regular expressions. The patterns come
 * from a queue's owner and the paths from anyone who can push a PR, and matching runs in the API:
 * regex-based matchers (picomatch, minimatch) turn `*a*a*a*a*` or `**\/*-*-*-*.ts` into
 * backtracking expressions that take tens of seconds on one long path. Here a segment is matched
 * with the greedy wildcard algorithm (at most pattern x segment steps) and `**` over segments with
 * a memo of (pattern segment, path segment) pairs, so the cost is polynomial in the lengths,
 * whatever the pattern.
 *
 * Syntax: `*` (any characters but `/`), `?` (one character but `/`), `[abc]`, `[a-z]`, `[!a]` /
 * `[^a]` (one character of the set, or not), `{a,b}` (alternatives, nested allowed), `**` as a whole
 * segment (any number of segments, none included), and a trailing `/` for everything under a
 * directory. Every other character is itself; dot files are matched like any other name.
 */

/** The most alternatives one pattern's braces may expand to. */
export const MAX_BRACE_ALTERNATIVES = 32;

export type Token = { kind: 'char'; ch: string } | { kind: 'one' } | { kind: 'star' } | { kind: 'set'; negate: boolean; ranges: [string, string][] };
/** A compiled alternative: its segments, each `**` or the tokens of one segment. */
type Segments = ('**' | Token[])[];

/** Why `pattern` cannot be compiled (unbalanced braces, too many alternatives), or null. */
export function globProblem(pattern: string): string | null {
  try {
    compileGlob(pattern);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** A matcher for `pattern`; throws on a pattern globProblem refuses. */
export function compileGlob(pattern: string): (path: string) => boolean {
  const source = pattern.endsWith('/') ? `${pattern}**` : pattern;
  const alternatives = expandBraces(source).map(compileAlternative);
  return (path) => {
    const parts = path.split('/');
    return alternatives.some((segments) => matchSegments(segments, parts));
  };
}

/** `a{b,c{d,e}}f` -> `abf`, `acdf`, `acef`; a brace group without a top-level comma is literal. */
export function expandBraces(pattern: string): string[] {
  const open = pattern.indexOf('{');
  if (open === -1) {
    if (pattern.includes('}')) throw new Error('has a } without its {');
    return [pattern];
  }
  let depth = 0;
  const commas: number[] = [];
  let close = -1;
  for (let i = open; i < pattern.length && close === -1; i++) {
    const ch = pattern[i];
    if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) close = i;
    else if (ch === ',' && depth === 1) commas.push(i);
  }
  if (close === -1) throw new Error('has a { without its }');
  const head = pattern.slice(0, open);
  const tails = expandBraces(pattern.slice(close + 1));
  const bounds = [open, ...commas, close];
  const inner =
    commas.length === 0 ? [`{${pattern.slice(open + 1, close)}}`] : bounds.slice(1).flatMap((end, k) => expandBraces(pattern.slice(bounds[k] + 1, end)));
  const out: string[] = [];
  for (const middle of inner) {
    for (const tail of tails) {
      out.push(`${head}${middle}${tail}`);
      if (out.length > MAX_BRACE_ALTERNATIVES) throw new Error(`expands to more than ${MAX_BRACE_ALTERNATIVES} alternatives`);
    }
  }
  return out;
}

function compileAlternative(pattern: string): Segments {
  return pattern.split('/').map((segment) => (segment === '**' ? '**' : compileSegment(segment)));
}

export function compileSegment(segment: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i];
    if (ch === '*') {
      // `a**b` is `a*b`: consecutive stars are one.
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (ch === '?') tokens.push({ kind: 'one' });
    else if (ch === '[') {
      const set = compileSet(segment, i);
      if (set) {
        tokens.push(set.token);
        i = set.end;
      } else tokens.push({ kind: 'char', ch });
    } else tokens.push({ kind: 'char', ch });
  }
  return tokens;
}

/** `[...]` starting at `start`, or null when it is not closed (then `[` is itself). */
function compileSet(segment: string, start: number): { token: Token; end: number } | null {
  let i = start + 1;
  const negate = segment[i] === '!' || segment[i] === '^';
  if (negate) i++;
  const ranges: [string, string][] = [];
  // A `]` right after `[` or `[!` is a member, as in shell globs.
  for (let first = true; i < segment.length; first = false) {
    if (segment[i] === ']' && !first) return { token: { kind: 'set', negate, ranges }, end: i };
    const from = segment[i];
    if (segment[i + 1] === '-' && i + 2 < segment.length && segment[i + 2] !== ']') {
      ranges.push([from, segment[i + 2]]);
      i += 3;
    } else {
      ranges.push([from, from]);
      i += 1;
    }
  }
  return null;
}

export function matchesOne(token: Token, ch: string): boolean {
  if (token.kind === 'char') return token.ch === ch;
  if (token.kind === 'one') return true;
  if (token.kind === 'set') return token.ranges.some(([from, to]) => ch >= from && ch <= to) !== token.negate;
  return false;
}

/** The greedy wildcard match of one segment: on a mismatch, the last star takes one more character. */
function matchSegment(tokens: Token[], text: string): boolean {
  let t = 0;
  let s = 0;
  let star = -1;
  let starFrom = 0;
  while (s < text.length) {
    const token = tokens[t];
    if (token?.kind === 'star') {
      star = t++;
      starFrom = s;
    } else if (token !== undefined && matchesOne(token, text[s])) {
      t++;
      s++;
    } else if (star !== -1) {
      t = star + 1;
      s = ++starFrom;
    } else return false;
  }
  while (tokens[t]?.kind === 'star') t++;
  return t === tokens.length;
}

/** Pattern segments against path segments, `**` taking any number of them; each pair is decided once. */
function matchSegments(pattern: Segments, path: string[]): boolean {
  const seen = new Map<number, boolean>();
  const width = path.length + 1;
  const at = (i: number, j: number): boolean => {
    if (i === pattern.length) return j === path.length;
    const key = i * width + j;
    const known = seen.get(key);
    if (known !== undefined) return known;
    const segment = pattern[i];
    const result = segment === '**' ? at(i + 1, j) || (j < path.length && at(i, j + 1)) : j < path.length && matchSegment(segment, path[j]) && at(i + 1, j + 1);
    seen.set(key, result);
    return result;
  };
  return at(0, 0);
}
