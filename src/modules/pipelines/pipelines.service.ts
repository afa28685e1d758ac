import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { createWithGivenId } from '@/common/http/given-id';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Pipeline, Prisma } from '@/generated/prisma/client';
import { CreatePipelineDto, PipelineDto, PipelinesQueryDto, toPipelineDto, UpdatePipelineDto } from './dto/pipeline.dto';
import { PipelineErrors } from './pipelines.errors';

/** The list's keyset: newest first; its cursors carry the tag 'pipelines'. */
const LIST = newestFirst<Pipeline>('pipelines');

@Injectable()
export class PipelinesService {
  constructor(private readonly prisma: PrismaService) {}

  list(principal: Principal, query: PipelinesQueryDto): Promise<Page<PipelineDto>> {
    const where = { organizationId: principal.organizationId, ...(query.projectId ? { projectId: query.projectId } : {}) };
    return paginate(fromModel(this.prisma.pipeline, where), LIST, query, toPipelineDto);
  }

  async get(principal: Principal, id: string): Promise<PipelineDto> {
    return toPipelineDto(await findPipeline(this.prisma, principal.organizationId, id));
  }

  async create(principal: Principal, dto: CreatePipelineDto): Promise<PipelineDto> {
    const project = await this.prisma.project.findFirst({ where: { id: dto.projectId, organizationId: principal.organizationId }, select: { id: true } });
    if (!project)
      throw new AppError(PipelineErrors.PROJECT_NOT_FOUND, {
        metadata: { projectId: dto.projectId },
        details: [invalidFields(['data.projectId: is not a project of your organization'])],
      });
    const row = await createWithGivenId(dto.name, dto.givenId, PipelineErrors.GIVEN_ID_TAKEN, (givenId) =>
      this.prisma.pipeline.create({
        data: { organizationId: principal.organizationId, projectId: project.id, givenId, name: dto.name, description: dto.description },
      }),
    );
    return toPipelineDto(row);
  }

  async update(principal: Principal, id: string, dto: UpdatePipelineDto): Promise<PipelineDto> {
    try {
      const { count } = await this.prisma.pipeline.updateMany({ where: { id, organizationId: principal.organizationId }, data: dto });
      if (count === 0) throw new AppError(PipelineErrors.NOT_FOUND, { metadata: { id } });
    } catch (error) {
      if (isUniqueViolation(error, 'givenId'))
        throw new AppError(PipelineErrors.GIVEN_ID_TAKEN, { metadata: { givenId: dto.givenId }, details: [invalidFields(['data.givenId: is already taken'])] });
      throw error;
    }
    return this.get(principal, id);
  }

  /** Deletes the pipeline with its versions and runs. */
  async remove(principal: Principal, id: string): Promise<void> {
    const { count } = await this.prisma.pipeline.deleteMany({ where: { id, organizationId: principal.organizationId } });
    if (count === 0) throw new AppError(PipelineErrors.NOT_FOUND, { metadata: { id } });
  }
}

export async function findPipeline(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<Pipeline> {
  const row = await client.pipeline.findFirst({ where: { id, organizationId } });
  if (!row) throw new AppError(PipelineErrors.NOT_FOUND, { metadata: { id } });
  return row;
}

/**
 * Locks the pipeline's row for the rest of the transaction, or 404s. Every write of a pipeline's
 * versions, runs and latestRun* fields takes this lock first, so they are serialised per pipeline.
 */
export async function lockPipeline(tx: Prisma.TransactionClient, organizationId: string, id: string): Promise<void> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "Pipeline" WHERE "id" = ${id} AND "organizationId" = ${organizationId} FOR UPDATE`;
  if (rows.length === 0) throw new AppError(PipelineErrors.NOT_FOUND, { metadata: { id } });
}
