import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { PipelineRunStatus } from '@/generated/prisma/enums';
import { PipelineRunDto, toPipelineRunDto } from './dto/pipeline-run.dto';
import { PipelineRunErrors } from './pipelines.errors';
import { lockPipeline } from './pipelines.service';
import { mayMove, RUN_TRANSITIONS } from './run-transitions';

/**
 * Runs of a pipeline. The pipeline's latestRunId / latestRunStatus always show its newest run:
 * every write takes the pipeline's row lock first, a new run becomes the latest in the same
 * transaction that records it, and a status change reaches the pipeline only while its run is still
 * the latest. Nothing is read outside the lock and written back, so no update is lost.
 */
@Injectable()
export class PipelineRunsService {
  constructor(private readonly prisma: PrismaService) {}

  async get(principal: Principal, id: string): Promise<PipelineRunDto> {
    const row = await this.prisma.pipelineRun.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(PipelineRunErrors.NOT_FOUND, { metadata: { id } });
    return toPipelineRunDto(row);
  }

  async start(principal: Principal, pipelineId: string, pipelineVersionId: string): Promise<PipelineRunDto> {
    const organizationId = principal.organizationId;
    const run = await this.prisma.$transaction(async (tx) => {
      await lockPipeline(tx, organizationId, pipelineId);
      const version = await tx.pipelineVersion.findFirst({ where: { id: pipelineVersionId, pipelineId, organizationId }, select: { id: true } });
      if (!version)
        throw new AppError(PipelineRunErrors.VERSION_NOT_FOUND, {
          metadata: { pipelineId, pipelineVersionId },
          details: [invalidFields(['data.pipelineVersionId: is not a version of this pipeline'])],
        });
      const created = await tx.pipelineRun.create({
        data: { organizationId, pipelineId, pipelineVersionId, status: 'QUEUED', createdById: principal.actorId },
      });
      await tx.pipeline.update({ where: { id: pipelineId }, data: { latestRunId: created.id, latestRunStatus: created.status } });
      return created;
    });
    return toPipelineRunDto(run);
  }

  async move(principal: Principal, id: string, status: PipelineRunStatus): Promise<PipelineRunDto> {
    const organizationId = principal.organizationId;
    const run = await this.prisma.$transaction(async (tx) => {
      const found = await tx.pipelineRun.findFirst({ where: { id, organizationId }, select: { pipelineId: true } });
      if (!found) throw new AppError(PipelineRunErrors.NOT_FOUND, { metadata: { id } });
      await lockPipeline(tx, organizationId, found.pipelineId);
      // Read again under the lock: another move may have landed while we waited.
      const current = await tx.pipelineRun.findFirst({ where: { id, organizationId } });
      if (!current) throw new AppError(PipelineRunErrors.NOT_FOUND, { metadata: { id } });
      if (!mayMove(current.status, status)) {
        const allowed = RUN_TRANSITIONS[current.status];
        throw new AppError(PipelineRunErrors.INVALID_TRANSITION, {
          message: `The run cannot move from ${current.status} to ${status}.`,
          description: allowed.length ? `From ${current.status} it can move to ${allowed.join(', ')}.` : `${current.status} is final.`,
          metadata: { from: current.status, to: status, allowed },
        });
      }
      const updated = await tx.pipelineRun.update({ where: { id }, data: { status } });
      await tx.pipeline.updateMany({ where: { id: current.pipelineId, latestRunId: id }, data: { latestRunStatus: status } });
      return updated;
    });
    return toPipelineRunDto(run);
  }
}
