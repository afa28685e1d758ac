import { Inject, Injectable } from '@nestjs/common';
import { Permission, principalMay, rolesHolding } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { CodeSource, Integration, Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { ProviderFailure, type RepositoryInfo } from '@/modules/git-providers/git-provider.port';
import { providerError } from '@/modules/git-providers/git-providers.errors';
import { GitProviders } from '@/modules/git-providers/git-providers.service';
import { IntegrationsService } from '@/modules/integrations/integrations.service';
import { CodeSourceErrors } from './code-sources.errors';
import { CodeSourceDto, CreateCodeSourceDto, RepositoryDto, toCodeSourceDto, toRepositoryDto } from './dto/code-source.dto';

const LIST = newestFirst<CodeSource>('codeSources');
/** `owner/name` (GitLab: up to ten levels of groups); no segment is `.` or `..` (a path, not a name). */
const REPOSITORY_NAME = /^(?!(?:.*\/)?\.{1,2}(?:\/|$))[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+){1,10}$/;

/** Code sources: repositories connected through an integration, or LOCAL_GIT bare repositories. */
@Injectable()
export class CodeSourcesService {
  /** Repository objects by code source id, for GIT_REPOSITORY_CACHE_TTL_MS (per process). */
  private readonly cache = new Map<string, { at: number; value: RepositoryDto }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly providers: GitProviders,
    private readonly integrations: IntegrationsService,
  ) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<CodeSourceDto>> {
    return paginate(fromModel(this.prisma.codeSource, { organizationId: principal.organizationId }), LIST, query, toCodeSourceDto);
  }

  async get(principal: Principal, id: string): Promise<CodeSourceDto> {
    return toCodeSourceDto(await this.find(this.prisma, principal.organizationId, id));
  }

  async create(principal: Principal, dto: CreateCodeSourceDto): Promise<CodeSourceDto> {
    let info: RepositoryInfo;
    let data: Omit<Prisma.CodeSourceUncheckedCreateInput, 'organizationId' | 'foreignId' | 'url' | 'nameWithOwner'>;
    let nameWithOwner: string;
    if (dto.provider === 'LOCAL_GIT') {
      if (dto.integrationId)
        throw new AppError(CodeSourceErrors.INTEGRATION_REQUIRED, {
          message: 'LOCAL_GIT code sources have no integration.',
          details: [invalidFields(['data.integrationId: is not accepted with provider LOCAL_GIT'])],
        });
      const local = this.providers.local();
      const problem = local.pathProblem(dto.repository);
      if (problem) throw new AppError(CodeSourceErrors.INVALID_REPOSITORY, { details: [invalidFields([`data.repository: ${problem}`])] });
      // Canonical once (symlinks resolved, under GIT_LOCAL_ROOT): the path checked is the path stored and used.
      let path: string;
      try {
        path = await local.usablePath(dto.repository);
      } catch (error) {
        if (error instanceof ProviderFailure && error.kind === 'rejected')
          throw new AppError(CodeSourceErrors.INVALID_REPOSITORY, { details: [invalidFields([`data.repository: ${error.reason}`])] });
        throw error instanceof ProviderFailure ? providerError(error, 'in-use') : error;
      }
      info = await this.call(() => local.repository(path));
      data = { provider: 'LOCAL_GIT' };
      nameWithOwner = path;
    } else {
      if (!dto.integrationId)
        throw new AppError(CodeSourceErrors.INTEGRATION_REQUIRED, { details: [invalidFields(['data.integrationId: is required (or provider LOCAL_GIT)'])] });
      const integration = await this.prisma.integration.findFirst({ where: { id: dto.integrationId, organizationId: principal.organizationId } });
      if (!integration) throw new AppError(CodeSourceErrors.INTEGRATION_NOT_FOUND, { metadata: { integrationId: dto.integrationId } });
      if (dto.provider && dto.provider !== integration.provider)
        throw new AppError(CodeSourceErrors.INTEGRATION_REQUIRED, {
          message: `The integration is a ${integration.provider} integration.`,
          details: [invalidFields(['data.provider: does not match the integration'])],
        });
      if (integration.status !== 'ACTIVE')
        throw new AppError(CodeSourceErrors.INTEGRATION_NOT_ACTIVE, { metadata: { integrationId: integration.id, status: integration.status } });
      if (!REPOSITORY_NAME.test(dto.repository))
        throw new AppError(CodeSourceErrors.INVALID_REPOSITORY, {
          details: [invalidFields(['data.repository: must be owner/name (no segment may be . or ..)'])],
        });
      info = await this.fromIntegration(integration, dto.repository);
      data = { provider: integration.provider, integrationId: integration.id, gitServerId: integration.gitServerId };
      nameWithOwner = info.nameWithOwner;
    }
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        if (data.provider === 'LOCAL_GIT') await this.assertLocalPathFree(tx, principal.organizationId, nameWithOwner);
        const created = await tx.codeSource.create({
          data: { ...data, organizationId: principal.organizationId, foreignId: info.foreignId, nameWithOwner, url: info.url },
        });
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.CodeSourceConnected,
          targetType: 'codeSource',
          targetId: created.id,
          metadata: { provider: created.provider, repository: nameWithOwner },
        });
        return created;
      });
      return toCodeSourceDto(row);
    } catch (error) {
      if (isUniqueViolation(error, 'nameWithOwner')) throw new AppError(CodeSourceErrors.ALREADY_CONNECTED, { metadata: { repository: nameWithOwner } });
      throw error;
    }
  }

  /** The provider's Repository object for the code source, cached briefly. */
  async repository(principal: Principal, id: string): Promise<RepositoryDto> {
    const source = await this.find(this.prisma, principal.organizationId, id);
    const cached = this.cache.get(source.id);
    if (cached && Date.now() - cached.at < this.config.git.repositoryCacheTtlMs) return cached.value;
    let info: RepositoryInfo;
    if (source.provider === 'LOCAL_GIT') {
      info = await this.call(() => this.providers.local().repository(source.nameWithOwner));
    } else {
      const integration = await this.integrations.integrationOf(source);
      if (!integration)
        throw new AppError(CodeSourceErrors.INTEGRATION_NOT_FOUND, {
          message: 'The code source has lost its integration; connect it again.',
          metadata: { id },
        });
      info = await this.fromIntegration(integration, source.nameWithOwner);
    }
    const value = toRepositoryDto(info);
    if (this.config.git.repositoryCacheTtlMs > 0) this.cache.set(source.id, { at: Date.now(), value });
    return value;
  }

  /**
   * Disconnects a code source. Its merge queues go with it (cascade), so a code source with queues
   * needs the permission to operate them (ADMIN, and among a scoped key's scopes): anyone else gets a 409 naming the queues. The row
   * is locked first, so a queue created meanwhile is seen (its insert holds the row's key lock).
   */
  async remove(principal: Principal, id: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const source = await this.find(tx, principal.organizationId, id);
      await tx.$queryRaw`SELECT id FROM "CodeSource" WHERE id = ${id} AND "organizationId" = ${principal.organizationId} FOR UPDATE`;
      const queues = await tx.mergeQueue.findMany({
        where: { repositoryId: id, organizationId: principal.organizationId },
        select: { id: true, baseRef: true },
        orderBy: { id: 'asc' },
        take: 100,
      });
      // The key's scopes as well as its role: a key scoped to codeSources:write must not delete queues.
      if (queues.length > 0 && !principalMay(principal, Permission.MergeQueuesOperate)) {
        throw new AppError(CodeSourceErrors.HAS_MERGE_QUEUES, {
          message: `Merge queue${queues.length > 1 ? 's' : ''} ${queues.map((q) => `${q.id} (${q.baseRef})`).join(', ')} run${queues.length > 1 ? '' : 's'} on this code source; disconnecting it would delete ${queues.length > 1 ? 'them' : 'it'}, which needs ${Permission.MergeQueuesOperate} (${rolesHolding(Permission.MergeQueuesOperate).join(', ')}${principal.scopes ? ', and a scoped key must hold it among its scopes' : ''}).`,
          metadata: { id, mergeQueueIds: queues.map((q) => q.id) },
        });
      }
      await tx.codeSource.deleteMany({ where: { id, organizationId: principal.organizationId } });
      await this.audit.record(tx, principal, {
        organizationId: principal.organizationId,
        action: AuditAction.CodeSourceDeleted,
        targetType: 'codeSource',
        targetId: id,
        metadata: { repository: source.nameWithOwner, ...(queues.length ? { mergeQueueIds: queues.map((q) => q.id) } : {}) },
      });
    });
    this.cache.delete(id);
  }

  /** Reads through the integration; a refusal of its credentials marks it NEEDS_ATTENTION (and is a 424). */
  private async fromIntegration(integration: Integration, repository: string): Promise<RepositoryInfo> {
    const client = await this.integrations.clientFor(integration);
    try {
      return await client.repository(repository, { accountLogin: integration.externalAccountName ?? undefined });
    } catch (error) {
      if (error instanceof ProviderFailure && (error.kind === 'unauthorized' || error.kind === 'forbidden'))
        await this.integrations.credentialsRefused(integration.organizationId, integration, error.reason);
      if (error instanceof ProviderFailure) throw providerError(error, 'in-use');
      throw error;
    }
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof ProviderFailure) throw providerError(error, 'in-use');
      throw error;
    }
  }

  /**
   * One LOCAL_GIT path belongs to one organization at a time: the disk is shared, a queue writes
   * to it. Serialized per path (transaction-scoped advisory lock) so two organizations asking at
   * once cannot both get it. The holder is not named.
   */
  private async assertLocalPathFree(tx: Prisma.TransactionClient, organizationId: string, path: string): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`local-git:${path}`}, 0))`;
    const held = await tx.codeSource.findFirst({
      where: { provider: 'LOCAL_GIT', nameWithOwner: path, organizationId: { not: organizationId } },
      select: { id: true },
    });
    if (held) throw new AppError(CodeSourceErrors.LOCAL_PATH_TAKEN, { metadata: { repository: path } });
  }

  private async find(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<CodeSource> {
    const row = await client.codeSource.findFirst({ where: { id, organizationId } });
    if (!row) throw new AppError(CodeSourceErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }
}
