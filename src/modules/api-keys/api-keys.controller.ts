import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@/common/auth/auth.decorators';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { AuthErrors } from '@/common/errors/common.errors';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { ApiKeyErrors } from './api-keys.errors';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyDto, CreateApiKeyRequest, CreatedApiKeyDto } from './dto/api-key.dto';

@ApiTags('api-keys')
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @RateLimit('keyCreation')
  // The response carries the secret: no cache on the way may keep it.
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Create an API key', description: 'The response carries `token`, the secret, once (sent with `Cache-Control: no-store`). Keys for others need ADMIN.' })
  @ApiDataResponse(CreatedApiKeyDto, { status: 201 })
  @ApiErrors(ApiKeyErrors.OWNER_NOT_FOUND, ApiKeyErrors.EXPIRY_IN_PAST, AuthErrors.FORBIDDEN)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateApiKeyRequest) {
    return { data: await this.apiKeys.create(principal, body.data) };
  }

  @Get()
  @ApiOperation({ summary: "List the organization's API keys (without tokens)" })
  @ApiPageResponse(ApiKeyDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.apiKeys.list(principal, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get an API key (without its token)' })
  @ApiDataResponse(ApiKeyDto)
  @ApiErrors(ApiKeyErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.apiKeys.get(principal, id) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key', description: 'Takes effect at once in every API process.' })
  @ApiNoContentResponse({ description: 'Revoked (also when it already was)' })
  @ApiErrors(ApiKeyErrors.NOT_FOUND, AuthErrors.FORBIDDEN)
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.apiKeys.revoke(principal, id);
  }
}
