import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { DomainDependentsService } from './domain-dependents.service';
import { DomainDependentErrors, DomainErrors } from '../domains.errors';
import { CreateDomainDependentRequest, DomainDependentDto } from '../dto/domain.dto';

@ApiTags('domains')
@Controller('domains/:id/dependents')
export class DomainDependentsController {
  constructor(private readonly dependents: DomainDependentsService) {}

  @Get()
  @RequirePermission(Permission.DomainsRead)
  @ApiOperation({ summary: "List a domain's dependents", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(DomainDependentDto)
  @ApiErrors(DomainErrors.NOT_FOUND)
  list(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: PaginationQueryDto) {
    return this.dependents.list(principal, id, query);
  }

  @Post()
  @RequirePermission(Permission.DomainsWrite)
  @ApiOperation({
    summary: 'Record a dependent',
    description:
      'A hostname strictly under the apex that something of the platform uses (a pipeline preview hostname, a child apex). While a domain has dependents it cannot be deleted.',
  })
  @ApiDataResponse(DomainDependentDto, { status: 201 })
  @ApiErrors(DomainErrors.NOT_FOUND, DomainDependentErrors.NOT_UNDER_APEX, DomainDependentErrors.HOSTNAME_TAKEN)
  async create(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: CreateDomainDependentRequest) {
    return { data: await this.dependents.create(principal, id, body.data) };
  }

  @Delete(':dependentId')
  @HttpCode(204)
  @RequirePermission(Permission.DomainsWrite)
  @ApiOperation({ summary: 'Remove a dependent' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors(DomainErrors.NOT_FOUND, DomainDependentErrors.NOT_FOUND)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('dependentId') dependentId: string): Promise<void> {
    await this.dependents.remove(principal, id, dependentId);
  }
}
