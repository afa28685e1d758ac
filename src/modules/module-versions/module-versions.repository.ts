import { Injectable } from '@nestjs/common';
import type { ListSource } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import type { ModuleVersionRow } from './dto/module-version.dto';
import type { VersionsAfter } from './module-versions.keyset';
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

const SUMMARY_COLUMNS = Prisma.sql`v."id", v."moduleDefinitionId", v."organizationId", v."version", v."description", v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."versionPrereleaseRank", v."createdById", v."createdAt", v."updatedAt"`;
const FULL_COLUMNS = Prisma.sql`${SUMMARY_COLUMNS}, v."config"`;
const ORDER = Prisma.sql`v."versionMajor" DESC, v."versionMinor" DESC, v."versionPatch" DESC, v."versionPrereleaseSortKey" DESC, v."id" DESC`;
const ORDER_K = Prisma.sql`k."versionMajor" DESC, k."versionMinor" DESC, k."versionPatch" DESC, k."versionPrereleaseSortKey" DESC, k."id" DESC`;
/** The order columns, all in the order indexes: a page's ids come from index-only scans. */
const KEY_COLUMNS = Prisma.sql`v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."id"`;

/**
 * All Prisma access of module versions' lists. Every query takes the caller's organization: rows
 * are the organization's or global (organizationId NULL), never another organization's.
 *
 * Each page is read as bounded ordered index scans, never by sorting a definition's versions:
 * - with definition ids: for each visible one (LATERAL) the first `take` entries of
 *   ModuleVersion_definition_semver_order_idx read backwards from the cursor, then the top `take`
 *   of those at most 50 x `take` entries;
 * - without: the organization's entries of ModuleVersion_organization_semver_order_idx and the
 *   global ones of ModuleVersion_global_semver_order_idx (partial, organizationId IS NULL), each
 *   the first `take` backwards, merged.
 * Then only the page's rows are read from the table.
 */
@Injectable()
export class ModuleVersionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  source(filter: VersionListFilter, withConfig: boolean): ListSource<ModuleVersionRow> {
    return {
      // Page and total in one statement (the count beside the page, joined LATERAL): one round
      // trip and one client query per list request instead of two.
      fetch: async (after, take) => {
        const rows = await this.prisma.$queryRaw<(ModuleVersionRow & { __total: number; id: string | null })[]>(Prisma.sql`
          SELECT c."count" AS "__total", p.* FROM (${this.countSql(filter)}) AS c
          LEFT JOIN LATERAL (${this.pageSql(filter, withConfig, after as VersionsAfter | undefined, take)}) AS p ON true
          ORDER BY p."versionMajor" DESC, p."versionMinor" DESC, p."versionPatch" DESC, p."versionPrereleaseSortKey" DESC, p."id" DESC`);
        const totalCount = rows[0]?.__total ?? 0;
        // An empty page is one row of NULLs beside the count.
        return { rows: rows.filter((row) => row.id !== null).map(({ __total: _total, ...row }) => row as ModuleVersionRow), totalCount };
      },
    };
  }

  /** The count query (exported for the benchmark's EXPLAIN): index-only scans of the order indexes. */
  countSql(filter: VersionListFilter): Prisma.Sql {
    const conditions = this.filters(filter, undefined);
    if (filter.definitionIds) {
      return Prisma.sql`SELECT count(*)::int AS count FROM "ModuleVersion" v
        WHERE v."moduleDefinitionId" IN (${this.visibleDefinitions(filter)}) AND ${conditions}`;
    }
    return Prisma.sql`SELECT ((SELECT count(*) FROM "ModuleVersion" v WHERE v."organizationId" = ${filter.organizationId} AND ${conditions})
      + (SELECT count(*) FROM "ModuleVersion" v WHERE v."organizationId" IS NULL AND ${conditions}))::int AS count`;
  }

  /**
   * The page query (exported for the benchmark's EXPLAIN). The page's ids are chosen from the order
   * indexes alone (every condition is on their columns), and only those rows are read in full.
   */
  pageSql(filter: VersionListFilter, withConfig: boolean, after: VersionsAfter | undefined, take: number): Prisma.Sql {
    const columns = withConfig ? FULL_COLUMNS : SUMMARY_COLUMNS;
    const conditions = this.filters(filter, after);
    const page = filter.definitionIds
      ? Prisma.sql`SELECT k.* FROM (${this.visibleDefinitions(filter)}) AS d("id") CROSS JOIN LATERAL (
            SELECT ${KEY_COLUMNS} FROM "ModuleVersion" v WHERE v."moduleDefinitionId" = d."id" AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int
          ) k ORDER BY ${ORDER_K} LIMIT ${take}::int`
      : Prisma.sql`(SELECT ${KEY_COLUMNS} FROM "ModuleVersion" v WHERE v."organizationId" = ${filter.organizationId} AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int)
          UNION ALL
          (SELECT ${KEY_COLUMNS} FROM "ModuleVersion" v WHERE v."organizationId" IS NULL AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int)
          ORDER BY 1 DESC, 2 DESC, 3 DESC, 4 DESC, 5 DESC LIMIT ${take}::int`;
    return Prisma.sql`SELECT ${columns} FROM (${page}) k JOIN "ModuleVersion" v ON v."id" = k."id" ORDER BY ${ORDER}`;
  }

  /** The requested definitions the organization may see (its own and global ones). */
  private visibleDefinitions(filter: VersionListFilter): Prisma.Sql {
    return Prisma.sql`SELECT md."id" FROM "ModuleDefinition" md WHERE md."id" = ANY(${filter.definitionIds}::text[]) AND (md."organizationId" = ${filter.organizationId} OR md."organizationId" IS NULL)`;
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
