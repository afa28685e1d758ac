import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import { ApiKeyAuthenticator } from '@/common/auth/api-key-authenticator.service';
import { ApiKeysService } from '@/modules/api-keys/api-keys.service';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';

export interface BootstrapResult {
  organizationId: string;
  memberId: string;
  apiKeyId: string;
  token: string;
}

@Injectable()
export class OrganizationsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditService,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /** Sets or clears a member's superadmin flag (CLI only); false when there is no such member. */
  async setSuperadmin(memberId: string, superadmin: boolean): Promise<boolean> {
    const changed = await this.prisma.$transaction(async (tx) => {
      const member = await tx.member.findUnique({ where: { id: memberId } });
      if (!member) return false;
      if (member.isSuperadmin !== superadmin) {
        await tx.member.update({ where: { id: memberId }, data: { isSuperadmin: superadmin } });
        await this.audit.record(
          tx,
          { system: 'cli superadmin' },
          {
            organizationId: member.organizationId,
            action: superadmin ? AuditAction.SuperadminGranted : AuditAction.SuperadminRevoked,
            targetType: 'member',
            targetId: memberId,
            metadata: { name: member.name },
          },
        );
      }
      return true;
    });
    if (changed) await this.authenticator.invalidate({ actorId: memberId });
    return changed;
  }

  /**
   * Makes sure the organization exists with an OWNER member and issues that member a new key.
   * Safe to run again: the organization and owner are reused, only a key is added.
   */
  async bootstrap(name: string, options: { superadmin?: boolean; keyName?: string } = {}): Promise<BootstrapResult> {
    const { organization, owner } = await this.prisma.$transaction(async (tx) => {
      const organization = await tx.organization.upsert({ where: { name }, create: { name }, update: {} });
      const existing = await tx.member.findFirst({ where: { organizationId: organization.id, role: 'OWNER' }, orderBy: { createdAt: 'asc' } });
      const owner =
        existing ??
        (await tx.member.create({
          data: { organizationId: organization.id, name: `${name} owner`, role: 'OWNER', isSuperadmin: options.superadmin ?? false },
        }));
      if (existing && options.superadmin && !existing.isSuperadmin) await tx.member.update({ where: { id: existing.id }, data: { isSuperadmin: true } });
      return { organization, owner };
    });
    const key = await this.apiKeys.issue(
      {
        organizationId: organization.id,
        ownerId: owner.id,
        ownerType: 'MEMBERSHIP',
        createdById: owner.id,
        name: options.keyName ?? 'bootstrap',
      },
      { system: 'cli bootstrap' },
    );
    return { organizationId: organization.id, memberId: owner.id, apiKeyId: key.id, token: key.token };
  }
}
