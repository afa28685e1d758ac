import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { PipelineErrors, PipelineRunErrors, PipelineVersionErrors } from './pipelines.errors';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreatePipelineRequest, PipelineDto, PipelinesQueryDto, UpdatePipelineRequest } from './dto/pipeline.dto';
import { CreatePipelineRunRequest, PipelineRunDto } from './dto/pipeline-run.dto';
import { CreatePipelineVersionRequest, PipelineVersionDto } from './dto/pipeline-version.dto';
import { PipelineRunsService } from './pipeline-runs.service';
import { PipelineVersionsService } from './pipeline-versions.service';
import { PipelinesService } from './pipelines.service';

@ApiTags('pipelines')
@Controller('pipelines')
export class PipelinesController {
  constructor(
    private readonly pipelines: PipelinesService,
    private readonly versions: PipelineVersionsService,
    private readonly runs: PipelineRunsService,
  ) {}

  @Get()
  @RequirePermission(Permission.PipelinesRead)
  @ApiOperation({
    summary: "List the organization's pipelines",
    description: 'Newest first; `projectId` narrows to one project; paginated with `cursor` and `limit`.',
  })
  @ApiPageResponse(PipelineDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PipelinesQueryDto) {
    return this.pipelines.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.PipelinesWrite)
  @ApiOperation({ summary: 'Create a pipeline in a project' })
  @ApiDataResponse(PipelineDto, { status: 201 })
  @ApiErrors(PipelineErrors.GIVEN_ID_TAKEN, PipelineErrors.PROJECT_NOT_FOUND)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreatePipelineRequest) {
    return { data: await this.pipelines.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.PipelinesRead)
  @ApiOperation({ summary: 'Get a pipeline', description: 'latestRunId and latestRunStatus show its newest run.' })
  @ApiDataResponse(PipelineDto)
  @ApiErrors(PipelineErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.pipelines.get(principal, id) };
  }

  @Patch(':id')
  @RequirePermission(Permission.PipelinesWrite)
  @ApiOperation({ summary: 'Update a pipeline', description: 'Only the fields present change.' })
  @ApiDataResponse(PipelineDto)
  @ApiErrors(PipelineErrors.NOT_FOUND, PipelineErrors.GIVEN_ID_TAKEN)
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdatePipelineRequest) {
    return { data: await this.pipelines.update(principal, id, body.data) };
  }

  @Delete(':id')
  @RequirePermission(Permission.PipelinesWrite)
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a pipeline with its versions and runs' })
  @ApiNoContentResponse()
  @ApiErrors(PipelineErrors.NOT_FOUND)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.pipelines.remove(principal, id);
  }

  @Post(':id/versions')
  @RequirePermission(Permission.PipelinesWrite)
  @ApiOperation({
    summary: 'Publish an immutable pipeline version',
    description:
      "Numbered one above the pipeline's highest version. Up to 5,000 steps with unique names; dependsOn names steps of the version and forms no cycle (a 422 listing the steps of one cycle in order); every environment must be your organization's (a 422 naming the step).",
  })
  @ApiDataResponse(PipelineVersionDto, { status: 201 })
  @ApiErrors(
    PipelineErrors.NOT_FOUND,
    PipelineVersionErrors.DUPLICATE_STEP_NAME,
    PipelineVersionErrors.UNKNOWN_DEPENDENCY,
    PipelineVersionErrors.DEPENDENCY_CYCLE,
    PipelineVersionErrors.UNKNOWN_EXECUTION_ENVIRONMENT,
  )
  async publish(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: CreatePipelineVersionRequest) {
    return { data: await this.versions.publish(principal, id, body.data) };
  }

  @Get(':id/versions')
  @RequirePermission(Permission.PipelinesRead)
  @ApiOperation({ summary: "List a pipeline's versions", description: 'Highest version first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(PipelineVersionDto)
  @ApiErrors(PipelineErrors.NOT_FOUND)
  listVersions(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: PaginationQueryDto) {
    return this.versions.list(principal, id, query);
  }

  @Post(':id/runs')
  @RequirePermission(Permission.PipelinesWrite)
  @ApiOperation({ summary: 'Record a run of a pipeline version', description: "The run starts QUEUED and becomes the pipeline's latest run." })
  @ApiDataResponse(PipelineRunDto, { status: 201 })
  @ApiErrors(PipelineErrors.NOT_FOUND, PipelineRunErrors.VERSION_NOT_FOUND)
  async startRun(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: CreatePipelineRunRequest) {
    return { data: await this.runs.start(principal, id, body.data.pipelineVersionId) };
  }
}
