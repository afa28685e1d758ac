import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, paginateRendered, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { ModuleDefinition, Prisma } from '@/generated/prisma/client';
import { CreateModuleDefinitionDto, ModuleDefinitionDto, toModuleDefinitionDto } from './dto/module-definition.dto';
import { CreateModuleVersionDto, ModuleVersionDto, ModuleVersionQueryDto, toModuleVersionDto } from './dto/module-version.dto';
import { ModuleDefinitionErrors, ModuleVersionErrors } from './module-versions.errors';
import { MODULE_VERSION_KEYSET, MODULE_VERSION_SUMMARY_KEYSET, type VersionsAfter } from './module-versions.keyset';
import { ModuleVersionsRepository, VersionListFilter } from './module-versions.repository';
import { parseVersion, type ParsedVersion } from './semver-key';

const DEFINITIONS = newestFirst<ModuleDefinition>('module-definitions');

/** What an organization sees: its own rows and the global ones. */
const visibleTo = (organizationId: string) => ({ OR: [{ organizationId }, { organizationId: null }] });

/**
 * Module definitions and their immutable, semantically versioned releases. Definitions are an
 * organization's or global (organizationId null: visible to all, written only by superadmins).
 */
@Injectable()
export class ModuleVersionsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly versions: ModuleVersionsRepository,
  ) {}

  listDefinitions(principal: Principal, query: PaginationQueryDto): Promise<Page<ModuleDefinitionDto>> {
    return paginate(fromModel(this.prisma.moduleDefinition, visibleTo(principal.organizationId)), DEFINITIONS, query, toModuleDefinitionDto);
  }

  async getDefinition(principal: Principal, id: string): Promise<ModuleDefinitionDto> {
    return toModuleDefinitionDto(await this.findDefinition(principal, id));
  }

  async createDefinition(principal: Principal, dto: CreateModuleDefinitionDto): Promise<ModuleDefinitionDto> {
    if (dto.global && !principal.isSuperadmin) throw new AppError(ModuleDefinitionErrors.GLOBAL_REQUIRES_SUPERADMIN, { metadata: { field: 'global' } });
    const organizationId = dto.global ? null : principal.organizationId;
    try {
      return toModuleDefinitionDto(await this.prisma.moduleDefinition.create({ data: { organizationId, name: dto.name, description: dto.description } }));
    } catch (error) {
      if (isUniqueViolation(error, 'name')) {
        throw new AppError(ModuleDefinitionErrors.NAME_TAKEN, {
          metadata: { name: dto.name, global: organizationId === null },
          details: [invalidFields([`data.name: is already taken by another ${organizationId ? "of your organization's" : 'global'} module definition`])],
        });
      }
      throw error;
    }
  }

  /** Publishes an immutable version; one of equal precedence (build metadata ignored) is a 409. */
  async publish(principal: Principal, dto: CreateModuleVersionDto): Promise<ModuleVersionDto> {
    const definition = await this.findDefinition(principal, dto.moduleDefinitionId);
    if (definition.organizationId === null && !principal.isSuperadmin)
      throw new AppError(ModuleDefinitionErrors.GLOBAL_REQUIRES_SUPERADMIN, { metadata: { moduleDefinitionId: definition.id } });
    const version = this.parse(dto.version, 'data.version');
    try {
      const row = await this.prisma.moduleVersion.create({
        data: {
          moduleDefinitionId: definition.id,
          organizationId: definition.organizationId,
          version: dto.version,
          description: dto.description,
          config: dto.config as Prisma.InputJsonObject,
          createdById: principal.actorId,
          ...version.columns,
        },
      });
      return toModuleVersionDto(row);
    } catch (error) {
      if (isUniqueViolation(error, 'ModuleVersion_semver_precedence_key') || isUniqueViolation(error, 'versionPrereleaseSortKey')) {
        const existing = await this.prisma.moduleVersion.findFirst({
          where: { moduleDefinitionId: definition.id, ...version.columns },
          select: { id: true, version: true },
        });
        throw new AppError(ModuleVersionErrors.VERSION_EXISTS, {
          message: `Version ${dto.version} has the same precedence as the existing ${existing?.version ?? 'version'} (build metadata is ignored).`,
          metadata: { moduleDefinitionId: definition.id, version: dto.version, existingVersion: existing?.version, existingId: existing?.id },
        });
      }
      throw error;
    }
  }

  /** The summaries' page as the JSON text of the response body (rendered from the rows' text, sent as it is). */
  listSummaries(principal: Principal, query: ModuleVersionQueryDto): Promise<string> {
    return this.list(principal, query, false);
  }

  /** The versions' page (with `config`) as the JSON text of the response body. */
  listVersions(principal: Principal, query: ModuleVersionQueryDto): Promise<string> {
    return this.list(principal, query, true);
  }

  private list(principal: Principal, query: ModuleVersionQueryDto, withConfig: boolean): Promise<string> {
    let definitionIds = query.moduleDefinitionIds ? [...new Set(query.moduleDefinitionIds)] : undefined;
    if (query.moduleDefinitionId) definitionIds = definitionIds ? definitionIds.filter((id) => id === query.moduleDefinitionId) : [query.moduleDefinitionId];
    const filter: VersionListFilter = {
      organizationId: principal.organizationId,
      definitionIds,
      minVersion: query.minVersion ? this.parse(query.minVersion, 'minVersion').columns : undefined,
      releasesOnly: query.includePrereleases === false,
    };
    const keyset = withConfig ? MODULE_VERSION_KEYSET : MODULE_VERSION_SUMMARY_KEYSET;
    return paginateRendered(keyset, query, (position, limit) =>
      this.versions.page(filter, withConfig, position && (keyset.after(position) as VersionsAfter), limit),
    );
  }

  private parse(text: string, field: string): ParsedVersion {
    const parsed = parseVersion(text);
    // The DTO validated it already; this keeps a bad value from ever reaching a query.
    if (!parsed.ok)
      throw new AppError(RequestErrors.VALIDATION_FAILED, { details: [invalidFields([`${field}: ${parsed.reason}`])], metadata: { fields: [field] } });
    return parsed.version;
  }

  private async findDefinition(principal: Principal, id: string): Promise<ModuleDefinition> {
    const row = await this.prisma.moduleDefinition.findFirst({ where: { id, ...visibleTo(principal.organizationId) } });
    if (!row) throw new AppError(ModuleDefinitionErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }
}
