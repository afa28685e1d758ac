import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateProjectRequest, ProjectDto, UpdateProjectRequest } from './dto/project.dto';
import { ProjectErrors } from './projects.errors';
import { ProjectsService } from './projects.service';

@ApiTags('projects')
@Controller('projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Get()
  @RequirePermission(Permission.ProjectsRead)
  @ApiOperation({ summary: "List the organization's projects", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(ProjectDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.projects.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.ProjectsWrite)
  @ApiOperation({ summary: 'Create a project' })
  @ApiDataResponse(ProjectDto, { status: 201 })
  @ApiErrors(ProjectErrors.GIVEN_ID_TAKEN)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateProjectRequest) {
    return { data: await this.projects.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.ProjectsRead)
  @ApiOperation({ summary: 'Get a project' })
  @ApiDataResponse(ProjectDto)
  @ApiErrors(ProjectErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.projects.get(principal, id) };
  }

  @Patch(':id')
  @RequirePermission(Permission.ProjectsWrite)
  @ApiOperation({ summary: 'Update a project', description: 'Only the fields present change.' })
  @ApiDataResponse(ProjectDto)
  @ApiErrors(ProjectErrors.NOT_FOUND, ProjectErrors.GIVEN_ID_TAKEN)
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateProjectRequest) {
    return { data: await this.projects.update(principal, id, body.data) };
  }

  @Delete(':id')
  @RequirePermission(Permission.ProjectsWrite)
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a project and its pipelines' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(ProjectErrors.NOT_FOUND)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.projects.remove(principal, id);
  }
}
