import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { PipelineRunErrors } from './pipelines.errors';
import { ApiDataResponse } from '@/common/http/envelope';
import { PipelineRunDto, UpdatePipelineRunRequest } from './dto/pipeline-run.dto';
import { PipelineRunsService } from './pipeline-runs.service';

@ApiTags('pipelines')
@Controller('pipeline-runs')
export class PipelineRunsController {
  constructor(private readonly runs: PipelineRunsService) {}

  @Get(':id')
  @RequirePermission(Permission.PipelinesRead)
  @ApiOperation({ summary: 'Get a pipeline run' })
  @ApiDataResponse(PipelineRunDto)
  @ApiErrors(PipelineRunErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.runs.get(principal, id) };
  }

  @Patch(':id')
  @RequirePermission(Permission.PipelinesWrite)
  @ApiOperation({
    summary: "Move a run's status",
    description: 'QUEUED -> RUNNING -> SUCCEEDED | FAILED | CANCELED, or QUEUED -> CANCELED; any other move is a 422 naming both statuses.',
  })
  @ApiDataResponse(PipelineRunDto)
  @ApiErrors(PipelineRunErrors.NOT_FOUND, PipelineRunErrors.INVALID_TRANSITION)
  async move(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdatePipelineRunRequest) {
    return { data: await this.runs.move(principal, id, body.data.status) };
  }
}
