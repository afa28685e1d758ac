import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { DomainGrantsService } from './domain-grants.service';
import { DomainErrors, DomainGrantErrors } from '../domains.errors';
import { CreateDomainGrantRequest, DomainGrantDto } from '../dto/domain.dto';

@ApiTags('domains')
@Controller('domains/:id/grants')
export class DomainGrantsController {
  constructor(private readonly grants: DomainGrantsService) {}

  @Get()
  @RequirePermission(Permission.DomainsRead)
  @ApiOperation({
    summary: 'List the organizations granted the right to nest under a domain',
    description: 'Newest first; paginated with `cursor` and `limit`.',
  })
  @ApiPageResponse(DomainGrantDto)
  @ApiErrors(DomainErrors.NOT_FOUND)
  list(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: PaginationQueryDto) {
    return this.grants.list(principal, id, query);
  }

  @Post()
  @RequirePermission(Permission.DomainsWrite)
  @ApiOperation({
    summary: 'Grant another organization the right to register apexes under this one',
    description: 'The grantee learns nothing of the domain beyond what GET /domains/apex-status says.',
  })
  @ApiDataResponse(DomainGrantDto, { status: 201 })
  @ApiErrors(DomainErrors.NOT_FOUND, DomainGrantErrors.ALREADY_GRANTED, DomainGrantErrors.ORGANIZATION_NOT_FOUND, DomainGrantErrors.OWN_ORGANIZATION)
  async create(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: CreateDomainGrantRequest) {
    return { data: await this.grants.create(principal, id, body.data) };
  }

  @Delete(':organizationId')
  @HttpCode(204)
  @RequirePermission(Permission.DomainsWrite)
  @ApiOperation({
    summary: "Revoke an organization's grant",
    description: 'Stops new registrations under the apex; apexes the organization already registered stay.',
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors(DomainErrors.NOT_FOUND, DomainGrantErrors.NOT_FOUND)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('organizationId') organizationId: string): Promise<void> {
    await this.grants.remove(principal, id, organizationId);
  }
}
