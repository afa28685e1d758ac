import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { CurrentPrincipal } from '@/common/auth/auth.decorators';
import type { Principal } from '@/common/auth/principal';
import { ApiErrorResponses } from '@/common/errors/api-error-responses';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyDto, CreateApiKeyRequest, CreatedApiKeyDto } from './dto/api-key.dto';

@ApiTags('api-keys')
@ApiErrorResponses()
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @ApiOperation({ summary: 'Create an API key', description: 'The response carries `token`, the secret, once. Keys for others need ADMIN.' })
  @ApiDataResponse(CreatedApiKeyDto, { status: 201 })
  @ApiUnprocessableEntityResponse({ description: 'Owner not in the organization, or expiresAt in the past', type: ErrorBodyDto })
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
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.apiKeys.get(principal, id) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key', description: 'Takes effect at once in every API process.' })
  @ApiNoContentResponse()
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.apiKeys.revoke(principal, id);
  }
}
