import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrorResponses } from '@/common/errors/api-error-responses';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyDto, ApiKeyQueryDto, CreateApiKeyRequest, CreatedApiKeyDto } from './dto/api-key.dto';

@ApiTags('api-keys')
@ApiErrorResponses()
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @RequirePermission(Permission.ApiKeysOwn)
  @ApiOperation({ summary: 'Create an API key', description: 'The response carries `token`, the secret, once. Keys for others need `apiKeys:manageOthers` and an owner whose role is not above yours; a key cannot outlive the key that creates it.' })
  @ApiDataResponse(CreatedApiKeyDto, { status: 201 })
  @ApiUnprocessableEntityResponse({ description: 'Owner not in the organization, or expiresAt in the past', type: ErrorBodyDto })
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateApiKeyRequest) {
    return { data: await this.apiKeys.create(principal, body.data) };
  }

  @Get()
  @RequirePermission(Permission.ApiKeysOwn)
  @ApiOperation({ summary: 'List API keys (without tokens)', description: 'Your own keys; with `apiKeys:manageOthers`, also those of members and service accounts whose role is not above yours. Filter with `ownerId`.' })
  @ApiPageResponse(ApiKeyDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ApiKeyQueryDto) {
    return this.apiKeys.list(principal, query);
  }

  @Get(':id')
  @RequirePermission(Permission.ApiKeysOwn)
  @ApiOperation({ summary: 'Get an API key (without its token)' })
  @ApiDataResponse(ApiKeyDto)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.apiKeys.get(principal, id) };
  }

  @Post(':id/rotate')
  @Header('Cache-Control', 'no-store')
  @RequirePermission(Permission.ApiKeysOwn)
  @ApiOperation({ summary: 'Rotate an API key', description: 'Issues a new token for the same key (returned once, in `token`); the old token stops working at once in every API process. For a leaked token.' })
  @ApiDataResponse(CreatedApiKeyDto, { status: 201 })
  async rotate(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.apiKeys.rotate(principal, id) };
  }

  @Delete(':id')
  @RequirePermission(Permission.ApiKeysOwn)
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key', description: 'Takes effect at once in every API process.' })
  @ApiNoContentResponse()
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.apiKeys.revoke(principal, id);
  }
}
