import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { DomainDependent } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { isUnder, normalizeHostname } from '../dns/apex-name';
import { DomainDependentErrors } from '../domains.errors';
import { DomainsRepository } from '../domains.repository';
import { CreateDomainDependentDto, DomainDependentDto, toDomainDependentDto } from '../dto/domain.dto';

const LIST = newestFirst<DomainDependent>('domainDependents');

/** What of the platform uses names under an apex: while any is recorded, the apex cannot be deleted. */
@Injectable()
export class DomainDependentsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly repository: DomainsRepository,
    private readonly audit: AuditService,
  ) {}

  async list(principal: Principal, domainId: string, query: PaginationQueryDto): Promise<Page<DomainDependentDto>> {
    await this.repository.find(this.prisma, principal.organizationId, domainId);
    return paginate(fromModel(this.prisma.domainDependent, { domainId, organizationId: principal.organizationId }), LIST, query, toDomainDependentDto);
  }

  /** Records a dependent; its hostname must lie strictly under the apex (422), once per domain (409). */
  async create(principal: Principal, domainId: string, dto: CreateDomainDependentDto): Promise<DomainDependentDto> {
    const organizationId = principal.organizationId;
    const host = normalizeHostname(dto.hostname);
    if (!host.ok) throw new AppError(DomainDependentErrors.NOT_UNDER_APEX, { details: [invalidFields([`data.hostname: ${host.reason}`])] });
    const hostname = host.name;
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        const domain = await this.repository.lock(tx, organizationId, domainId);
        if (!isUnder(hostname, domain.apex)) {
          throw new AppError(DomainDependentErrors.NOT_UNDER_APEX, {
            message: `${hostname} does not lie under ${domain.apex}.`,
            details: [invalidFields([`data.hostname: ${hostname} is not under ${domain.apex}`])],
            metadata: { hostname, apex: domain.apex },
          });
        }
        const dependent = await tx.domainDependent.create({ data: { organizationId, domainId, hostname, kind: dto.kind, resourceId: dto.resourceId } });
        await this.audit.record(tx, principal, {
          organizationId,
          action: AuditAction.DomainDependentAdded,
          targetType: 'domain',
          targetId: domainId,
          metadata: { hostname, kind: dto.kind, resourceId: dto.resourceId },
        });
        return dependent;
      });
      return toDomainDependentDto(row);
    } catch (error) {
      if (isUniqueViolation(error, 'hostname'))
        throw new AppError(DomainDependentErrors.HOSTNAME_TAKEN, {
          details: [invalidFields([`data.hostname: ${hostname} is already a dependent of this domain`])],
          metadata: { hostname },
        });
      throw error;
    }
  }

  async remove(principal: Principal, domainId: string, dependentId: string): Promise<void> {
    const organizationId = principal.organizationId;
    await this.repository.find(this.prisma, organizationId, domainId);
    await this.prisma.$transaction(async (tx) => {
      const dependent = await tx.domainDependent.findFirst({ where: { id: dependentId, domainId, organizationId } });
      if (!dependent) throw new AppError(DomainDependentErrors.NOT_FOUND, { metadata: { id: dependentId } });
      await tx.domainDependent.delete({ where: { id: dependent.id } });
      await this.audit.record(tx, principal, {
        organizationId,
        action: AuditAction.DomainDependentRemoved,
        targetType: 'domain',
        targetId: domainId,
        metadata: { hostname: dependent.hostname, kind: dependent.kind, resourceId: dependent.resourceId },
      });
    });
  }
}
