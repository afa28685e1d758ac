import { Injectable } from '@nestjs/common';
import type { RenderedPage } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import type { VersionPosition, VersionsAfter } from './module-versions.keyset';
import { RELEASE_SORT_KEY, type VersionColumns } from './semver-key';

/** The filters of both version lists, already validated. */
export interface VersionListFilter {
  organizationId: string;
  /** Only these definitions (1 to 50, deduplicated); undefined for every visible definition. */
  definitionIds?: string[];
  /** Inclusive lower bound by precedence. */
  minVersion?: VersionColumns;
  releasesOnly: boolean;
}

/** A string column as a JSON string: Postgres escapes as JSON.stringify does (", \, \b \f \n \r \t, other control characters as lowercase \u00xx, everything else as is). */
const str = (column: string) => `to_json(r."${column}")::text`;
/** An instant as `Date.toISOString()` writes it, quoted (the columns are UTC `timestamp(3)`). */
const iso = (column: string) => `'"' || to_char(r."${column}", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`;
/** `,"column":value`, or nothing when the column is NULL (a NULL concatenated is NULL). */
const optional = (column: string, value: string) => `coalesce(',"${column}":' || ${value}, '')`;
/**
 * The fields both DTOs share, as the JSON text of an object without its closing brace: the keys in
 * the order of `common()` in dto/module-version.dto.ts, createdById and organizationId absent when
 * null, no spaces: what JSON.stringify writes for the DTO. Concatenated, which Postgres does in
 * about half the time of json_build_object + json_strip_nulls.
 */
const COMMON_JSON = `'{"id":' || ${str('id')} || ',"moduleDefinitionId":' || ${str('moduleDefinitionId')} || ',"version":' || ${str('version')}
  || ',"description":' || ${str('description')} || ',"createdAt":' || ${iso('createdAt')} || ',"updatedAt":' || ${iso('updatedAt')}
  || ${optional('createdById', str('createdById'))} || ${optional('organizationId', str('organizationId'))}`;
/** A row `r`'s ModuleVersionSummaryDto as JSON text (its fields in the class's order; versionPrereleaseRank absent for releases). */
const SUMMARY_JSON = Prisma.raw(`${COMMON_JSON} || ',"versionMajor":' || r."versionMajor" || ',"versionMinor":' || r."versionMinor"
  || ',"versionPatch":' || r."versionPatch" || ',"versionPrereleaseSortKey":' || ${str('versionPrereleaseSortKey')}
  || ${optional('versionPrereleaseRank', 'r."versionPrereleaseRank"')} || '}'`);
/**
 * A row `r`'s ModuleVersionDto as JSON text: the common fields, then `config` as Postgres writes
 * jsonb (spaced, in its own key order), so the service parses the page: JSON.parse then
 * JSON.stringify gives the bytes the API always sent for a config.
 */
const FULL_JSON = Prisma.raw(`${COMMON_JSON} || ',"config":' || r."config"::text || '}'`);
const ROW_COLUMNS = Prisma.sql`v."id", v."moduleDefinitionId", v."organizationId", v."version", v."description", v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."versionPrereleaseRank", v."createdById", v."createdAt", v."updatedAt"`;
const ORDER = Prisma.sql`v."versionMajor" DESC, v."versionMinor" DESC, v."versionPatch" DESC, v."versionPrereleaseSortKey" DESC, v."id" DESC`;
const ORDER_K = Prisma.sql`k."versionMajor" DESC, k."versionMinor" DESC, k."versionPatch" DESC, k."versionPrereleaseSortKey" DESC, k."id" DESC`;
/** The order columns, all in the order indexes: a page's ids come from index-only scans. */
const KEY_COLUMNS = Prisma.sql`v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."id"`;

/** The one row of `pageSql`: the last* columns are null unless the page has `limit` rows. */
interface RenderedRow {
  total: number;
  rows: number;
  data: string | null;
  lastMajor: number | null;
  lastMinor: number | null;
  lastPatch: number | null;
  lastKey: string | null;
  lastId: string | null;
}

/**
 * All database access of module versions' lists. Every query takes the caller's organization: rows
 * are the organization's or global (organizationId NULL), never another organization's.
 *
 * Each page is read as bounded ordered index scans, never by sorting a definition's versions:
 * - with one definition id (the common call): its first `take` entries of
 *   ModuleVersion_definition_semver_order_idx read backwards from the cursor, if it is visible;
 * - with several: for each visible one (LATERAL) the first `take` entries of
 *   ModuleVersion_definition_semver_order_idx read backwards from the cursor, then the top `take`
 *   of those at most 50 x `take` entries;
 * - without: the organization's entries of ModuleVersion_organization_semver_order_idx and the
 *   global ones of ModuleVersion_global_semver_order_idx (partial, organizationId IS NULL), each
 *   the first `take` backwards, merged.
 * Then only the page's rows are read from the table, and Postgres renders them as the DTOs' JSON
 * text, with the total beside them: one statement and one result row per request.
 */
@Injectable()
export class ModuleVersionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * One page, rendered: the page's rows (at most `limit`) as the comma-separated JSON text of their
   * DTOs, the total under the filters, and the position of the page's last row when another follows.
   * One statement, one row: Node neither maps rows nor converts dates.
   */
  async page(filter: VersionListFilter, withConfig: boolean, after: VersionsAfter | undefined, limit: number): Promise<RenderedPage<VersionPosition>> {
    // Sent straight to the pool behind Prisma, prepared once per connection like GET /projects'
    // statement (newestFirstFromSql): the values are ints and text, read alike by pg and Prisma.
    const statement = this.pageSql(filter, withConfig, after, limit);
    const {
      rows: [row],
    } = await this.prisma.sql.query<RenderedRow>({ text: statement.text, values: statement.values });
    const more = row.rows > limit;
    return {
      data: row.data ?? '',
      totalCount: row.total,
      next: more ? [row.lastMajor as number, row.lastMinor as number, row.lastPatch as number, row.lastKey as string, row.lastId as string] : undefined,
    };
  }

  /** The count query: the definitions' counters when whole definitions are listed, else index-only scans of the order indexes. */
  countSql(filter: VersionListFilter): Prisma.Sql {
    const conditions = this.filters(filter, undefined);
    if (filter.definitionIds && !filter.minVersion) {
      // Whole definitions: their counters (kept by a trigger on ModuleVersion), one row per definition.
      const column = Prisma.raw(filter.releasesOnly ? '"releaseCount"' : '"versionCount"');
      return Prisma.sql`SELECT coalesce(sum(md.${column}), 0)::int AS count FROM "ModuleDefinition" md
        WHERE md."id" = ANY(${filter.definitionIds}::text[]) AND (md."organizationId" = ${filter.organizationId} OR md."organizationId" IS NULL)`;
    }
    if (filter.definitionIds) {
      return Prisma.sql`SELECT count(*)::int AS count FROM "ModuleVersion" v
        WHERE v."moduleDefinitionId" ${this.inVisibleDefinitions(filter.definitionIds, filter.organizationId)} AND ${conditions}`;
    }
    return Prisma.sql`SELECT ((SELECT count(*) FROM "ModuleVersion" v WHERE v."organizationId" = ${filter.organizationId} AND ${conditions})
      + (SELECT count(*) FROM "ModuleVersion" v WHERE v."organizationId" IS NULL AND ${conditions}))::int AS count`;
  }

  /**
   * The statement `page` runs (exported for the benchmark's EXPLAIN): the page's ids are chosen from
   * the order indexes alone (every condition is on their columns), `limit + 1` of them to know
   * whether another page follows; only those rows are read in full and rendered as JSON.
   */
  pageSql(filter: VersionListFilter, withConfig: boolean, after: VersionsAfter | undefined, limit: number): Prisma.Sql {
    const take = limit + 1;
    const conditions = this.filters(filter, after);
    const ids = filter.definitionIds;
    let keys: Prisma.Sql;
    if (ids?.length === 1) {
      // The common call: one definition, one bounded backward scan of its order index.
      keys = Prisma.sql`SELECT ${KEY_COLUMNS} FROM "ModuleVersion" v
        WHERE v."moduleDefinitionId" ${this.inVisibleDefinitions(ids, filter.organizationId)} AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int`;
    } else if (ids) {
      keys = Prisma.sql`SELECT k.* FROM (${this.visibleDefinitions(ids, filter.organizationId)}) AS d("id") CROSS JOIN LATERAL (
            SELECT ${KEY_COLUMNS} FROM "ModuleVersion" v WHERE v."moduleDefinitionId" = d."id" AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int
          ) k ORDER BY ${ORDER_K} LIMIT ${take}::int`;
    } else {
      keys = Prisma.sql`(SELECT ${KEY_COLUMNS} FROM "ModuleVersion" v WHERE v."organizationId" = ${filter.organizationId} AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int)
          UNION ALL
          (SELECT ${KEY_COLUMNS} FROM "ModuleVersion" v WHERE v."organizationId" IS NULL AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int)
          ORDER BY 1 DESC, 2 DESC, 3 DESC, 4 DESC, 5 DESC LIMIT ${take}::int`;
    }
    // Position of the page's last row (row `limit`): the next page's cursor when row `limit + 1` exists.
    const atLast = (column: string) => Prisma.sql`min(r.${Prisma.raw(`"${column}"`)}) FILTER (WHERE r.n = ${limit}::int)`;
    // Each row's JSON is built inside the aggregate, whose FILTER skips row `limit + 1`.
    return Prisma.sql`SELECT (${this.countSql(filter)}) AS "total", count(*)::int AS "rows",
        string_agg(${withConfig ? FULL_JSON : SUMMARY_JSON}, ',' ORDER BY r.n) FILTER (WHERE r.n <= ${limit}::int) AS "data",
        ${atLast('versionMajor')} AS "lastMajor", ${atLast('versionMinor')} AS "lastMinor", ${atLast('versionPatch')} AS "lastPatch",
        ${atLast('versionPrereleaseSortKey')} AS "lastKey", ${atLast('id')} AS "lastId"
      FROM (SELECT row_number() OVER (ORDER BY ${ORDER}) AS n, ${withConfig ? Prisma.sql`${ROW_COLUMNS}, v."config"` : ROW_COLUMNS}
        FROM (${keys}) k JOIN "ModuleVersion" v ON v."id" = k."id") r`;
  }

  /** The requested definitions the organization may see (its own and global ones). */
  private visibleDefinitions(ids: string[], organizationId: string): Prisma.Sql {
    return Prisma.sql`SELECT md."id" FROM "ModuleDefinition" md WHERE md."id" = ANY(${ids}::text[]) AND (md."organizationId" = ${organizationId} OR md."organizationId" IS NULL)`;
  }

  /** `= the one visible definition` or `IN (the visible definitions)`, for a condition on v."moduleDefinitionId". */
  private inVisibleDefinitions(ids: string[], organizationId: string): Prisma.Sql {
    return ids.length === 1
      ? Prisma.sql`= (SELECT md."id" FROM "ModuleDefinition" md WHERE md."id" = ${ids[0]} AND (md."organizationId" = ${organizationId} OR md."organizationId" IS NULL))`
      : Prisma.sql`IN (${this.visibleDefinitions(ids, organizationId)})`;
  }

  private filters(filter: VersionListFilter, after: VersionsAfter | undefined): Prisma.Sql {
    const parts: Prisma.Sql[] = [Prisma.sql`TRUE`];
    if (filter.minVersion) {
      const m = filter.minVersion;
      parts.push(
        Prisma.sql`(v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey") >= (${m.versionMajor}::int, ${m.versionMinor}::int, ${m.versionPatch}::int, ${m.versionPrereleaseSortKey}::text)`,
      );
    }
    // A release's key is '~' (an index column, unlike versionPrereleaseRank).
    if (filter.releasesOnly) parts.push(Prisma.sql`v."versionPrereleaseSortKey" = ${RELEASE_SORT_KEY}::text`);
    if (after) {
      const [major, minor, patch, key, id] = after.below;
      parts.push(
        Prisma.sql`(v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."id") < (${major}::int, ${minor}::int, ${patch}::int, ${key}::text, ${id}::text)`,
      );
    }
    return Prisma.join(parts, ' AND ');
  }
}
