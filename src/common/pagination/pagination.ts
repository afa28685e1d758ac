import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { AppError } from '@/common/errors/app-error';
import { PaginationErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';
import { ROW_ID } from '@/common/http/row-id';
import pg from 'pg';
import type { SqlPool } from '@/common/prisma/prisma.service';
import { utcTimestamp } from '@/common/prisma/utc-timestamp';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const MAX_CURSOR_LENGTH = 512;

export class PaginationQueryDto {
  @ApiPropertyOptional({
    description: 'Opaque cursor from `meta.nextCursor` of the previous page of the same list',
    maxLength: MAX_CURSOR_LENGTH,
    pattern: '^[A-Za-z0-9_-]+$',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_CURSOR_LENGTH)
  @Matches(/^[A-Za-z0-9_-]+$/, { message: 'is not a cursor this list issued' })
  cursor?: string;

  @ApiPropertyOptional({ description: 'Page size', type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  // Only plain decimal digits (an empty value means the default): Number() would also take '0x10', '1e1' or ' 5'.
  @Transform(({ value }) => (value === '' ? undefined : typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value))
  @IsInt({ message: 'must be an integer from 1 to 100' })
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;
}

export class PageMetaDto {
  @ApiProperty({ description: 'page size applied', type: 'integer' }) limit: number;
  @ApiPropertyOptional({ description: 'cursor for the next page; absent on the last page' }) nextCursor?: string;
  @ApiProperty({ description: 'total number of items under the same filters', type: 'integer' }) totalCount: number;
}

export interface Page<T> {
  data: T[];
  meta: PageMetaDto;
}

/**
 * How one list is ordered and resumed: the contract every paginated list states. A cursor is the
 * list's tag followed by the order columns' values at the last row of a page; `parse` validates
 * those values in full (types, ranges, shapes) before any query runs, and `after` turns them into
 * the condition "rows strictly after this position in this order".
 */
export interface Keyset<Row, Position extends readonly unknown[]> {
  /** Names the list; a cursor issued by another list is refused. */
  readonly list: string;
  /** The order, ending in a unique column so that it is total. */
  readonly orderBy: readonly object[];
  /** The order columns' values at a row, as JSON values. */
  position(row: Row): Position;
  /** The position from a cursor's JSON values, or undefined when they are not one this list issues. */
  parse(values: readonly unknown[]): Position | undefined;
  /** The condition selecting the rows after `position`. */
  after(position: Position): object;
}

function invalidCursor(): AppError {
  return new AppError(PaginationErrors.INVALID_CURSOR, {
    details: [invalidFields(['cursor: is not a cursor this list issued'], 'Invalid query parameters')],
    metadata: { field: 'cursor' },
  });
}

export function encodeCursor<Position extends readonly unknown[]>(keyset: Keyset<never, Position>, position: Position): string {
  return Buffer.from(JSON.stringify([keyset.list, ...position])).toString('base64url');
}

/** Decodes and validates a cursor of `keyset`'s list; anything else is a 400 INVALID_CURSOR. */
export function decodeCursor<Position extends readonly unknown[]>(keyset: Keyset<never, Position>, cursor: string): Position {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed[0] !== keyset.list) throw invalidCursor();
  const position = keyset.parse(parsed.slice(1));
  if (!position) throw invalidCursor();
  return position;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A timestamp as this service writes it: ISO 8601 UTC with milliseconds, years 0001-9999 (inside Postgres' range). */
export function parseInstant(value: unknown): Date | undefined {
  if (typeof value !== 'string' || !ISO_INSTANT.test(value) || value.startsWith('0000')) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) || date.toISOString() !== value ? undefined : date;
}

/** A row id as this service issues them (UUIDs), or undefined. */
export function parseRowId(value: unknown): string | undefined {
  return typeof value === 'string' && ROW_ID.test(value) ? value : undefined;
}

/** Newest first by (createdAt, id): the order of most lists, stable while rows are added. */
export function newestFirst<Row extends { createdAt: Date; id: string }>(list: string): Keyset<Row, [string, string]> {
  return {
    list,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    position: (row) => [row.createdAt.toISOString(), row.id],
    parse: (values) => {
      if (values.length !== 2) return undefined;
      const createdAt = parseInstant(values[0]);
      const id = parseRowId(values[1]);
      return createdAt && id ? [values[0] as string, id] : undefined;
    },
    after: ([createdAt, id]) => {
      const at = new Date(createdAt);
      return { OR: [{ createdAt: { lt: at } }, { createdAt: at, id: { lt: id } }] };
    },
  };
}

/** Where a list's rows come from: one page under an "after" condition in an order, and the total under the list's filter. */
export interface ListSource<Row> {
  /** `after` is the keyset's condition (for Prisma sources); `position` the decoded cursor itself (for SQL sources). */
  fetch(after: object | undefined, take: number, orderBy: readonly object[], position?: readonly unknown[]): Promise<{ rows: Row[]; totalCount: number }>;
}

interface FindManyDelegate<Row> {
  findMany(args: { where: object; orderBy: object[]; take: number }): Promise<Row[]>;
  count(args: { where: object }): Promise<number>;
}

/** Rows of one model under `where`: page and count as two queries. */
export function fromModel<Row>(delegate: FindManyDelegate<Row>, where: object): ListSource<Row> {
  return {
    async fetch(after, take, orderBy) {
      const [rows, totalCount] = await Promise.all([
        delegate.findMany({ where: after ? { AND: [where, after] } : where, orderBy: [...orderBy], take }),
        delegate.count({ where }),
      ]);
      return { rows, totalCount };
    },
  };
}

/** timestamp(3) (without time zone, stored as UTC), read as Prisma reads it (utcTimestamp). */
const TIMESTAMP_OID = 1114;
const JSONB_OID = 3802;
const JSON_OID = 114;

/**
 * One organization's rows of one table, newest first, with the page and the total in ONE SQL
 * statement (the count as a subquery, the page joined to it LATERAL), sent straight to the pool
 * behind Prisma as a prepared statement: one round trip, and none of the Prisma client's work per
 * query (bench:api found the client's runtime the largest cost left on the list path). Values
 * come out as Prisma's would: timestamps as UTC Dates, jsonb parsed, text as strings. `columns`
 * must give every field of `Row` under its Prisma name (enums cast to text), `table` is a
 * constant. For lists whose `newestFirst` keyset is the hot path; others use `fromModel`.
 */
export function newestFirstFromSql<Row>(pool: SqlPool, table: 'Project', columns: string, organizationId: string): ListSource<Row> {
  const statement = (
    after: boolean,
  ) => `SELECT total.n AS "__total", page.* FROM (SELECT count(*)::int AS n FROM "${table}" WHERE "organizationId" = $1) AS total
        LEFT JOIN LATERAL (
          SELECT ${columns} FROM "${table}" WHERE "organizationId" = $1 ${after ? 'AND ("createdAt", "id") < ($3::timestamp(3), $4)' : ''}
          ORDER BY "createdAt" DESC, "id" DESC LIMIT $2
        ) AS page ON true`;
  return {
    async fetch(_after, take, _orderBy, position) {
      const [createdAt, id] = (position ?? []) as [string | undefined, string | undefined];
      const after = Boolean(createdAt && id);
      const text = statement(after);
      const { rows } = await pool.query<Row & { __total: number; id: string | null }>({
        text,
        values: after ? [organizationId, take, createdAt, id] : [organizationId, take],
        types: SQL_TYPES,
      });
      const totalCount = rows[0]?.__total ?? 0;
      // An empty page is one row of NULLs beside the count.
      return { rows: rows.filter((row) => row.id !== null).map(({ __total: _total, ...row }) => row as unknown as Row), totalCount };
    },
  };
}

const SQL_TYPES = {
  getTypeParser(oid: number): (text: string) => unknown {
    if (oid === TIMESTAMP_OID) return utcTimestamp;
    if (oid === JSONB_OID || oid === JSON_OID) return JSON.parse as (text: string) => unknown;
    return pg.types.getTypeParser(oid);
  },
};

/**
 * One page of `source` in `keyset`'s order. The cursor is validated before any query; one row more
 * than the page is read to know whether another page follows. One helper for every list endpoint.
 */
export async function paginate<Row, Position extends readonly unknown[], Out>(
  source: ListSource<Row>,
  keyset: Keyset<Row, Position>,
  query: PaginationQueryDto,
  toDto: (row: Row) => Out,
): Promise<Page<Out>> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const position = query.cursor ? decodeCursor(keyset as Keyset<never, Position>, query.cursor) : undefined;
  const { rows, totalCount } = await source.fetch(position && keyset.after(position), limit + 1, keyset.orderBy, position);
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const meta: PageMetaDto = { limit, totalCount };
  if (hasMore) meta.nextCursor = encodeCursor(keyset as Keyset<never, Position>, keyset.position(pageRows[pageRows.length - 1]));
  return { data: pageRows.map(toDto), meta };
}

/**
 * One page already rendered: its rows' DTOs as JSON text, in order and comma-separated
 * (`''` when there are none), exactly the bytes JSON.stringify would write for them.
 */
export interface RenderedPage<Position> {
  data: string;
  totalCount: number;
  /** The position of the page's last row when another page follows; undefined on the last page. */
  next?: Position;
}

/**
 * `paginate` for a list whose source renders the rows itself (see RenderedPage): the cursor is decoded
 * and validated before any query, as there; `fetch` reads up to `limit` rows after the position.
 * Returns the body `{"data":[...],"meta":{...}}` as JSON text, byte for byte what `paginate`'s
 * page would serialize to (meta's keys in the same order: limit, totalCount, nextCursor).
 */
export async function paginateRendered<Position extends readonly unknown[]>(
  keyset: Keyset<never, Position>,
  query: PaginationQueryDto,
  fetch: (position: Position | undefined, limit: number) => Promise<RenderedPage<Position>>,
): Promise<string> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const position = query.cursor ? decodeCursor(keyset, query.cursor) : undefined;
  const page = await fetch(position, limit);
  const meta: PageMetaDto = { limit, totalCount: page.totalCount };
  if (page.next) meta.nextCursor = encodeCursor(keyset, page.next);
  return `{"data":[${page.data}],"meta":${JSON.stringify(meta)}}`;
}
