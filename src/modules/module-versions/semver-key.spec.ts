import fc from 'fast-check';
import { compare, valid } from 'semver';
import { compareColumns, isPrereleaseSortKey, MAX_VERSION_NUMBER, parseVersion, prereleaseSortKey, RELEASE_SORT_KEY, type VersionColumns } from './semver-key';

function columns(version: string): VersionColumns {
  const parsed = parseVersion(version);
  if (!parsed.ok) throw new Error(`${version}: ${parsed.reason}`);
  return parsed.version.columns;
}

const sign = (n: number) => Math.sign(n);

/** Small numbers collide often (so equal prefixes are exercised); now and then a large one. */
const versionNumber = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: MAX_VERSION_NUMBER }) },
);
/** Numeric identifiers up to 15 digits: semver compares them as floating point, exact only below 2^53. */
const numericIdentifier = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 12 }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: 999_999_999_999_999n }).map(String) },
);
const alphanumericIdentifier = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('alpha', 'beta', 'rc', 'a', 'b', 'A', 'Z', '-', '--', 'alpha-1', 'alphab', '1a', 'a1', '0x', 'rc-', 'RC') },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9A-Za-z-]{1,6}$/).filter((s) => !/^\d+$/.test(s)) },
);
const prerelease = fc.array(fc.oneof(numericIdentifier, alphanumericIdentifier), { maxLength: 4 });
const build = fc.array(fc.stringMatching(/^[0-9A-Za-z-]{1,4}$/), { maxLength: 2 });
const version = fc
  .record({ major: versionNumber, minor: versionNumber, patch: versionNumber, prerelease, build })
  .map(
    ({ major, minor, patch, prerelease, build }) =>
      `${major}.${minor}.${patch}${prerelease.length ? `-${prerelease.join('.')}` : ''}${build.length ? `+${build.join('.')}` : ''}`,
  );

describe('semver sort key', () => {
  it('orders 10,000 generated pairs exactly as semver.compare does', () => {
    let pairs = 0;
    fc.assert(
      fc.property(version, version, (a, b) => {
        pairs++;
        expect(valid(a)).toBe(a.split('+')[0]);
        expect([a, b, sign(compareColumns(columns(a), columns(b)))]).toEqual([a, b, compare(a, b)]);
        expect(isPrereleaseSortKey(columns(a).versionPrereleaseSortKey)).toBe(true);
      }),
      { numRuns: 10_000 },
    );
    expect(pairs).toBeGreaterThanOrEqual(10_000);
  });

  it('orders pairs that share major.minor.patch (prerelease keys alone decide) exactly as semver.compare does', () => {
    fc.assert(
      fc.property(prerelease, prerelease, (a, b) => {
        const [left, right] = [a, b].map((ids) => `1.0.0${ids.length ? `-${ids.join('.')}` : ''}`);
        expect(sign(compareColumns(columns(left), columns(right)))).toBe(compare(left, right));
      }),
      { numRuns: 10_000 },
    );
  });

  it('orders the semver.org example chain', () => {
    const chain = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0'];
    for (let i = 0; i < chain.length; i++) {
      for (let j = 0; j < chain.length; j++)
        expect([chain[i], chain[j], sign(compareColumns(columns(chain[i]), columns(chain[j])))]).toEqual([chain[i], chain[j], sign(i - j)]);
    }
  });

  it('compares numeric identifiers longer than 16 digits exactly (semver itself rounds them)', () => {
    const numbers = [
      '9007199254740992',
      '9007199254740993',
      '12345678901234567890',
      '12345678901234567891',
      '99999999999999999999',
      '100000000000000000000',
      '1' + '0'.repeat(60),
    ];
    const sorted = [...numbers].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    expect(sorted).toEqual(numbers);
    for (let i = 0; i < numbers.length; i++) {
      for (let j = 0; j < numbers.length; j++) {
        const [a, b] = [`1.0.0-rc.${numbers[i]}`, `1.0.0-rc.${numbers[j]}`];
        expect([a, b, sign(compareColumns(columns(a), columns(b)))]).toEqual([a, b, sign(i - j)]);
      }
    }
    // Longer identifier lists and alphanumerics still come after.
    expect(compareColumns(columns('1.0.0-99999999999999999999'), columns('1.0.0-a'))).toBeLessThan(0);
    expect(compareColumns(columns('1.0.0-99999999999999999999'), columns('1.0.0-99999999999999999999.0'))).toBeLessThan(0);
  });

  it('keeps major, minor and patch up to 2^31 - 1 exactly and refuses larger ones', () => {
    expect(columns('2147483647.2147483647.2147483647').versionMajor).toBe(2147483647);
    expect(compareColumns(columns('2147483647.0.0'), columns('2147483646.9.9'))).toBeGreaterThan(0);
    for (const text of ['2147483648.0.0', '0.2147483648.0', '0.0.2147483648', '99999999999999999999.0.0']) {
      const parsed = parseVersion(text);
      expect(parsed.ok).toBe(false);
      expect(parsed.ok ? '' : parsed.reason).toMatch(/at most 2147483647/);
    }
  });

  it('ignores build metadata for the key and keeps it in the parse', () => {
    expect(columns('1.0.0+a')).toEqual(columns('1.0.0+b'));
    const parsed = parseVersion('1.0.0-rc.1+build.7');
    expect(parsed.ok && parsed.version.build).toEqual(['build', '7']);
  });

  it('gives a release the key ~ and no rank, a prerelease its identifier count as rank', () => {
    expect(columns('1.2.3')).toEqual({
      versionMajor: 1,
      versionMinor: 2,
      versionPatch: 3,
      versionPrereleaseSortKey: RELEASE_SORT_KEY,
      versionPrereleaseRank: null,
    });
    expect(columns('1.2.3-rc.10')).toMatchObject({ versionPrereleaseSortKey: '2rc!1210', versionPrereleaseRank: 2 });
  });

  it('refuses what the pattern or semver refuses', () => {
    for (const text of [
      '1.0',
      'v1.0.0',
      '01.0.0',
      '1.00.0',
      '1.0.0-01',
      '1.0.0-',
      '1.0.0+',
      '1.0.0-a..b',
      '1.0.0 ',
      `1.0.0-${'1'.repeat(62)}`,
      `1.0.0-${'a'.repeat(130)}`,
    ]) {
      expect([text, parseVersion(text).ok]).toEqual([text, false]);
    }
  });

  it('validates sort keys as cursors carry them', () => {
    for (const key of ['~', prereleaseSortKey(['alpha', '1']), prereleaseSortKey(['12345678901234567890'])]) expect(isPrereleaseSortKey(key)).toBe(true);
    for (const key of ['', '~~', '3', '1', '12', '121', '11a', '2abc', '2!', '212!', '1100', '1201', "2a'!", 'x'.repeat(300)])
      expect([key, isPrereleaseSortKey(key)]).toEqual([key, false]);
  });
});
