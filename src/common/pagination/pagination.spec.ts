import { AppError } from '@/common/errors/app-error';
import { decodeCursor, encodeCursor, paginate, type ListSource } from './pagination';

describe('keyset cursors', () => {
  it('round-trips a position', () => {
    const position = { createdAt: new Date('2026-01-02T03:04:05.678Z'), id: '01a2-xyz' };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
  });

  it.each(['', '!!!', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["not a date","x"]').toString('base64url'), Buffer.from('["2026-01-01T00:00:00Z",""]').toString('base64url')])(
    'rejects %p as INVALID_CURSOR',
    (cursor) => {
      expect(() => decodeCursor(cursor)).toThrow(AppError);
      try {
        decodeCursor(cursor);
      } catch (error) {
        expect((error as AppError).entry.code).toBe('dpa:Pagination:INVALID_CURSOR');
      }
    },
  );
});

describe(paginate.name, () => {
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: `id-${i}`, createdAt: new Date(1000 * i) }));
  // An in-memory source that applies the keyset condition paginate() builds.
  const source: ListSource<(typeof rows)[number]> = {
    fetch: async (keyset, take) => {
      const filter = (keyset as { OR: [{ createdAt: { lt: Date } }, { createdAt: Date; id: { lt: string } }] } | undefined)?.OR;
      const sorted = [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id));
      const after = filter ? sorted.filter((r) => r.createdAt < filter[0].createdAt.lt || (r.createdAt.getTime() === filter[1].createdAt.getTime() && r.id < filter[1].id.lt)) : sorted;
      return { rows: after.slice(0, take), totalCount: rows.length };
    },
  };

  it('asks for one row more than the page to know whether another page exists', async () => {
    const page = await paginate(source, { limit: 5 }, (r) => r.id);
    expect(page.data).toHaveLength(5);
    expect(page.meta).toEqual({ limit: 5, totalCount: 5 });
  });

  it('sets nextCursor only when more rows follow', async () => {
    const first = await paginate(source, { limit: 3 }, (r) => r.id);
    expect(first.data).toEqual(['id-4', 'id-3', 'id-2']);
    const second = await paginate(source, { limit: 3, cursor: first.meta.nextCursor }, (r) => r.id);
    expect(second.data).toEqual(['id-1', 'id-0']);
    expect(second.meta.nextCursor).toBeUndefined();
  });
});
