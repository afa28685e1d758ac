import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateExecutionEnvironmentRequest, ExecutionEnvironmentDto, UpdateExecutionEnvironmentRequest } from './dto/execution-environment.dto';
import { ExecutionEnvironmentErrors } from './execution-environments.errors';
import { ExecutionEnvironmentsService } from './execution-environments.service';

@ApiTags('execution-environments')
@Controller('execution-environments')
export class ExecutionEnvironmentsController {
  constructor(private readonly environments: ExecutionEnvironmentsService) {}

  @Get()
  @RequirePermission(Permission.ExecutionEnvironmentsRead)
  @ApiOperation({ summary: "List the organization's execution environments (cloud environments)" })
  @ApiPageResponse(ExecutionEnvironmentDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.environments.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.ExecutionEnvironmentsWrite)
  @ApiOperation({
    summary: 'Register an execution environment',
    description: 'Each vendor checks its own identifier shapes and regions; a mismatch is a 400 naming the field.',
  })
  @ApiDataResponse(ExecutionEnvironmentDto, { status: 201 })
  @ApiErrors(ExecutionEnvironmentErrors.GIVEN_ID_TAKEN, ExecutionEnvironmentErrors.INVALID_IDENTIFIER)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateExecutionEnvironmentRequest) {
    return { data: await this.environments.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.ExecutionEnvironmentsRead)
  @ApiOperation({ summary: 'Get an execution environment' })
  @ApiDataResponse(ExecutionEnvironmentDto)
  @ApiErrors(ExecutionEnvironmentErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.environments.get(principal, id) };
  }

  @Patch(':id')
  @RequirePermission(Permission.ExecutionEnvironmentsWrite)
  @ApiOperation({
    summary: 'Update an execution environment',
    description: "Only the fields present change; a new type re-checks every identifier against the new vendor's shapes.",
  })
  @ApiDataResponse(ExecutionEnvironmentDto)
  @ApiErrors(ExecutionEnvironmentErrors.NOT_FOUND, ExecutionEnvironmentErrors.GIVEN_ID_TAKEN, ExecutionEnvironmentErrors.INVALID_IDENTIFIER)
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateExecutionEnvironmentRequest) {
    return { data: await this.environments.update(principal, id, body.data) };
  }

  @Delete(':id')
  @RequirePermission(Permission.ExecutionEnvironmentsWrite)
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an execution environment', description: 'Refused with a 409 listing the pipeline versions that use it.' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(ExecutionEnvironmentErrors.NOT_FOUND, ExecutionEnvironmentErrors.IN_USE)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.environments.remove(principal, id);
  }
}
