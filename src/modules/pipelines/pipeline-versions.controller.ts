import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { PipelineVersionErrors, SandboxPlanErrors } from './pipelines.errors';
import { ApiDataResponse } from '@/common/http/envelope';
import { PipelineVersionDto } from './dto/pipeline-version.dto';
import { SandboxPlanDto } from './dto/sandbox-plan.dto';
import { PipelineVersionsService } from './pipeline-versions.service';
import { SandboxPlanService } from './sandbox-plan.service';

@ApiTags('pipelines')
@Controller('pipeline-versions')
export class PipelineVersionsController {
  constructor(
    private readonly versions: PipelineVersionsService,
    private readonly sandboxPlans: SandboxPlanService,
  ) {}

  @Get(':id')
  @RequirePermission(Permission.PipelinesRead)
  @ApiOperation({ summary: 'Get a pipeline version' })
  @ApiDataResponse(PipelineVersionDto)
  @ApiErrors(PipelineVersionErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.versions.get(principal, id) };
  }

  @Get(':id/sandbox-plan')
  @RequirePermission(Permission.PipelinesRead)
  @ApiOperation({
    summary: 'Sandbox host plan of a pipeline version',
    description:
      'One pool per execution environment the version uses: its steps, the most sandboxes that can run at once (exact maximum-weight antichain of the dependency order, weights = parallelism), ' +
      "the cheapest instance type of the vendor's catalogue in the environment's region that can run microVMs, how many sandbox slots fit on one host, and how many hosts.",
  })
  @ApiDataResponse(SandboxPlanDto)
  @ApiErrors(PipelineVersionErrors.NOT_FOUND, SandboxPlanErrors.STEP_FITS_NO_INSTANCE_TYPE, SandboxPlanErrors.NO_INSTANCE_TYPE_IN_REGION)
  async sandboxPlan(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.sandboxPlans.plan(principal, id) };
  }
}
