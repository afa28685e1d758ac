import { Injectable } from '@nestjs/common';
import { ApiKeyAuthenticator } from '@/common/auth/api-key-authenticator.service';
import type { Principal } from '@/common/auth/principal';
import { assertMayGrant, assertMayManage } from '@/common/auth/role-rules';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Member, Prisma } from '@/generated/prisma/client';
import { ApiKeysService } from '@/modules/api-keys/api-keys.service';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { CreateMemberDto, MemberDto, toMemberDto, UpdateMemberDto } from './dto/member.dto';
import { MemberErrors } from './members.errors';

const LIST = newestFirst<Member>('members');

/**
 * Members of an organization. The service has no password login: a member acts through API keys
 * issued to them. Nobody grants or manages a role above their own, and the last OWNER stays.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly apiKeys: ApiKeysService,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<MemberDto>> {
    return paginate(fromModel(this.prisma.member, { organizationId: principal.organizationId }), LIST, query, toMemberDto);
  }

  async get(principal: Principal, id: string): Promise<MemberDto> {
    return toMemberDto(await this.find(this.prisma, principal.organizationId, id));
  }

  async create(principal: Principal, dto: CreateMemberDto): Promise<MemberDto> {
    assertMayGrant(principal, dto.role);
    const email = dto.email.toLowerCase();
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        const member = await tx.member.create({ data: { organizationId: principal.organizationId, email, name: dto.name, role: dto.role } });
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.MemberCreated,
          targetType: 'member',
          targetId: member.id,
          metadata: { name: member.name, role: member.role },
        });
        return member;
      });
      return toMemberDto(row);
    } catch (error) {
      if (isUniqueViolation(error, 'email'))
        throw new AppError(MemberErrors.EMAIL_TAKEN, {
          metadata: { email },
          details: [invalidFields(['data.email: is already a member of this organization'])],
        });
      throw error;
    }
  }

  async update(principal: Principal, id: string, dto: UpdateMemberDto): Promise<MemberDto> {
    if (dto.role) assertMayGrant(principal, dto.role);
    const row = await this.prisma.$transaction(async (tx) => {
      const member = await this.lockOrganizationAndFind(tx, principal.organizationId, id);
      assertMayManage(principal, member, 'a member');
      if (member.role === 'OWNER' && dto.role && dto.role !== 'OWNER') await this.assertNotLastOwner(tx, principal.organizationId);
      const updated = await tx.member.update({ where: { id: member.id }, data: { name: dto.name, role: dto.role } });
      if (dto.role && dto.role !== member.role) {
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.MemberRoleChanged,
          targetType: 'member',
          targetId: id,
          metadata: { from: member.role, to: dto.role },
        });
      }
      if (dto.name !== undefined && dto.name !== member.name) {
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.MemberUpdated,
          targetType: 'member',
          targetId: id,
          metadata: { name: dto.name },
        });
      }
      return updated;
    });
    // The member's keys act with the new role from their next request, in every process.
    if (dto.role) await this.authenticator.invalidate({ actorId: id });
    return toMemberDto(row);
  }

  /** Removes the member and revokes every key issued to them, at once in every process. */
  async remove(principal: Principal, id: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const member = await this.lockOrganizationAndFind(tx, principal.organizationId, id);
      assertMayManage(principal, member, 'a member');
      if (member.role === 'OWNER') await this.assertNotLastOwner(tx, principal.organizationId);
      const revokedKeys = await this.apiKeys.revokeAllOf(tx, principal.organizationId, id);
      await tx.member.delete({ where: { id: member.id } });
      await this.audit.record(tx, principal, {
        organizationId: principal.organizationId,
        action: AuditAction.MemberRemoved,
        targetType: 'member',
        targetId: id,
        metadata: { name: member.name, role: member.role, revokedKeys },
      });
    });
    await this.authenticator.invalidate({ actorId: id });
  }

  private async find(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<Member> {
    const row = await client.member.findFirst({ where: { id, organizationId } });
    if (!row) throw new AppError(MemberErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }

  /** Role changes and removals of one organization run one at a time, so two of them cannot both remove "the other" OWNER. */
  private async lockOrganizationAndFind(tx: Prisma.TransactionClient, organizationId: string, id: string): Promise<Member> {
    await tx.$queryRaw`SELECT "id" FROM "Organization" WHERE "id" = ${organizationId} FOR UPDATE`;
    return this.find(tx, organizationId, id);
  }

  private async assertNotLastOwner(tx: Prisma.TransactionClient, organizationId: string): Promise<void> {
    const owners = await tx.member.count({ where: { organizationId, role: 'OWNER' } });
    if (owners <= 1) throw new AppError(MemberErrors.LAST_OWNER);
  }
}
