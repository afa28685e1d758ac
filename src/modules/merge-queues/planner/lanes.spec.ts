import { checkedPathGroups, type ChangedPaths, type PathGroup } from './lanes';
import { compilePathGroups, lanesFor } from './path-matcher';

/** A PR's lanes under `groups` (the engine matches the same way, bounded in time: changed-paths/path-matching.ts). */
const lanesOf = (paths: ChangedPaths, groups: readonly PathGroup[]) => lanesFor(compilePathGroups(groups), paths)!.lanes;

const GROUPS: PathGroup[] = [
  { name: 'api', paths: ['services/api/'] },
  { name: 'web', paths: ['apps/web/**', 'packages/ui/**/*.tsx'] },
  { name: 'docs', paths: ['docs/', '*.md'] },
];

describe('lanes of a PR (path groups)', () => {
  it('puts a PR in the lanes whose patterns match its paths, in the groups order', () => {
    expect(lanesOf(['services/api/src/main.ts'], GROUPS)).toEqual(['api']);
    expect(lanesOf(['apps/web/index.html', 'services/api/x.ts'], GROUPS)).toEqual(['api', 'web']);
    expect(lanesOf(['packages/ui/button/Button.tsx'], GROUPS)).toEqual(['web']);
    expect(lanesOf(['README.md', 'docs/guide/.hidden'], GROUPS)).toEqual(['docs']);
  });

  it('puts a PR with a path outside every group, or with paths not known, in every lane', () => {
    expect(lanesOf(['services/api/a.ts', 'package.json'], GROUPS)).toEqual(['api', 'web', 'docs']);
    // *.md matches only at the root; ui's pattern only .tsx files.
    expect(lanesOf(['services/README.md'], GROUPS)).toEqual(['api', 'web', 'docs']);
    expect(lanesOf(['packages/ui/button/Button.css'], GROUPS)).toEqual(['api', 'web', 'docs']);
    expect(lanesOf(null, GROUPS)).toEqual(['api', 'web', 'docs']);
  });

  it('gives no lane without path groups, or to a PR that changes nothing', () => {
    expect(lanesOf(['anything'], [])).toEqual([]);
    expect(lanesOf(null, [])).toEqual([]);
    expect(lanesOf([], GROUPS)).toEqual([]);
  });

  it('a directory pattern is that directory only, not a sibling sharing its prefix', () => {
    expect(lanesOf(['services/api-gateway/x.ts'], GROUPS)).toEqual(['api', 'web', 'docs']);
  });

  it('refuses groups it cannot honour, naming the field', () => {
    expect(() => checkedPathGroups([{ name: 'Api', paths: ['a/'] }])).toThrow('pathGroups.0.name');
    expect(() => checkedPathGroups([GROUPS[0], { name: 'api', paths: ['b/'] }])).toThrow('pathGroups.1.name "api" is used twice');
    expect(() => checkedPathGroups([{ name: 'a', paths: [] }])).toThrow('pathGroups.0.paths must hold');
    expect(() => checkedPathGroups([{ name: 'a', paths: ['/abs/'] }])).toThrow('pathGroups.0.paths.0 must be relative');
    expect(() => checkedPathGroups([{ name: 'a', paths: ['x/', '!x/y'] }])).toThrow('pathGroups.0.paths.1 must not be a negation');
    expect(() => checkedPathGroups([{ name: 'a', paths: ['x/../y'] }])).toThrow('. or .. segments');
    expect(() => checkedPathGroups(Array.from({ length: 17 }, (_, i) => ({ name: `g${i}`, paths: ['x'] })))).toThrow('at most 16');
    const copy = checkedPathGroups(GROUPS);
    expect(copy).toEqual(GROUPS);
    expect(copy[0].paths).not.toBe(GROUPS[0].paths);
  });
});
