import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { DomainGrant } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { DomainGrantErrors } from '../domains.errors';
import { DomainsRepository } from '../domains.repository';
import { CreateDomainGrantDto, DomainGrantDto, toDomainGrantDto } from '../dto/domain.dto';

const LIST = newestFirst<DomainGrant>('domainGrants');

/**
 * Grants: the owner of an apex lets another organization register apexes under it. Revoking a
 * grant stops new registrations; apexes the grantee already registered stay.
 */
@Injectable()
export class DomainGrantsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly repository: DomainsRepository,
    private readonly audit: AuditService,
  ) {}

  async list(principal: Principal, domainId: string, query: PaginationQueryDto): Promise<Page<DomainGrantDto>> {
    await this.repository.find(this.prisma, principal.organizationId, domainId);
    return paginate(fromModel(this.prisma.domainGrant, { domainId }), LIST, query, toDomainGrantDto);
  }

  async create(principal: Principal, domainId: string, dto: CreateDomainGrantDto): Promise<DomainGrantDto> {
    const organizationId = principal.organizationId;
    const domain = await this.repository.find(this.prisma, organizationId, domainId);
    if (dto.organizationId === organizationId) {
      throw new AppError(DomainGrantErrors.OWN_ORGANIZATION, {
        details: [invalidFields(['data.organizationId: is your own organization'])],
        metadata: { organizationId: dto.organizationId },
      });
    }
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        const grantee = await tx.organization.findUnique({ where: { id: dto.organizationId }, select: { id: true } });
        if (!grantee)
          throw new AppError(DomainGrantErrors.ORGANIZATION_NOT_FOUND, {
            details: [invalidFields(['data.organizationId: is not an organization'])],
            metadata: { organizationId: dto.organizationId },
          });
        const grant = await tx.domainGrant.create({ data: { domainId, organizationId: dto.organizationId } });
        await this.audit.record(tx, principal, {
          organizationId,
          action: AuditAction.DomainGrantCreated,
          targetType: 'domain',
          targetId: domainId,
          metadata: { apex: domain.apex, grantee: dto.organizationId },
        });
        return grant;
      });
      return toDomainGrantDto(row);
    } catch (error) {
      if (isUniqueViolation(error, 'organizationId'))
        throw new AppError(DomainGrantErrors.ALREADY_GRANTED, {
          details: [invalidFields(['data.organizationId: already holds a grant on this domain'])],
          metadata: { organizationId: dto.organizationId },
        });
      throw error;
    }
  }

  async remove(principal: Principal, domainId: string, granteeId: string): Promise<void> {
    const organizationId = principal.organizationId;
    const domain = await this.repository.find(this.prisma, organizationId, domainId);
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.domainGrant.deleteMany({ where: { domainId, organizationId: granteeId } });
      if (!count) throw new AppError(DomainGrantErrors.NOT_FOUND, { metadata: { organizationId: granteeId } });
      await this.audit.record(tx, principal, {
        organizationId,
        action: AuditAction.DomainGrantRevoked,
        targetType: 'domain',
        targetId: domainId,
        metadata: { apex: domain.apex, grantee: granteeId },
      });
    });
  }
}
