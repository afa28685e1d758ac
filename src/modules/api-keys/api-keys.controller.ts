import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { AuthErrors } from '@/common/errors/common.errors';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { NoStore } from '@/common/http/no-store';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { ApiKeyErrors } from './api-keys.errors';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyDto, ApiKeyQueryDto, CreateApiKeyRequest, CreatedApiKeyDto } from './dto/api-key.dto';

@ApiTags('api-keys')
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @RequirePermission(Permission.ApiKeysOwn)
  @RateLimit('keyCreation')
  @NoStore()
  @ApiOperation({
    summary: 'Create an API key',
    description:
      "The response carries `token`, the secret, once (sent with `Cache-Control: no-store`). Keys for others need `apiKeys:manageOthers` and an owner whose role is not above yours; a key of an ADMIN or OWNER member is issued only by that member or an OWNER (its token acts as that person), and only a superadmin issues keys for another superadmin; a key cannot outlive the key that creates it. `scopes` limits the key to some permissions (each held by the owner's role, else 422); a scoped key may call only the routes needing one of them, never a superadmin-only route, and is kept scoped when rotated.",
  })
  @ApiDataResponse(CreatedApiKeyDto, { status: 201 })
  @ApiErrors(
    ApiKeyErrors.OWNER_NOT_FOUND,
    ApiKeyErrors.EXPIRY_IN_PAST,
    ApiKeyErrors.EXPIRY_AFTER_CREATOR,
    ApiKeyErrors.SCOPE_NOT_HELD,
    ApiKeyErrors.SCOPE_BEYOND_CREATOR,
    AuthErrors.FORBIDDEN,
  )
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateApiKeyRequest) {
    return { data: await this.apiKeys.create(principal, body.data) };
  }

  @Get()
  @RequirePermission(Permission.ApiKeysOwn)
  @ApiOperation({
    summary: 'List API keys (without tokens)',
    description: 'Your own keys; with `apiKeys:manageOthers`, also those of members and service accounts whose role is not above yours. Filter with `ownerId`.',
  })
  @ApiPageResponse(ApiKeyDto)
  @ApiErrors(AuthErrors.FORBIDDEN)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ApiKeyQueryDto) {
    return this.apiKeys.list(principal, query);
  }

  @Get(':id')
  @RequirePermission(Permission.ApiKeysOwn)
  @ApiOperation({ summary: 'Get an API key (without its token)' })
  @ApiDataResponse(ApiKeyDto)
  @ApiErrors(ApiKeyErrors.NOT_FOUND, AuthErrors.FORBIDDEN)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.apiKeys.get(principal, id) };
  }

  @Post(':id/rotate')
  @RequirePermission(Permission.ApiKeysOwn)
  @RateLimit('keyCreation')
  @NoStore()
  @ApiOperation({
    summary: 'Rotate an API key',
    description:
      'Issues a new token for the same key (returned once, in `token`, with `Cache-Control: no-store`); the old token stops working at once in every API process. For a leaked token. The key keeps its expiry, so a caller whose key expires earlier cannot rotate it (422); only a superadmin rotates the key of another superadmin, and only the member or an OWNER rotates the key of an ADMIN or OWNER member. The key keeps its scopes; a scoped key may rotate only keys scoped within its own scopes (403).',
  })
  @ApiDataResponse(CreatedApiKeyDto, { status: 201 })
  @ApiErrors(ApiKeyErrors.NOT_FOUND, ApiKeyErrors.NOT_ROTATABLE, ApiKeyErrors.EXPIRY_AFTER_CREATOR, AuthErrors.FORBIDDEN)
  async rotate(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.apiKeys.rotate(principal, id) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission(Permission.ApiKeysOwn)
  @ApiOperation({ summary: 'Revoke an API key', description: 'Takes effect at once in every API process.' })
  @ApiNoContentResponse({ description: 'Revoked (also when it already was)' })
  @ApiErrors(ApiKeyErrors.NOT_FOUND, AuthErrors.FORBIDDEN)
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.apiKeys.revoke(principal, id);
  }
}
