import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';
import { PrismaService } from '@/common/prisma/prisma.service';
import { normalizeApex } from '../dns/apex-name';
import { decideApexStatus, MAX_LISTED_DEPENDENTS } from './apex-status.rules';
import { DomainsRepository } from '../domains.repository';
import type { ApexStatusDto } from '../dto/domain.dto';

/** Spec endpoint 15: the status of an apex as the caller's organization may see it (rules in apex-status.rules.ts). */
@Injectable()
export class ApexStatusService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly repository: DomainsRepository,
  ) {}

  async status(principal: Principal, input: string): Promise<ApexStatusDto> {
    const normalized = normalizeApex(input);
    if (!normalized.ok)
      throw new AppError(RequestErrors.VALIDATION_FAILED, {
        message: `Invalid request: apex: ${normalized.reason}`,
        details: [invalidFields([`apex: ${normalized.reason}`], 'Invalid query parameters')],
        metadata: { fields: ['apex'] },
      });
    const apex = normalized.name;
    const caller = principal.organizationId;
    const [registrations, above] = await Promise.all([
      // Others' PENDING claims are invisible; the live one describes the apex, else the caller's own.
      this.prisma.managedDomain.findMany({
        where: { apex, OR: [{ organizationId: caller }, { status: { not: 'PENDING_VERIFICATION' } }] },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: {
          id: true,
          organizationId: true,
          status: true,
          grants: { where: { organizationId: caller }, select: { id: true } },
          _count: { select: { dependents: true } },
        },
      }),
      this.repository.activeAncestor(this.prisma, apex, caller),
    ]);
    const registration = registrations.find((r) => r.status === 'ACTIVE') ?? registrations.find((r) => r.organizationId === caller) ?? registrations[0];
    const decision = decideApexStatus(
      caller,
      registration ? { organizationId: registration.organizationId, status: registration.status, grantedToCaller: registration.grants.length > 0 } : undefined,
      above,
    );
    const dependentCount = registration && decision.visible ? registration._count.dependents : 0;
    let dependents: string[] = [];
    if (registration && decision.showsDependents && dependentCount > 0) {
      // Byte order (COLLATE "C"), the order JavaScript sorts these ASCII names in: a locale collation ignores '-' and '.'.
      const rows = await this.prisma.$queryRaw<
        { hostname: string }[]
      >`SELECT "hostname" FROM "DomainDependent" WHERE "domainId" = ${registration.id} ORDER BY "hostname" COLLATE "C" LIMIT ${MAX_LISTED_DEPENDENTS}`;
      dependents = rows.map((row) => row.hostname);
    }
    return { apex, exists: decision.exists, authorized: decision.authorized, owner: decision.owner, dependentCount, dependents };
  }
}
