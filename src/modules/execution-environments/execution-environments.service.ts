import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { createWithGivenId } from '@/common/http/given-id';
import { fromOrganization, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { CreateExecutionEnvironmentDto, ExecutionEnvironmentDto, toExecutionEnvironmentDto } from './dto/execution-environment.dto';
import { ExecutionEnvironmentErrors } from './execution-environments.errors';
import type { ExecutionEnvironment } from '@/generated/prisma/client';

/** The list's keyset: newest first; its cursors carry the tag 'executionEnvironments'. */
const LIST = newestFirst<ExecutionEnvironment>('executionEnvironments');

@Injectable()
export class ExecutionEnvironmentsService {
  constructor(private readonly prisma: PrismaService) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<ExecutionEnvironmentDto>> {
    return paginate(fromOrganization(this.prisma.organization, principal.organizationId, 'executionEnvironments'), LIST, query, toExecutionEnvironmentDto);
  }

  async get(principal: Principal, id: string): Promise<ExecutionEnvironmentDto> {
    const row = await this.prisma.executionEnvironment.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(ExecutionEnvironmentErrors.NOT_FOUND, { metadata: { id } });
    return toExecutionEnvironmentDto(row);
  }

  async create(principal: Principal, dto: CreateExecutionEnvironmentDto): Promise<ExecutionEnvironmentDto> {
    const { givenId: _explicit, ...fields } = dto;
    const row = await createWithGivenId(dto.name, dto.givenId, ExecutionEnvironmentErrors.GIVEN_ID_TAKEN, (givenId) =>
      this.prisma.executionEnvironment.create({ data: { ...fields, givenId, organizationId: principal.organizationId } }),
    );
    return toExecutionEnvironmentDto(row);
  }
}
