import type { Keyset } from '@/common/pagination/pagination';
import { parseRowId } from '@/common/pagination/pagination';
import { isPrereleaseSortKey, MAX_VERSION_NUMBER } from './semver-key';

/** A position in the version lists: (major, minor, patch, prerelease sort key, id). */
export type VersionPosition = [number, number, number, string, string];

/** What `after` hands the list source: rows strictly below this position in the order. */
export interface VersionsAfter {
  readonly below: VersionPosition;
}

interface OrderedRow {
  id: string;
  versionMajor: number;
  versionMinor: number;
  versionPatch: number;
  versionPrereleaseSortKey: string;
}

const isVersionNumber = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_VERSION_NUMBER;

/**
 * Both version lists' keyset: semver precedence, newest first, then id, i.e.
 * (versionMajor, versionMinor, versionPatch, versionPrereleaseSortKey COLLATE "C", id) descending.
 * The order is written in SQL by the repository (Prisma's orderBy cannot name a collation; the
 * column's own collation is "C"); `orderBy` states it for readers. Each list has its own tag
 * ('module-versions', 'module-version-summaries'): like every list, it refuses the other's cursors.
 */
const keyset = (list: string): Keyset<OrderedRow, VersionPosition> => ({
  list,
  orderBy: [{ versionMajor: 'desc' }, { versionMinor: 'desc' }, { versionPatch: 'desc' }, { versionPrereleaseSortKey: 'desc' }, { id: 'desc' }],
  position: (row) => [row.versionMajor, row.versionMinor, row.versionPatch, row.versionPrereleaseSortKey, row.id],
  parse: (values) => {
    if (values.length !== 5) return undefined;
    const [major, minor, patch, key, id] = values;
    if (!isVersionNumber(major) || !isVersionNumber(minor) || !isVersionNumber(patch) || !isPrereleaseSortKey(key)) return undefined;
    const rowId = parseRowId(id);
    return rowId ? [major, minor, patch, key, rowId] : undefined;
  },
  after: (position): VersionsAfter => ({ below: position }),
});

export const MODULE_VERSION_KEYSET = keyset('module-versions');
export const MODULE_VERSION_SUMMARY_KEYSET = keyset('module-version-summaries');
