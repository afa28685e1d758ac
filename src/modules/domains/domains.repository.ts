import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { ManagedDomain, Prisma } from '@/generated/prisma/client';
import { AppError } from '@/common/errors/app-error';
import { ancestorsOf } from './dns/apex-name';
import type { ActiveAncestorFacts } from './apex-status/apex-status.rules';
import { DomainErrors } from './domains.errors';

/** All Prisma access of the domains module that is shared by its services. */
@Injectable()
export class DomainsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The organization's domain, or a 404 (another organization's domain is a 404 too). */
  async find(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<ManagedDomain> {
    const row = await client.managedDomain.findFirst({ where: { id, organizationId } });
    if (!row) throw new AppError(DomainErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }

  /**
   * Locks the organization's domain row (FOR UPDATE) for the rest of the transaction, or a 404:
   * deletion and adding dependents take it, so a dependent cannot be added to a domain whose
   * deletion has just checked that it has none.
   */
  async lock(tx: Prisma.TransactionClient, organizationId: string, id: string): Promise<ManagedDomain> {
    const locked = await tx.$queryRaw<
      { id: string }[]
    >`SELECT "id" FROM "ManagedDomain" WHERE "id" = ${id} AND "organizationId" = ${organizationId} FOR UPDATE`;
    if (locked.length === 0) throw new AppError(DomainErrors.NOT_FOUND, { metadata: { id } });
    return this.find(tx, organizationId, id);
  }

  /** The nearest ACTIVE apex strictly above `name`, with whether `callerOrganizationId` holds a grant on it. */
  async activeAncestor(
    client: Prisma.TransactionClient,
    name: string,
    callerOrganizationId: string,
  ): Promise<(ActiveAncestorFacts & { apex: string }) | undefined> {
    const ancestors = ancestorsOf(name);
    if (ancestors.length === 0) return undefined;
    const rows = await client.managedDomain.findMany({
      where: { apex: { in: ancestors }, status: 'ACTIVE' },
      select: { apex: true, organizationId: true, grants: { where: { organizationId: callerOrganizationId }, select: { id: true } } },
    });
    const nearest = rows.sort((a, b) => b.apex.length - a.apex.length)[0];
    return nearest ? { apex: nearest.apex, organizationId: nearest.organizationId, grantedToCaller: nearest.grants.length > 0 } : undefined;
  }

  get client(): PrismaService {
    return this.prisma;
  }
}
