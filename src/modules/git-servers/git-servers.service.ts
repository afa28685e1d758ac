import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { GitProviders } from '@/modules/git-providers/git-providers.service';
import { CreateGitServerDto, GitServerDto, GitServerWithCount, toGitServerDto } from './dto/git-server.dto';
import { GitServerErrors } from './git-servers.errors';

const LIST = newestFirst<GitServerWithCount>('gitServers');
const WITH_COUNT = { _count: { select: { integrations: true } } } as const;

/** Self-hosted git servers: URLs checked against the SSRF policy before they are stored and on every connection. */
@Injectable()
export class GitServersService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly providers: GitProviders,
  ) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<GitServerDto>> {
    const delegate = {
      findMany: (args: Prisma.GitServerFindManyArgs) => this.prisma.gitServer.findMany({ ...args, include: WITH_COUNT }),
      count: (args: { where: Prisma.GitServerWhereInput }) => this.prisma.gitServer.count(args),
    };
    return paginate(fromModel(delegate, { organizationId: principal.organizationId }), LIST, query, toGitServerDto);
  }

  async get(principal: Principal, id: string): Promise<GitServerDto> {
    return toGitServerDto(await this.find(this.prisma, principal.organizationId, id));
  }

  async create(principal: Principal, dto: CreateGitServerDto): Promise<GitServerDto> {
    const hostUrl = await this.providers.checkServerUrl(dto.hostUrl);
    await this.providers.probeServer(dto.provider, hostUrl);
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        const server = await tx.gitServer.create({ data: { organizationId: principal.organizationId, provider: dto.provider, hostUrl }, include: WITH_COUNT });
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.GitServerCreated,
          targetType: 'gitServer',
          targetId: server.id,
          metadata: { provider: dto.provider, hostUrl },
        });
        return server;
      });
      return toGitServerDto(row);
    } catch (error) {
      if (isUniqueViolation(error, 'hostUrl')) throw new AppError(GitServerErrors.HOST_TAKEN, { metadata: { hostUrl } });
      throw error;
    }
  }

  async remove(principal: Principal, id: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const server = await this.find(tx, principal.organizationId, id);
      const users = await tx.integration.findMany({
        where: { organizationId: principal.organizationId, gitServerId: id },
        select: { id: true, name: true },
        take: 50,
      });
      if (users.length > 0)
        throw new AppError(GitServerErrors.IN_USE, {
          metadata: { id },
          details: [{ title: 'Integrations connected through the server', render: 'list', items: users.map((u) => `${u.id} (${u.name})`) }],
        });
      await tx.gitServer.deleteMany({ where: { id, organizationId: principal.organizationId } });
      await this.audit.record(tx, principal, {
        organizationId: principal.organizationId,
        action: AuditAction.GitServerDeleted,
        targetType: 'gitServer',
        targetId: id,
        metadata: { hostUrl: server.hostUrl },
      });
    });
  }

  private async find(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<GitServerWithCount> {
    const row = await client.gitServer.findFirst({ where: { id, organizationId }, include: WITH_COUNT });
    if (!row) throw new AppError(GitServerErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }
}
