import { Injectable } from '@nestjs/common';
import type { RenderedPage } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import type { VersionPosition, VersionsAfter } from './module-versions.keyset';
import { type ModuleVersionTextRow, summaryJson, versionJson } from './module-version-json';
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

const ROW_COLUMNS = Prisma.sql`v."id", v."moduleDefinitionId", v."organizationId", v."version", v."description", v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."versionPrereleaseRank", v."createdById", v."createdAt", v."updatedAt"`;
const ORDER = Prisma.sql`v."versionMajor" DESC, v."versionMinor" DESC, v."versionPatch" DESC, v."versionPrereleaseSortKey" DESC, v."id" DESC`;
const ORDER_P = Prisma.sql`p."versionMajor" DESC, p."versionMinor" DESC, p."versionPatch" DESC, p."versionPrereleaseSortKey" DESC, p."id" DESC`;
const ORDER_K = Prisma.sql`k."versionMajor" DESC, k."versionMinor" DESC, k."versionPatch" DESC, k."versionPrereleaseSortKey" DESC, k."id" DESC`;
/** The order columns, all in the order indexes: a page's ids come from index-only scans. */
const KEY_COLUMNS = Prisma.sql`v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."id"`;

/** Every column as the text Postgres sends: no row is parsed or mapped (module-version-json.ts renders them). */
const AS_TEXT = { getTypeParser: () => (text: string) => text };

/** A row of `pageSql`: the total beside each page row; one row of NULLs beside it when the page is empty. */
type PageRow = Omit<ModuleVersionTextRow, 'id'> & { total: string; id: string | null };

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
 * Then only the page's rows are read from the table, with the total beside them: one statement per
 * request. The rows come back as Postgres' text, unparsed, and module-version-json.ts writes the
 * DTOs' JSON from that text: no Date, no row object mapped, no JSON built by Postgres (which was
 * about 40% of the single-definition statement's time).
 */
@Injectable()
export class ModuleVersionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * One page, rendered: the page's rows (at most `limit`) as the comma-separated JSON text of their
   * DTOs, the total under the filters, and the position of the page's last row when another follows.
   */
  async page(filter: VersionListFilter, withConfig: boolean, after: VersionsAfter | undefined, limit: number): Promise<RenderedPage<VersionPosition>> {
    // Sent straight to the pool behind Prisma, prepared once per connection like GET /projects'
    // statement (newestFirstFromSql): the values are ints and text, read alike by pg and Prisma.
    const statement = this.pageSql(filter, withConfig, after, limit);
    const { rows } = await this.prisma.sql.query<PageRow>({ text: statement.text, values: statement.values, types: AS_TEXT });
    const render = withConfig ? versionJson : summaryJson;
    const count = rows[0].id === null ? 0 : Math.min(rows.length, limit);
    let data = '';
    for (let i = 0; i < count; i++) data += (i ? ',' : '') + render(rows[i] as ModuleVersionTextRow);
    const last = rows[count - 1];
    return {
      data,
      totalCount: Number(rows[0].total),
      next:
        rows.length > limit
          ? [Number(last.versionMajor), Number(last.versionMinor), Number(last.versionPatch), last.versionPrereleaseSortKey, last.id as string]
          : undefined,
    };
  }

  /**
   * The count query, from counters kept by triggers on ModuleVersion wherever they answer it: whole
   * definitions' from the definitions' counters, every visible version's from the organization's and
   * the global owner counters, from a lower bound the later (major, minor) pairs' counters and one
   * pair's index entries; else index-only scans of the order indexes.
   */
  countSql(filter: VersionListFilter): Prisma.Sql {
    if (!filter.minVersion && filter.definitionIds) {
      // Whole definitions: one counter row per definition.
      return Prisma.sql`SELECT coalesce(sum(md.${this.counter(filter)}), 0)::int AS count FROM "ModuleDefinition" md
        WHERE md."id" = ANY(${filter.definitionIds}::text[]) AND (md."organizationId" = ${filter.organizationId} OR md."organizationId" IS NULL)`;
    }
    if (!filter.minVersion) {
      // Every visible version: the organization's row and the global one ('').
      return Prisma.sql`SELECT coalesce(sum(c.${this.counter(filter)}), 0)::int AS count FROM "ModuleVersionOwnerCount" c
        WHERE c."ownerId" IN (${filter.organizationId}, '')`;
    }
    const m = filter.minVersion;
    const conditions = this.filters(filter, undefined);
    if (filter.definitionIds) {
      // Definitions from a lower bound (the API asks it of one): the later (major, minor) pairs from
      // their counters (kept by a trigger on ModuleVersion), the bound's own pair counted over the order
      // index. Not every version above the bound, which is thousands of index entries for a busy definition.
      const definition = this.inVisibleDefinitions(filter.definitionIds, filter.organizationId);
      return Prisma.sql`SELECT (coalesce((SELECT sum(c.${this.counter(filter)}) FROM "ModuleVersionMinorCount" c
          WHERE c."moduleDefinitionId" ${definition} AND (c."versionMajor", c."versionMinor") > (${m.versionMajor}::int, ${m.versionMinor}::int)), 0)
        + (SELECT count(*) FROM "ModuleVersion" v WHERE v."moduleDefinitionId" ${definition} AND v."versionMajor" = ${m.versionMajor}::int
          AND v."versionMinor" = ${m.versionMinor}::int AND ${conditions}))::int AS count`;
    }
    // Every visible version from a lower bound (the API refuses minVersion without a definition): the
    // order indexes' entries at or above it.
    return Prisma.sql`SELECT ((SELECT count(*) FROM "ModuleVersion" v WHERE v."organizationId" = ${filter.organizationId} AND ${conditions})
      + (SELECT count(*) FROM "ModuleVersion" v WHERE v."organizationId" IS NULL AND ${conditions}))::int AS count`;
  }

  /**
   * The statement `page` runs (exported for the benchmark's EXPLAIN): the page's ids are chosen from
   * the order indexes alone (every condition is on their columns), `limit + 1` of them to know
   * whether another page follows; only those rows are read in full, in order, each beside the total.
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
    // The total is one row joined to the page (LATERAL), so an empty page still carries it.
    return Prisma.sql`SELECT t."total", p.* FROM (SELECT (${this.countSql(filter)}) AS "total") t
      LEFT JOIN LATERAL (SELECT ${withConfig ? Prisma.sql`${ROW_COLUMNS}, v."config"` : ROW_COLUMNS} FROM (${keys}) k JOIN "ModuleVersion" v ON v."id" = k."id") p ON true
      ORDER BY ${ORDER_P}`;
  }

  /** The counter column of the filter's versions: all of them, or the releases. */
  private counter(filter: VersionListFilter): Prisma.Sql {
    return Prisma.raw(filter.releasesOnly ? '"releaseCount"' : '"versionCount"');
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
