/**
 * Semantic versions as sortable database columns. `parseVersion` reads a version string (the spec's
 * pattern, semver 2.0.0 rules) into the five columns a module version stores; comparing those
 * columns as (versionMajor, versionMinor, versionPatch, versionPrereleaseSortKey) — integers
 * numerically, the key by bytes (Postgres `COLLATE "C"`) — is exactly semver precedence. Build
 * metadata is kept in the version string and plays no part. Pure: no Nest, Prisma or I/O.
 *
 * The prerelease sort key is a concatenation of one token per dot-separated identifier:
 * - numeric identifier  `1` + its digit count as one base-62 character + the digits
 *   (no leading zeros, so a longer number is larger and equal lengths compare digit by digit);
 * - alphanumeric one    `2` + the identifier + `!` (`!` sorts below every identifier character,
 *   so `alpha` < `alpha-1` < `alphab`; ASCII order as semver's string comparison);
 * and a release is the single character `~`, above `1` and `2`, so it follows all of its prereleases.
 * A list that is a prefix of another ends first and so sorts first. Numeric before alphanumeric:
 * `1` < `2`.
 */

/** The spec's version pattern. */
export const VERSION_PATTERN = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
/** Longest version string accepted (keeps sort keys, indexes and cursors small). */
export const MAX_VERSION_LENGTH = 128;
/** Largest major, minor and patch: they are stored as Postgres `integer`, and a larger one is refused rather than stored out of order. */
export const MAX_VERSION_NUMBER = 2_147_483_647;
/** Longest numeric prerelease identifier, in digits (its length is one base-62 character of the key). */
export const MAX_NUMERIC_IDENTIFIER_DIGITS = 61;
/** The sort key of a release (no prerelease part). */
export const RELEASE_SORT_KEY = '~';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const NUMERIC = /^(?:0|[1-9]\d*)$/;
const ALL_DIGITS = /^\d+$/;

export interface ParsedVersion {
  major: number;
  minor: number;
  patch: number;
  /** Dot-separated prerelease identifiers; empty for a release. */
  prerelease: string[];
  /** Build metadata identifiers, ignored for precedence. */
  build: string[];
  /** The five stored ordering columns. */
  columns: VersionColumns;
}

export interface VersionColumns {
  versionMajor: number;
  versionMinor: number;
  versionPatch: number;
  versionPrereleaseSortKey: string;
  /** The number of prerelease identifiers (`1.0.0-rc` 1, `1.0.0-rc.2` 2); null for a release. */
  versionPrereleaseRank: number | null;
}

export type VersionParseResult = { ok: true; version: ParsedVersion } | { ok: false; reason: string };

function versionNumber(text: string, name: string): number | string {
  if (!NUMERIC.test(text)) return `${name} must not have leading zeros`;
  if (text.length > 10 || Number(text) > MAX_VERSION_NUMBER) return `${name} must be at most ${MAX_VERSION_NUMBER}`;
  return Number(text);
}

/** The sort key of a prerelease's identifiers (an empty list is a release). Identifiers must already be valid. */
export function prereleaseSortKey(identifiers: readonly string[]): string {
  if (identifiers.length === 0) return RELEASE_SORT_KEY;
  return identifiers.map((id) => (ALL_DIGITS.test(id) ? `1${BASE62[id.length]}${id}` : `2${id}!`)).join('');
}

/** Reads a version string under the spec's pattern and semver 2.0.0; a reason when it is not one this API stores. */
export function parseVersion(text: string): VersionParseResult {
  if (typeof text !== 'string' || text.length > MAX_VERSION_LENGTH) return { ok: false, reason: `must be at most ${MAX_VERSION_LENGTH} characters` };
  if (!VERSION_PATTERN.test(text)) return { ok: false, reason: 'must be a semantic version such as 1.4.0, 2.0.0-rc.1 or 1.0.0+build.5' };
  const plus = text.indexOf('+');
  const core = plus === -1 ? text : text.slice(0, plus);
  const build = plus === -1 ? [] : text.slice(plus + 1).split('.');
  const dash = core.indexOf('-');
  const [majorText, minorText, patchText] = (dash === -1 ? core : core.slice(0, dash)).split('.');
  const prerelease = dash === -1 ? [] : core.slice(dash + 1).split('.');
  const numbers = [versionNumber(majorText, 'major'), versionNumber(minorText, 'minor'), versionNumber(patchText, 'patch')];
  const problem = numbers.find((n): n is string => typeof n === 'string');
  if (problem) return { ok: false, reason: problem };
  for (const id of prerelease) {
    if (ALL_DIGITS.test(id) && !NUMERIC.test(id)) return { ok: false, reason: `numeric prerelease identifier ${id} must not have leading zeros` };
    if (ALL_DIGITS.test(id) && id.length > MAX_NUMERIC_IDENTIFIER_DIGITS)
      return { ok: false, reason: `numeric prerelease identifiers have at most ${MAX_NUMERIC_IDENTIFIER_DIGITS} digits` };
  }
  const [major, minor, patch] = numbers as number[];
  return {
    ok: true,
    version: {
      major,
      minor,
      patch,
      prerelease,
      build,
      columns: {
        versionMajor: major,
        versionMinor: minor,
        versionPatch: patch,
        versionPrereleaseSortKey: prereleaseSortKey(prerelease),
        versionPrereleaseRank: prerelease.length === 0 ? null : prerelease.length,
      },
    },
  };
}

/** True for a string `prereleaseSortKey` can return (used to validate cursors). */
export function isPrereleaseSortKey(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2 * MAX_VERSION_LENGTH) return false;
  if (value === RELEASE_SORT_KEY) return true;
  let at = 0;
  while (at < value.length) {
    if (value[at] === '1') {
      const digits = BASE62.indexOf(value[at + 1] ?? '');
      const number = value.slice(at + 2, at + 2 + digits);
      if (digits < 1 || digits > MAX_NUMERIC_IDENTIFIER_DIGITS || number.length !== digits || !NUMERIC.test(number)) return false;
      at += 2 + digits;
    } else if (value[at] === '2') {
      const end = value.indexOf('!', at + 1);
      const identifier = end === -1 ? '' : value.slice(at + 1, end);
      if (!/^[0-9A-Za-z-]+$/.test(identifier) || ALL_DIGITS.test(identifier)) return false;
      at = end + 1;
    } else return false;
  }
  return true;
}

/** Byte order of two keys, as Postgres compares them under `COLLATE "C"` (all characters are ASCII). */
export function compareSortKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Semver precedence from the stored columns: negative, zero or positive, like `semver.compare`. */
export function compareColumns(a: VersionColumns, b: VersionColumns): number {
  return (
    a.versionMajor - b.versionMajor ||
    a.versionMinor - b.versionMinor ||
    a.versionPatch - b.versionPatch ||
    compareSortKeys(a.versionPrereleaseSortKey, b.versionPrereleaseSortKey)
  );
}
