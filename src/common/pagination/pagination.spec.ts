import { AppError } from '@/common/errors/app-error';
import { decodeCursor, encodeCursor, newestFirst, paginate, paginateRendered, parseInstant, type ListSource } from './pagination';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return error instanceof AppError ? error.entry.code : 'not an AppError';
  }
  return undefined;
};

describe('keyset cursors', () => {
  const projects = newestFirst<{ createdAt: Date; id: string }>('projects');
  const apiKeys = newestFirst<{ createdAt: Date; id: string }>('apiKeys');
  const id = '019a0000-0000-7000-8000-000000000001';

  it('round-trips a position and carries the list tag', () => {
    const cursor = encodeCursor(projects, ['2026-01-02T03:04:05.678Z', id]);
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString())).toEqual(['projects', '2026-01-02T03:04:05.678Z', id]);
    expect(decodeCursor(projects, cursor)).toEqual(['2026-01-02T03:04:05.678Z', id]);
  });

  it('refuses a cursor issued by another list', () => {
    expect(codeOf(() => decodeCursor(projects, encodeCursor(apiKeys, ['2026-01-02T03:04:05.678Z', id])))).toBe('dpa:Pagination:INVALID_CURSOR');
  });

  it.each([
    ['empty', ''],
    ['not base64url', '!!!'],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['no tag', b64(['2026-01-01T00:00:00.000Z', id])],
    ['an object', b64({ a: 1 })],
    ['a date out of Postgres range', 'WyItMjcxODIxLTA0LTIwVDAwOjAwOjAwLjAwMFoiLCJ4Il0'],
    ['a negative year', 'WyItMDAwMDAxLTAxLTAxVDAwOjAwOjAwLjAwMFoiLCJ4Il0'],
    ['a tagged negative year', b64(['projects', '-000001-01-01T00:00:00.000Z', id])],
    ['year zero', b64(['projects', '0000-01-01T00:00:00.000Z', id])],
    ['a date that does not round-trip', b64(['projects', '2026-02-30T00:00:00.000Z', id])],
    ['a date without milliseconds', b64(['projects', '2026-01-01T00:00:00Z', id])],
    ['an id with NUL', b64(['projects', '2026-01-01T00:00:00.000Z', 'a\u0000b'])],
    ['an empty id', b64(['projects', '2026-01-01T00:00:00.000Z', ''])],
    ['an id of the wrong type', b64(['projects', '2026-01-01T00:00:00.000Z', 7])],
    ['too many values', b64(['projects', '2026-01-01T00:00:00.000Z', id, 'x'])],
    ['too long', 'A'.repeat(600)],
  ])('rejects %s as INVALID_CURSOR', (_label, cursor) => {
    expect(codeOf(() => decodeCursor(projects, cursor))).toBe('dpa:Pagination:INVALID_CURSOR');
  });

  it('reads instants only in the form it writes them, inside Postgres range', () => {
    expect(parseInstant('9999-12-31T23:59:59.999Z')?.getUTCFullYear()).toBe(9999);
    expect(parseInstant('0001-01-01T00:00:00.000Z')?.getUTCFullYear()).toBe(1);
    expect(parseInstant('+010000-01-01T00:00:00.000Z')).toBeUndefined();
  });
});

describe(paginate.name, () => {
  const keyset = newestFirst<{ createdAt: Date; id: string }>('things');
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: `id-${i}`, createdAt: new Date(1000 * i) }));
  // An in-memory source that applies the keyset condition paginate() builds.
  const source: ListSource<(typeof rows)[number]> = {
    fetch: async (after, take) => {
      const filter = (after as { OR: [{ createdAt: { lt: Date } }, { createdAt: Date; id: { lt: string } }] } | undefined)?.OR;
      const sorted = [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id));
      const rest = filter
        ? sorted.filter((r) => r.createdAt < filter[0].createdAt.lt || (r.createdAt.getTime() === filter[1].createdAt.getTime() && r.id < filter[1].id.lt))
        : sorted;
      return { rows: rest.slice(0, take), totalCount: rows.length };
    },
  };

  it('asks for one row more than the page to know whether another page exists', async () => {
    const page = await paginate(source, keyset, { limit: 5 }, (r) => r.id);
    expect(page.data).toHaveLength(5);
    expect(page.meta).toEqual({ limit: 5, totalCount: 5 });
  });

  it('sets nextCursor only when more rows follow', async () => {
    const first = await paginate(source, keyset, { limit: 3 }, (r) => r.id);
    expect(first.data).toEqual(['id-4', 'id-3', 'id-2']);
    const second = await paginate(source, keyset, { limit: 3, cursor: first.meta.nextCursor }, (r) => r.id);
    expect(second.data).toEqual(['id-1', 'id-0']);
    expect(second.meta.nextCursor).toBeUndefined();
  });

  it('validates the cursor before reading anything', async () => {
    let reads = 0;
    const counting: ListSource<(typeof rows)[number]> = { fetch: async (...args) => (reads++, source.fetch(...args)) };
    await expect(paginate(counting, keyset, { cursor: b64(['other', '2026-01-01T00:00:00.000Z', 'id-1']) }, (r) => r.id)).rejects.toBeInstanceOf(AppError);
    expect(reads).toBe(0);
  });
});

describe(paginateRendered.name, () => {
  const keyset = newestFirst<{ createdAt: Date; id: string }>('things');
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: `id-${4 - i}`, at: new Date(1000 * (4 - i)).toISOString(), note: `"${i}"\n` }));
  // A rendered source over the same rows, newest first: the JSON text of each row, and the last row's position when more follow.
  const fetch = async (position: [string, string] | undefined, limit: number) => {
    const rest = position ? rows.filter((r) => r.at < position[0]) : rows;
    const page = rest.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map((r) => JSON.stringify(r)).join(','),
      totalCount: rows.length,
      next: rest.length > limit ? ([last.at, last.id] as [string, string]) : undefined,
    };
  };

  it("writes the body paginate's page serializes to, byte for byte, on every page", async () => {
    const first = await paginateRendered(keyset, { limit: 2 }, fetch);
    const cursor = JSON.parse(first).meta.nextCursor;
    expect(first).toBe(
      JSON.stringify({ data: rows.slice(0, 2), meta: { limit: 2, totalCount: 5, nextCursor: encodeCursor(keyset, [rows[1].at, rows[1].id]) } }),
    );
    const last = await paginateRendered(keyset, { limit: 3, cursor }, fetch);
    expect(last).toBe(JSON.stringify({ data: rows.slice(2), meta: { limit: 3, totalCount: 5 } }));
    expect(await paginateRendered(keyset, {}, async () => ({ data: '', totalCount: 0 }))).toBe('{"data":[],"meta":{"limit":20,"totalCount":0}}');
  });

  it('validates the cursor before reading anything', async () => {
    let reads = 0;
    const counting = async (...args: Parameters<typeof fetch>) => (reads++, fetch(...args));
    await expect(paginateRendered(keyset, { cursor: b64(['other', '2026-01-01T00:00:00.000Z', 'id-1']) }, counting)).rejects.toBeInstanceOf(AppError);
    expect(reads).toBe(0);
  });
});
