import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { PrismaService } from '@/common/prisma/prisma.service';
import { VENDORS } from '@/modules/execution-environments/vendors';
import type { SandboxPlanDto } from './dto/sandbox-plan.dto';
import type { StoredDefinition } from './dto/pipeline-version.dto';
import { PipelineVersionErrors, SandboxPlanErrors } from './pipelines.errors';
import { planSandboxes, type InstanceCatalogue, type SandboxOverheads, type SandboxPlanProblem } from './sandbox-plan';
import overheads from './sandbox-plan/sandbox-overheads.json';

const CATALOGUES: Record<string, InstanceCatalogue> = Object.fromEntries(Object.entries(VENDORS).map(([type, vendor]) => [type, vendor.catalogue]));

/** Loads a version and its environments and hands them to the pure calculator (`planSandboxes`). */
@Injectable()
export class SandboxPlanService {
  constructor(private readonly prisma: PrismaService) {}

  async plan(principal: Principal, pipelineVersionId: string): Promise<SandboxPlanDto> {
    const organizationId = principal.organizationId;
    const version = await this.prisma.pipelineVersion.findFirst({
      where: { id: pipelineVersionId, organizationId },
      select: { definition: true, environments: { select: { executionEnvironmentId: true } } },
    });
    if (!version) throw new AppError(PipelineVersionErrors.NOT_FOUND, { metadata: { id: pipelineVersionId } });
    const environments = await this.prisma.executionEnvironment.findMany({
      where: { organizationId, id: { in: version.environments.map((e) => e.executionEnvironmentId) } },
      select: { id: true, type: true, region: true },
    });
    const result = planSandboxes({
      steps: (version.definition as unknown as StoredDefinition).steps,
      environments: environments.map((e) => ({ id: e.id, vendor: e.type, region: e.region })),
      catalogues: CATALOGUES,
      overheads: overheads as SandboxOverheads,
    });
    if (!result.ok) throw planError(result.problem);
    return { pools: result.pools };
  }
}

function planError(problem: SandboxPlanProblem): Error {
  switch (problem.kind) {
    case 'fitsNoInstanceType': {
      const who = problem.steps.length === 1 ? `Step ${problem.steps[0]} needs` : `The sandbox slot of steps ${problem.steps.join(', ')} needs`;
      return new AppError(SandboxPlanErrors.STEP_FITS_NO_INSTANCE_TYPE, {
        message: `${who} more than the largest instance type, ${problem.largestType}, offers after the host reservation.`,
        details: [{ title: 'Steps that fit no instance type', render: 'list', items: problem.steps }],
        metadata: { steps: problem.steps, largestType: problem.largestType, executionEnvironmentId: problem.executionEnvironmentId },
      });
    }
    case 'noInstanceTypeInRegion':
      return new AppError(SandboxPlanErrors.NO_INSTANCE_TYPE_IN_REGION, {
        message: `${problem.vendor} offers no microVM-capable instance type in ${problem.region}.`,
        metadata: { ...problem },
      });
    default:
      // A stored version always has a valid graph, known environments and a vendor with a catalogue.
      return new Error(`sandbox plan of a stored version failed: ${JSON.stringify(problem)}`);
  }
}
