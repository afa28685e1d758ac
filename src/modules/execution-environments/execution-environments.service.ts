import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { capList, invalidFields } from '@/common/errors/invalid-fields';
import { createWithGivenId } from '@/common/http/given-id';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma, type ExecutionEnvironment } from '@/generated/prisma/client';
import {
  CreateExecutionEnvironmentDto,
  ExecutionEnvironmentDto,
  toExecutionEnvironmentDto,
  UpdateExecutionEnvironmentDto,
} from './dto/execution-environment.dto';
import { ExecutionEnvironmentErrors } from './execution-environments.errors';
import { VENDOR_FIELDS, VENDORS, vendorShapeProblems } from './vendors';

/** The list's keyset: newest first; its cursors carry the tag 'executionEnvironments'. */
const LIST = newestFirst<ExecutionEnvironment>('executionEnvironments');

@Injectable()
export class ExecutionEnvironmentsService {
  constructor(private readonly prisma: PrismaService) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<ExecutionEnvironmentDto>> {
    return paginate(fromModel(this.prisma.executionEnvironment, { organizationId: principal.organizationId }), LIST, query, toExecutionEnvironmentDto);
  }

  async get(principal: Principal, id: string): Promise<ExecutionEnvironmentDto> {
    return toExecutionEnvironmentDto(await this.find(this.prisma, principal.organizationId, id));
  }

  async create(principal: Principal, dto: CreateExecutionEnvironmentDto): Promise<ExecutionEnvironmentDto> {
    assertVendorShapes(dto.type, dto);
    const { givenId: _explicit, ...fields } = dto;
    const row = await createWithGivenId(dto.name, dto.givenId, ExecutionEnvironmentErrors.GIVEN_ID_TAKEN, (givenId) =>
      this.prisma.executionEnvironment.create({ data: { ...fields, givenId, organizationId: principal.organizationId } }),
    );
    return toExecutionEnvironmentDto(row);
  }

  /** Only the fields present change. A new `type` re-checks every vendor field of the result; otherwise the fields sent are checked. */
  async update(principal: Principal, id: string, dto: UpdateExecutionEnvironmentDto): Promise<ExecutionEnvironmentDto> {
    try {
      // The row lock keeps the type and fields checked here from changing before the write.
      await this.prisma.$transaction(async (tx) => {
        const locked = await tx.$queryRaw<
          { id: string }[]
        >`SELECT "id" FROM "ExecutionEnvironment" WHERE "id" = ${id} AND "organizationId" = ${principal.organizationId} FOR UPDATE`;
        if (locked.length === 0) throw new AppError(ExecutionEnvironmentErrors.NOT_FOUND, { metadata: { id } });
        const current = await this.find(tx, principal.organizationId, id);
        const type = dto.type ?? current.type;
        assertVendorShapes(type, type !== current.type ? { ...pickVendorFields(current), ...dto } : dto);
        await tx.executionEnvironment.updateMany({ where: { id, organizationId: principal.organizationId }, data: dto });
      });
    } catch (error) {
      if (isUniqueViolation(error, 'givenId'))
        throw new AppError(ExecutionEnvironmentErrors.GIVEN_ID_TAKEN, {
          metadata: { givenId: dto.givenId },
          details: [invalidFields(['data.givenId: is already taken'])],
        });
      throw error;
    }
    return this.get(principal, id);
  }

  /**
   * Deletes an environment no pipeline version uses. The row lock makes the check and the delete one
   * step against concurrent publishing (which takes a key-share lock on the environment through its
   * foreign key); the foreign key is the backstop.
   */
  async remove(principal: Principal, id: string): Promise<void> {
    try {
      await this.prisma.$transaction(async (tx) => {
        const locked = await tx.$queryRaw<
          { id: string }[]
        >`SELECT "id" FROM "ExecutionEnvironment" WHERE "id" = ${id} AND "organizationId" = ${principal.organizationId} FOR UPDATE`;
        if (locked.length === 0) throw new AppError(ExecutionEnvironmentErrors.NOT_FOUND, { metadata: { id } });
        const users = await tx.pipelineVersionEnvironment.findMany({
          where: { executionEnvironmentId: id },
          select: { pipelineVersion: { select: { id: true, version: true, pipeline: { select: { id: true, givenId: true } } } } },
          orderBy: { pipelineVersionId: 'asc' },
          take: 1000,
        });
        if (users.length > 0)
          throw inUse(
            id,
            users.map((u) => u.pipelineVersion),
          );
        await tx.executionEnvironment.delete({ where: { id } });
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003') throw inUse(id, []);
      throw error;
    }
  }

  private async find(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<ExecutionEnvironment> {
    const row = await client.executionEnvironment.findFirst({ where: { id, organizationId } });
    if (!row) throw new AppError(ExecutionEnvironmentErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }
}

function pickVendorFields(row: ExecutionEnvironment): Record<(typeof VENDOR_FIELDS)[number], string> {
  return { region: row.region, vpcId: row.vpcId, subnetId: row.subnetId, securityGroupId: row.securityGroupId, cloudAccountId: row.cloudAccountId };
}

/** A 400 naming every vendor field whose value does not have `type`'s shape. */
function assertVendorShapes(type: keyof typeof VENDORS, values: Partial<Record<(typeof VENDOR_FIELDS)[number], string>>): void {
  const problems = vendorShapeProblems(VENDORS[type], values);
  if (problems.length > 0) {
    throw new AppError(ExecutionEnvironmentErrors.INVALID_IDENTIFIER, {
      message: `${problems.length === 1 ? 'A field does' : 'Fields do'} not have the shape of ${type}'s identifiers.`,
      details: [invalidFields(problems)],
      metadata: { type, fields: problems.map((p) => p.slice('data.'.length, p.indexOf(':'))) },
    });
  }
}

function inUse(id: string, versions: { id: string; version: number; pipeline: { id: string; givenId: string } }[]): AppError {
  return new AppError(ExecutionEnvironmentErrors.IN_USE, {
    metadata: { id, pipelineVersionIds: versions.slice(0, 20).map((v) => v.id) },
    details: [
      {
        title: 'Pipeline versions using the environment',
        render: 'list',
        items: versions.length
          ? capList(versions.map((v) => `${v.pipeline.givenId} v${v.version} (pipelineVersionId ${v.id}, pipelineId ${v.pipeline.id})`))
          : ['a version published while deleting'],
      },
    ],
  });
}
