import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireRole } from '@/common/auth/auth.decorators';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { AuthErrors } from '@/common/errors/common.errors';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateServiceAccountRequest, ServiceAccountDto } from './dto/service-account.dto';
import { ServiceAccountErrors } from './service-accounts.errors';
import { ServiceAccountsService } from './service-accounts.service';

@ApiTags('service-accounts')
@Controller('service-accounts')
export class ServiceAccountsController {
  constructor(private readonly serviceAccounts: ServiceAccountsService) {}

  @Get()
  @ApiOperation({ summary: "List the organization's service accounts" })
  @ApiPageResponse(ServiceAccountDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.serviceAccounts.list(principal, query);
  }

  @Post()
  @RequireRole('ADMIN')
  @ApiOperation({ summary: 'Create a service account', description: 'Issue it a token with POST /api-keys (ownerId = the service account id).' })
  @ApiDataResponse(ServiceAccountDto, { status: 201 })
  @ApiErrors(AuthErrors.FORBIDDEN, ServiceAccountErrors.NAME_TAKEN)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateServiceAccountRequest) {
    return { data: await this.serviceAccounts.create(principal, body.data) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a service account' })
  @ApiDataResponse(ServiceAccountDto)
  @ApiErrors(ServiceAccountErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.serviceAccounts.get(principal, id) };
  }
}
