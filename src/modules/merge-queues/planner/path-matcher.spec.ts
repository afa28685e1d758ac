import { compileGlob, globProblem } from './glob';
import { checkedPathGroups } from './lanes';
import { compilePathGroups, globstarsOf, lanesFor, lanesReasonText, PATH_MATCH_LIMITS } from './path-matcher';

/** A small seeded generator (mulberry32): the same cases on every run, a failure reproducible. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the compiled path matcher (one automaton per queue)', () => {
  it('agrees with glob.ts (the reference) on 20,000 random patterns and paths', () => {
    const next = random(41);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
    const segmentParts = ['a', 'b', 'ab', '*', '?', '[ab]', '[!a]', '{a,b}', '{a,}', '.', '-', '**'];
    const pathParts = ['a', 'b', 'ab', 'ba', 'aab', '', '.', '-', '[', ']'];
    const pattern = () => {
      const segments = Array.from({ length: 1 + Math.floor(next() * 4) }, () =>
        next() < 0.2 ? '**' : Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(segmentParts)).join(''),
      );
      return segments.join('/') + (next() < 0.15 ? '/' : '');
    };
    const path = () =>
      Array.from({ length: 1 + Math.floor(next() * 5) }, () => Array.from({ length: Math.floor(next() * 3) }, () => pick(pathParts)).join('')).join('/');
    let disagreements: string[] = [];
    let matched = 0;
    for (let i = 0; i < 2_000; i++) {
      const p = pattern();
      if (globProblem(p)) continue;
      const reference = compileGlob(p);
      const matcher = compilePathGroups([{ name: 'g', paths: [p] }]);
      for (let j = 0; j < 10; j++) {
        const q = path();
        const expected = reference(q);
        if (expected) matched++;
        if ((lanesFor(matcher, [q])!.reason === null) !== expected) disagreements.push(`${p} against ${q}: glob.ts says ${expected}`);
      }
    }
    disagreements = disagreements.slice(0, 10);
    expect(disagreements).toEqual([]);
    // The cases are not all misses (a generator that never matched would prove little).
    expect(matched).toBeGreaterThan(1_000);
  });

  it('tells each group apart in one run: a path in two groups is in both lanes', () => {
    const m = compilePathGroups([
      { name: 'api', paths: ['services/api/', '**/*.proto'] },
      { name: 'web', paths: ['apps/web/**', '**/*.proto'] },
      { name: 'docs', paths: ['docs/', '*.md'] },
    ]);
    expect(lanesFor(m, ['services/api/a.ts'])).toEqual({ lanes: ['api'], reason: null });
    expect(lanesFor(m, ['shared/x.proto'])).toEqual({ lanes: ['api', 'web'], reason: null });
    expect(lanesFor(m, ['README.md', 'apps/web/x'])).toEqual({ lanes: ['web', 'docs'], reason: null });
    expect(lanesFor(m, ['package.json'])).toEqual({ lanes: ['api', 'web', 'docs'], reason: { kind: 'outside', path: 'package.json' } });
    expect(lanesFor(m, null)).toEqual({ lanes: ['api', 'web', 'docs'], reason: { kind: 'unlisted' } });
    expect(lanesFor(m, [])).toEqual({ lanes: [], reason: null });
  });

  it('puts a PR with a path over the length or depth limit in every lane with the reason, without matching', () => {
    const m = compilePathGroups([{ name: 'all', paths: ['**'] }]);
    const long = `${'a'.repeat(PATH_MATCH_LIMITS.maxPathLength)}b`;
    const deep = 'd/'.repeat(PATH_MATCH_LIMITS.maxPathDepth) + 'x';
    expect(lanesFor(m, ['a', long])).toEqual({ lanes: ['all'], reason: { kind: 'tooLong', path: long, length: PATH_MATCH_LIMITS.maxPathLength + 1 } });
    expect(lanesFor(m, [deep])!.reason).toEqual({ kind: 'tooDeep', path: deep, depth: PATH_MATCH_LIMITS.maxPathDepth + 1 });
    expect(lanesReasonText(lanesFor(m, [deep])!.reason!)).toMatch(/129 segments deep, more than the 128 matched: in every lane/);
    // Just at the limits: matched.
    expect(lanesFor(m, ['a'.repeat(PATH_MATCH_LIMITS.maxPathLength), 'd/'.repeat(PATH_MATCH_LIMITS.maxPathDepth - 1) + 'x'])).toEqual({
      lanes: ['all'],
      reason: null,
    });
    // Deeper than glob.ts's recursion could go (it threw RangeError): an answer, not an exception.
    expect(() => lanesFor(m, ['d/'.repeat(20_000)])).not.toThrow();
  });

  it('stops when the caller asks (its deadline), between two steps', () => {
    const m = compilePathGroups([{ name: 'g', paths: ['**/*a?????????????'] }]);
    let asked = 0;
    const verdict = lanesFor(
      m,
      Array.from({ length: 100 }, (_, i) => `${i}/${'ab'.repeat(400)}`),
      () => ++asked >= 3,
    );
    expect(verdict).toBeNull();
    expect(asked).toBe(3);
  });

  it('counts `**` segments per alternative, a trailing / as one', () => {
    expect(globstarsOf('a/**/b/**')).toBe(2);
    expect(globstarsOf('services/api/')).toBe(1);
    expect(globstarsOf('{**/a,**/**/b}')).toBe(2);
    expect(globstarsOf('a**b')).toBe(0);
  });

  it('refuses groups over the shape limits, naming the field', () => {
    const stars = `${'**/'.repeat(PATH_MATCH_LIMITS.maxGlobstars)}x`;
    expect(() => checkedPathGroups([{ name: 'a', paths: [stars] }])).not.toThrow();
    expect(() => checkedPathGroups([{ name: 'a', paths: ['x', `**/${stars}`] }])).toThrow(
      `pathGroups.0.paths.1 must hold at most ${PATH_MATCH_LIMITS.maxGlobstars} ** segments`,
    );
    expect(() => checkedPathGroups([{ name: 'a', paths: [`${stars}/`] }])).toThrow(
      'pathGroups.0.paths.0 must hold at most 4 ** segments (a trailing / counts as one)',
    );
    // 16 groups x 50 patterns of 2 alternatives: 1,600 alternatives in all.
    const many = Array.from({ length: 16 }, (_, i) => ({ name: `g${i}`, paths: Array.from({ length: 50 }, (_, j) => `p${j}/{a,b}`) }));
    expect(() => checkedPathGroups(many)).toThrow(
      `pathGroups expand to 1600 alternatives (braces included), more than the ${PATH_MATCH_LIMITS.maxQueueAlternatives}`,
    );
    // Brace-free, the most patterns a queue may hold still fit.
    expect(() => checkedPathGroups(many.map((g) => ({ ...g, paths: g.paths.map((p) => p.replace('{a,b}', 'a')) })))).not.toThrow();
  });
});
