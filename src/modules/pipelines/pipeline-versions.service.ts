import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { capList } from '@/common/errors/invalid-fields';
import { fromModel, type Keyset, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { PipelineVersion } from '@/generated/prisma/client';
import { CreatePipelineVersionDto, PipelineStepDto, PipelineVersionDto, StoredDefinition, toPipelineVersionDto } from './dto/pipeline-version.dto';
import { PipelineVersionErrors } from './pipelines.errors';
import { findPipeline, lockPipeline } from './pipelines.service';
import { buildStepGraph, type StepGraphProblem } from './sandbox-plan';

/** Versions of one pipeline, highest number first; cursors carry the tag 'pipelineVersions'. */
const VERSIONS: Keyset<PipelineVersion, [number]> = {
  list: 'pipelineVersions',
  orderBy: [{ version: 'desc' }],
  position: (row) => [row.version],
  parse: (values) =>
    values.length === 1 && Number.isInteger(values[0]) && (values[0] as number) >= 1 && (values[0] as number) <= 2 ** 31 - 1
      ? [values[0] as number]
      : undefined,
  after: ([version]) => ({ version: { lt: version } }),
};

@Injectable()
export class PipelineVersionsService {
  constructor(private readonly prisma: PrismaService) {}

  async list(principal: Principal, pipelineId: string, query: PaginationQueryDto): Promise<Page<PipelineVersionDto>> {
    await findPipeline(this.prisma, principal.organizationId, pipelineId);
    return paginate(fromModel(this.prisma.pipelineVersion, { organizationId: principal.organizationId, pipelineId }), VERSIONS, query, toPipelineVersionDto);
  }

  async get(principal: Principal, id: string): Promise<PipelineVersionDto> {
    const row = await this.prisma.pipelineVersion.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(PipelineVersionErrors.NOT_FOUND, { metadata: { id } });
    return toPipelineVersionDto(row);
  }

  /**
   * Publishes an immutable version numbered one above the pipeline's highest: the pipeline row lock
   * makes concurrent publishes take turns, so numbers have no gaps or duplicates.
   */
  async publish(principal: Principal, pipelineId: string, dto: CreatePipelineVersionDto): Promise<PipelineVersionDto> {
    const steps: PipelineStepDto[] = dto.steps.map((s) => ({
      name: s.name,
      executionEnvironmentId: s.executionEnvironmentId,
      cpu: s.cpu,
      memoryGiB: s.memoryGiB,
      diskGiB: s.diskGiB,
      dependsOn: s.dependsOn ?? [],
      parallelism: s.parallelism ?? 1,
    }));
    // Existence of the pipeline first: a foreign pipeline is a 404 whatever the body says.
    await findPipeline(this.prisma, principal.organizationId, pipelineId);
    const graph = buildStepGraph(steps);
    if (!graph.ok) throw graphError(graph.problem);
    const environmentIds = [...new Set(steps.map((s) => s.executionEnvironmentId))];
    const row = await this.prisma.$transaction(async (tx) => {
      await lockPipeline(tx, principal.organizationId, pipelineId);
      // Key-share locks: the environments cannot be deleted before this version is recorded.
      const found = await tx.$queryRaw<
        { id: string }[]
      >`SELECT "id" FROM "ExecutionEnvironment" WHERE "organizationId" = ${principal.organizationId} AND "id" = ANY(${environmentIds}) FOR KEY SHARE`;
      const known = new Set(found.map((e) => e.id));
      const foreign = steps.filter((s) => !known.has(s.executionEnvironmentId));
      if (foreign.length > 0) {
        throw new AppError(PipelineVersionErrors.UNKNOWN_EXECUTION_ENVIRONMENT, {
          message: `Step ${foreign[0].name} names an execution environment that does not exist in your organization.`,
          details: [
            {
              title: 'Steps with an unknown execution environment',
              render: 'list',
              items: capList(foreign.map((s) => `${s.name}: executionEnvironmentId ${s.executionEnvironmentId}`)),
            },
          ],
          metadata: { steps: foreign.slice(0, 20).map((s) => s.name) },
        });
      }
      const last = await tx.pipelineVersion.aggregate({ where: { pipelineId }, _max: { version: true } });
      const definition: StoredDefinition = { steps };
      const version = await tx.pipelineVersion.create({
        data: {
          organizationId: principal.organizationId,
          pipelineId,
          version: (last._max.version ?? 0) + 1,
          definition: definition as object,
          createdById: principal.actorId,
        },
      });
      await tx.pipelineVersionEnvironment.createMany({
        data: environmentIds.map((executionEnvironmentId) => ({ pipelineVersionId: version.id, executionEnvironmentId })),
      });
      return version;
    });
    return toPipelineVersionDto(row);
  }
}

function graphError(problem: StepGraphProblem): AppError {
  switch (problem.kind) {
    case 'duplicateStepName':
      return new AppError(PipelineVersionErrors.DUPLICATE_STEP_NAME, {
        message: `Two steps are named ${problem.steps[0]}.`,
        details: [{ title: 'Duplicate step names', render: 'list', items: capList(problem.steps) }],
        metadata: { steps: problem.steps },
      });
    case 'unknownDependency':
      return new AppError(PipelineVersionErrors.UNKNOWN_DEPENDENCY, {
        message: `Step ${problem.step} depends on ${problem.dependsOn}, which is not a step of the version.`,
        details: [{ title: 'Unknown dependencies', render: 'list', items: capList([`${problem.step}: dependsOn ${problem.dependsOn}`]) }],
        metadata: { step: problem.step, dependsOn: problem.dependsOn },
      });
    case 'cycle':
      return new AppError(PipelineVersionErrors.DEPENDENCY_CYCLE, {
        message: `Steps ${problem.steps.join(' -> ')} -> ${problem.steps[0]} form a cycle.`,
        details: [
          {
            title: 'Steps on one cycle, in order (each depends on the one before it, the first on the last)',
            render: 'list',
            items: capList(problem.steps, 100),
          },
        ],
        metadata: { steps: problem.steps.slice(0, 100) },
      });
  }
}
