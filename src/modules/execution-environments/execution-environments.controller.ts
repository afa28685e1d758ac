import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateExecutionEnvironmentRequest, ExecutionEnvironmentDto } from './dto/execution-environment.dto';
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
  @ApiOperation({ summary: 'Register an execution environment' })
  @ApiDataResponse(ExecutionEnvironmentDto, { status: 201 })
  @ApiErrors(ExecutionEnvironmentErrors.GIVEN_ID_TAKEN)
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
}
