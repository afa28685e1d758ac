import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import { ApiKeysService } from '@/modules/api-keys/api-keys.service';

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
  ) {}

  /**
   * Makes sure the organization exists with an OWNER member and issues that member a new key.
   * Safe to run again: the organization and owner are reused, only a key is added.
   */
  async bootstrap(name: string, options: { superadmin?: boolean; keyName?: string } = {}): Promise<BootstrapResult> {
    const { organization, owner } = await this.prisma.$transaction(async (tx) => {
      const organization = await tx.organization.upsert({ where: { name }, create: { name }, update: {} });
      const existing = await tx.member.findFirst({ where: { organizationId: organization.id, role: 'OWNER' }, orderBy: { createdAt: 'asc' } });
      const owner =
        existing ?? (await tx.member.create({ data: { organizationId: organization.id, name: `${name} owner`, role: 'OWNER', isSuperadmin: options.superadmin ?? false } }));
      if (existing && options.superadmin && !existing.isSuperadmin) await tx.member.update({ where: { id: existing.id }, data: { isSuperadmin: true } });
      return { organization, owner };
    });
    const key = await this.apiKeys.issue({
      organizationId: organization.id,
      ownerId: owner.id,
      ownerType: 'MEMBERSHIP',
      createdById: owner.id,
      name: options.keyName ?? 'bootstrap',
    });
    return { organizationId: organization.id, memberId: owner.id, apiKeyId: key.id, token: key.token };
  }
}
