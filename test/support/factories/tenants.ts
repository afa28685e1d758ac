import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Role } from '@/common/auth/principal';
import { ApiKeysService } from '@/modules/api-keys/api-keys.service';
import { OrganizationsService } from '@/modules/organizations/organizations.service';

export interface TestTenant {
  organizationId: string;
  memberId: string;
  apiKeyId: string;
  token: string;
  auth: { Authorization: string };
}

/** A new organization of its own, with an OWNER member and a token: tests never share tenants. */
export async function createTenant(app: INestApplication, label = 'org', options: { superadmin?: boolean } = {}): Promise<TestTenant> {
  const organizations = app.get(OrganizationsService, { strict: false });
  const result = await organizations.bootstrap(`${label}-${randomUUID()}`, options);
  return { ...result, auth: { Authorization: `Bearer ${result.token}` } };
}

/** Another member of the tenant's organization with the given role, and a token for it. */
export async function createMember(app: INestApplication, tenant: TestTenant, role: Role): Promise<TestTenant> {
  const prisma = app.get(PrismaService, { strict: false });
  const member = await prisma.member.create({ data: { organizationId: tenant.organizationId, name: `${role.toLowerCase()} member`, role } });
  const key = await app
    .get(ApiKeysService, { strict: false })
    .issue(
      { organizationId: tenant.organizationId, ownerId: member.id, ownerType: 'MEMBERSHIP', createdById: tenant.memberId, name: role },
      { system: 'test factory' },
    );
  return { organizationId: tenant.organizationId, memberId: member.id, apiKeyId: key.id, token: key.token, auth: { Authorization: `Bearer ${key.token}` } };
}
