import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { AuthErrors } from '@/common/errors/common.errors';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateServiceAccountRequest, ServiceAccountDto, UpdateServiceAccountRequest } from './dto/service-account.dto';
import { ServiceAccountErrors } from './service-accounts.errors';
import { ServiceAccountsService } from './service-accounts.service';

@ApiTags('service-accounts')
@Controller('service-accounts')
export class ServiceAccountsController {
  constructor(private readonly serviceAccounts: ServiceAccountsService) {}

  @Get()
  @RequirePermission(Permission.ServiceAccountsRead)
  @ApiOperation({ summary: "List the organization's service accounts" })
  @ApiPageResponse(ServiceAccountDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.serviceAccounts.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.ServiceAccountsWrite)
  @ApiOperation({
    summary: 'Create a service account',
    description:
      'Issue it a token with POST /api-keys (ownerId = the service account id; `scopes` limits the key to some permissions of its role, e.g. `mergeQueues:reportChecks` for CI reporting to merge queues).',
  })
  @ApiDataResponse(ServiceAccountDto, { status: 201 })
  @ApiErrors(AuthErrors.FORBIDDEN, ServiceAccountErrors.NAME_TAKEN)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateServiceAccountRequest) {
    return { data: await this.serviceAccounts.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.ServiceAccountsRead)
  @ApiOperation({ summary: 'Get a service account' })
  @ApiDataResponse(ServiceAccountDto)
  @ApiErrors(ServiceAccountErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.serviceAccounts.get(principal, id) };
  }

  @Patch(':id')
  @RequirePermission(Permission.ServiceAccountsWrite)
  @ApiErrors(ServiceAccountErrors.NOT_FOUND, ServiceAccountErrors.NAME_TAKEN, AuthErrors.FORBIDDEN)
  @ApiOperation({
    summary: 'Change a service account',
    description:
      'Name, description, role. You cannot manage a service account above your role or grant a role above yours; a new role applies to its keys on their next request in every API process.',
  })
  @ApiDataResponse(ServiceAccountDto)
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateServiceAccountRequest) {
    return { data: await this.serviceAccounts.update(principal, id, body.data) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission(Permission.ServiceAccountsWrite)
  @ApiErrors(ServiceAccountErrors.NOT_FOUND, AuthErrors.FORBIDDEN)
  @ApiOperation({ summary: 'Delete a service account', description: 'Revokes its keys at once in every API process.' })
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.serviceAccounts.remove(principal, id);
  }
}
