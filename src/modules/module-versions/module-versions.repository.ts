import { Injectable } from '@nestjs/common';
import type { ListSource } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import type { ModuleVersionRow } from './dto/module-version.dto';
import type { VersionsAfter } from './module-versions.keyset';
import type { VersionColumns } from './semver-key';

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
const VISIBLE_TO = (organizationId: string) => Prisma.sql`(v."organizationId" = ${organizationId} OR v."organizationId" IS NULL)`;

/**
 * All Prisma access of module versions' lists. Every query takes the caller's organization: rows
 * are the organization's or global (organizationId NULL), never another organization's.
 *
 * Each page is read as bounded ordered index scans, never by sorting a definition's versions:
 * - with definition ids: for each id (unnest + LATERAL) the first `take` rows of
 *   ModuleVersion_definition_semver_order_idx read backwards from the cursor, then the top `take`
 *   of those at most 50 x `take` rows;
 * - without: the organization's and the global rows, each the first `take` rows of
 *   ModuleVersion_organization_semver_order_idx backwards, merged.
 */
@Injectable()
export class ModuleVersionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  source(filter: VersionListFilter, withConfig: boolean): ListSource<ModuleVersionRow> {
    return {
      fetch: async (after, take) => {
        const [rows, totalCount] = await Promise.all([this.page(filter, withConfig, after as VersionsAfter | undefined, take), this.count(filter)]);
        return { rows, totalCount };
      },
    };
  }

  page(filter: VersionListFilter, withConfig: boolean, after: VersionsAfter | undefined, take: number): Promise<ModuleVersionRow[]> {
    return this.prisma.$queryRaw<ModuleVersionRow[]>(this.pageSql(filter, withConfig, after, take));
  }

  async count(filter: VersionListFilter): Promise<number> {
    const scope = filter.definitionIds ? Prisma.sql`v."moduleDefinitionId" = ANY(${filter.definitionIds}::text[]) AND ${VISIBLE_TO(filter.organizationId)}` : VISIBLE_TO(filter.organizationId);
    const [{ count }] = await this.prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM "ModuleVersion" v WHERE ${scope} AND ${this.filters(filter, undefined)}`;
    return count;
  }

  /** The page query (exported for the benchmark's EXPLAIN). */
  pageSql(filter: VersionListFilter, withConfig: boolean, after: VersionsAfter | undefined, take: number): Prisma.Sql {
    const columns = withConfig ? FULL_COLUMNS : SUMMARY_COLUMNS;
    const conditions = this.filters(filter, after);
    if (filter.definitionIds) {
      return Prisma.sql`SELECT ${columns} FROM unnest(${filter.definitionIds}::text[]) AS d("id") CROSS JOIN LATERAL (
          SELECT ${columns} FROM "ModuleVersion" v
          WHERE v."moduleDefinitionId" = d."id" AND ${VISIBLE_TO(filter.organizationId)} AND ${conditions}
          ORDER BY ${ORDER} LIMIT ${take}::int
        ) v ORDER BY ${ORDER} LIMIT ${take}::int`;
    }
    return Prisma.sql`SELECT ${columns} FROM (
        (SELECT ${columns} FROM "ModuleVersion" v WHERE v."organizationId" = ${filter.organizationId} AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int)
        UNION ALL
        (SELECT ${columns} FROM "ModuleVersion" v WHERE v."organizationId" IS NULL AND ${conditions} ORDER BY ${ORDER} LIMIT ${take}::int)
      ) v ORDER BY ${ORDER} LIMIT ${take}::int`;
  }

  private filters(filter: VersionListFilter, after: VersionsAfter | undefined): Prisma.Sql {
    const parts: Prisma.Sql[] = [Prisma.sql`TRUE`];
    if (filter.minVersion) {
      const m = filter.minVersion;
      parts.push(
        Prisma.sql`(v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey") >= (${m.versionMajor}::int, ${m.versionMinor}::int, ${m.versionPatch}::int, ${m.versionPrereleaseSortKey}::text)`,
      );
    }
    if (filter.releasesOnly) parts.push(Prisma.sql`v."versionPrereleaseRank" IS NULL`);
    if (after) {
      const [major, minor, patch, key, id] = after.below;
      parts.push(Prisma.sql`(v."versionMajor", v."versionMinor", v."versionPatch", v."versionPrereleaseSortKey", v."id") < (${major}::int, ${minor}::int, ${patch}::int, ${key}::text, ${id}::text)`);
    }
    return Prisma.join(parts, ' AND ');
  }
}
