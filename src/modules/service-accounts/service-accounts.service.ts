import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { roleAtLeast } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { isUniqueViolation } from '@/common/http/given-id';
import { fromOrganization, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { CreateServiceAccountDto, ServiceAccountDto, toServiceAccountDto } from './dto/service-account.dto';
import { AuthErrors } from '@/common/errors/common.errors';
import { ServiceAccountErrors } from './service-accounts.errors';
import type { ServiceAccount } from '@/generated/prisma/client';

/** The list's keyset: newest first; its cursors carry the tag 'serviceAccounts'. */
const LIST = newestFirst<ServiceAccount>('serviceAccounts');

@Injectable()
export class ServiceAccountsService {
  constructor(private readonly prisma: PrismaService) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<ServiceAccountDto>> {
    return paginate(fromOrganization(this.prisma.organization, principal.organizationId, 'serviceAccounts'), LIST, query, toServiceAccountDto);
  }

  async get(principal: Principal, id: string): Promise<ServiceAccountDto> {
    const row = await this.prisma.serviceAccount.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(ServiceAccountErrors.NOT_FOUND, { metadata: { id } });
    return toServiceAccountDto(row);
  }

  async create(principal: Principal, dto: CreateServiceAccountDto): Promise<ServiceAccountDto> {
    const role = dto.role ?? 'MEMBER';
    // Nobody can mint an identity more powerful than themselves.
    if (!roleAtLeast(principal.role, role)) throw new AppError(AuthErrors.FORBIDDEN, { message: `Your role ${principal.role} cannot create a ${role} service account.` });
    try {
      const row = await this.prisma.serviceAccount.create({
        data: { organizationId: principal.organizationId, name: dto.name, description: dto.description, role, createdById: principal.actorId, createdByName: principal.actorName },
      });
      return toServiceAccountDto(row);
    } catch (error) {
      if (isUniqueViolation(error, 'name')) throw new AppError(ServiceAccountErrors.NAME_TAKEN, { metadata: { name: dto.name } });
      throw error;
    }
  }
}
