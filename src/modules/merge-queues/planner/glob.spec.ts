import { compileGlob, globProblem, MAX_BRACE_ALTERNATIVES } from './glob';
import { compilePathGroups, lanesFor } from './path-matcher';

const matches = (pattern: string, path: string) => compileGlob(pattern)(path);
/** The compiled matcher's answer (path-matcher.ts) for one pattern alone: it keeps glob.ts's semantics. */
const compiled = (pattern: string, path: string) => lanesFor(compilePathGroups([{ name: 'g', paths: [pattern] }]), [path])!.reason === null;

const GLOB_CASES: [string, string, boolean][] = [
  ['services/api/', 'services/api/main.ts', true],
  ['services/api/', 'services/api/deep/er/x.ts', true],
  ['services/api/', 'services/api-gateway/x.ts', false],
  ['services/api/', 'other/services/api/x.ts', false],
  ['*.md', 'README.md', true],
  ['*.md', 'docs/README.md', false],
  ['**/*.md', 'docs/a/README.md', true],
  ['**/*.md', 'README.md', true],
  ['apps/**/test/*.ts', 'apps/test/a.ts', true],
  ['apps/**/test/*.ts', 'apps/x/y/test/a.ts', true],
  ['apps/**/test/*.ts', 'apps/x/y/test/deep/a.ts', false],
  ['src/*', 'src/.env', true],
  ['pr-*[02468].txt', 'pr-12.txt', true],
  ['pr-*[02468].txt', 'pr-13.txt', false],
  ['v[!0-4]/*', 'v7/x', true],
  ['v[^0-4]/*', 'v3/x', false],
  ['[]]x', ']x', true],
  ['a[bc', 'a[bc', true],
  ['file?.ts', 'file1.ts', true],
  ['file?.ts', 'file12.ts', false],
  ['file?.ts', 'file/.ts', false],
  ['{apps,libs}/web/**', 'libs/web/a/b.ts', true],
  ['{apps,libs}/web/**', 'tools/web/a.ts', false],
  ['x.{ts,tsx,{m,c}js}', 'x.cjs', true],
  ['x.{ts,tsx,{m,c}js}', 'x.js', false],
  ['{literal}', '{literal}', true],
  ['a**b', 'axxb', true],
  ['a**b', 'ax/xb', false],
  ['(a)+@b!', '(a)+@b!', true],
];

describe('path globs (no regular expressions)', () => {
  it.each(GLOB_CASES)('%s against %s: %s', (pattern, path, expected) => {
    expect(matches(pattern, path)).toBe(expected);
    expect(compiled(pattern, path)).toBe(expected);
  });

  it('decides patterns that make regex-based matchers backtrack for seconds, at once and right', () => {
    // Each of these takes picomatch 5-30 s on one path (measured); a regression to backtracking
    // would hang this test until Jest's timeout.
    const long = `${'a'.repeat(200)}/`;
    expect(matches('*a*a*a*a*a', long)).toBe(false);
    expect(matches('*a*a*a*a*a', 'a'.repeat(200))).toBe(true);
    expect(matches('**/*-*-*-*-*-*.ts', `src/${'a-'.repeat(120)}`)).toBe(false);
    expect(matches('*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(4000))).toBe(false);
    expect(matches('**/**/**/**/**/**/x', `${'d/'.repeat(1500)}y`)).toBe(false);
    expect(matches('**/**/**/**/**/**/x', `${'d/'.repeat(1500)}x`)).toBe(true);
  });

  it('refuses unbalanced braces and brace groups that expand too far', () => {
    expect(globProblem('a{b,c')).toMatch(/{ without its }/);
    expect(globProblem('a}b')).toMatch(/} without its {/);
    expect(globProblem('{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}')).toMatch(new RegExp(`more than ${MAX_BRACE_ALTERNATIVES}`));
    expect(globProblem('{a,b}{c,d}{e,f}{g,h}{i,j}')).toBeNull();
  });
});
