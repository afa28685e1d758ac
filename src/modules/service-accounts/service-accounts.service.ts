import { Injectable } from '@nestjs/common';
import { ApiKeyAuthenticator } from '@/common/auth/api-key-authenticator.service';
import type { Principal } from '@/common/auth/principal';
import { assertMayGrant, assertMayManage } from '@/common/auth/role-rules';
import { AppError } from '@/common/errors/app-error';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Prisma, ServiceAccount } from '@/generated/prisma/client';
import { ApiKeysService } from '@/modules/api-keys/api-keys.service';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { CreateServiceAccountDto, ServiceAccountDto, toServiceAccountDto, UpdateServiceAccountDto } from './dto/service-account.dto';
import { ServiceAccountErrors } from './service-accounts.errors';

/** The list's keyset: newest first; its cursors carry the tag 'serviceAccounts'. */
const LIST = newestFirst<ServiceAccount>('serviceAccounts');

@Injectable()
export class ServiceAccountsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly apiKeys: ApiKeysService,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<ServiceAccountDto>> {
    return paginate(fromModel(this.prisma.serviceAccount, { organizationId: principal.organizationId }), LIST, query, toServiceAccountDto);
  }

  async get(principal: Principal, id: string): Promise<ServiceAccountDto> {
    return toServiceAccountDto(await this.find(this.prisma, principal.organizationId, id));
  }

  async create(principal: Principal, dto: CreateServiceAccountDto): Promise<ServiceAccountDto> {
    const role = dto.role ?? 'MEMBER';
    // Nobody can mint an identity more powerful than themselves.
    assertMayGrant(principal, role);
    return this.nameUnique(dto.name, async () => {
      const row = await this.prisma.$transaction(async (tx) => {
        const created = await tx.serviceAccount.create({
          data: {
            organizationId: principal.organizationId,
            name: dto.name,
            description: dto.description,
            role,
            createdById: principal.actorId,
            createdByName: principal.actorName,
          },
        });
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.ServiceAccountCreated,
          targetType: 'serviceAccount',
          targetId: created.id,
          metadata: { name: created.name, role },
        });
        return created;
      });
      return toServiceAccountDto(row);
    });
  }

  async update(principal: Principal, id: string, dto: UpdateServiceAccountDto): Promise<ServiceAccountDto> {
    if (dto.role) assertMayGrant(principal, dto.role);
    const row = await this.nameUnique(dto.name, () =>
      this.prisma.$transaction(async (tx) => {
        const account = await this.find(tx, principal.organizationId, id);
        assertMayManage(principal, account, 'a service account');
        const updated = await tx.serviceAccount.update({ where: { id: account.id }, data: { name: dto.name, description: dto.description, role: dto.role } });
        if (dto.role && dto.role !== account.role) {
          await this.audit.record(tx, principal, {
            organizationId: principal.organizationId,
            action: AuditAction.ServiceAccountRoleChanged,
            targetType: 'serviceAccount',
            targetId: id,
            metadata: { from: account.role, to: dto.role },
          });
        }
        if ((dto.name !== undefined && dto.name !== account.name) || (dto.description !== undefined && dto.description !== account.description)) {
          await this.audit.record(tx, principal, {
            organizationId: principal.organizationId,
            action: AuditAction.ServiceAccountUpdated,
            targetType: 'serviceAccount',
            targetId: id,
            metadata: { name: updated.name },
          });
        }
        return updated;
      }),
    );
    // Its keys act with the new role from their next request, in every process.
    if (dto.role) await this.authenticator.invalidate({ actorId: id });
    return toServiceAccountDto(row);
  }

  /** Deletes the service account and revokes its keys, at once in every process. */
  async remove(principal: Principal, id: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const account = await this.find(tx, principal.organizationId, id);
      assertMayManage(principal, account, 'a service account');
      const revokedKeys = await this.apiKeys.revokeAllOf(tx, principal.organizationId, id);
      await tx.serviceAccount.delete({ where: { id: account.id } });
      await this.audit.record(tx, principal, {
        organizationId: principal.organizationId,
        action: AuditAction.ServiceAccountRemoved,
        targetType: 'serviceAccount',
        targetId: id,
        metadata: { name: account.name, role: account.role, revokedKeys },
      });
    });
    await this.authenticator.invalidate({ actorId: id });
  }

  private async find(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<ServiceAccount> {
    const row = await client.serviceAccount.findFirst({ where: { id, organizationId } });
    if (!row) throw new AppError(ServiceAccountErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }

  private async nameUnique<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error, 'name')) throw new AppError(ServiceAccountErrors.NAME_TAKEN, { metadata: { name } });
      throw error;
    }
  }
}
