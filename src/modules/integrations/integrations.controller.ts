import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, Public, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { GitProviderErrors, PROVIDER_CALL_ERRORS } from '@/modules/git-providers/git-providers.errors';
import { CreatedIntegrationDto, CreateIntegrationRequest, IntegrationDto, OAuthCallbackQueryDto, STATUS_DESCRIPTION } from './dto/integration.dto';
import { IntegrationErrors, OAuthErrors } from './integrations.errors';
import { IntegrationsService } from './integrations.service';
import { OAuthCallbackService } from './oauth-callback.service';

@ApiTags('integrations')
@Controller('integrations')
export class IntegrationsController {
  constructor(private readonly integrations: IntegrationsService) {}

  @Get()
  @RequirePermission(Permission.IntegrationsRead)
  @ApiOperation({ summary: "List the organization's integrations", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(IntegrationDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.integrations.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.IntegrationsWrite)
  @ApiOperation({
    summary: 'Connect a git provider account',
    description: `API_TOKEN: the token is checked with the provider first (a refused token is a 422 with the provider's reason; a provider down or too slow is a 502/503 and nothing is stored), then stored encrypted and never returned. OAUTH / APP_INSTALLATION (GitHub): the integration is created INITIATED and \`authorizeUrl\` carries a fresh single-use state (10 minutes); GET /scm/callback completes it. Status: ${STATUS_DESCRIPTION}`,
  })
  @ApiDataResponse(CreatedIntegrationDto, { status: 201 })
  @ApiErrors(IntegrationErrors.GIVEN_ID_TAKEN, IntegrationErrors.TOKEN_REQUIRED, IntegrationErrors.SERVER_REQUIRED, IntegrationErrors.SERVER_MISMATCH, IntegrationErrors.REDIRECT_NOT_ALLOWED, GitProviderErrors.CREDENTIALS_REJECTED, GitProviderErrors.NOT_CONFIGURED, ...PROVIDER_CALL_ERRORS)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateIntegrationRequest) {
    return { data: await this.integrations.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.IntegrationsRead)
  @ApiOperation({ summary: 'Get an integration', description: `Its configuration and current state; credentials are never returned. Status: ${STATUS_DESCRIPTION}` })
  @ApiDataResponse(IntegrationDto)
  @ApiErrors(IntegrationErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.integrations.get(principal, id) };
  }

  @Post(':id/validate')
  @HttpCode(200)
  @RequirePermission(Permission.IntegrationsWrite)
  @ApiOperation({ summary: 'Check the credentials with the provider again', description: 'Updates `status` (ACTIVE, NEEDS_ATTENTION when the provider refuses them, REVOKED when the installation is gone) and `lastValidatedAt`. A provider that cannot be reached changes nothing (502/503).' })
  @ApiDataResponse(IntegrationDto)
  @ApiErrors(IntegrationErrors.NOT_FOUND, IntegrationErrors.NOT_CONNECTED, GitProviderErrors.NOT_CONFIGURED, GitProviderErrors.REPOSITORY_NOT_FOUND, GitProviderErrors.INTEGRATION_NEEDS_ATTENTION, ...PROVIDER_CALL_ERRORS)
  async validate(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.integrations.validate(principal, id) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission(Permission.IntegrationsWrite)
  @ApiOperation({ summary: 'Delete an integration', description: 'Refused (409, `details` lists them) while code sources use it.' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(IntegrationErrors.NOT_FOUND, IntegrationErrors.IN_USE)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.integrations.remove(principal, id);
  }
}

@ApiTags('integrations')
@Controller('scm')
export class OAuthCallbackController {
  constructor(private readonly callback: OAuthCallbackService) {}

  @Get('callback')
  @Public()
  @RateLimit('oauthCallback')
  @ApiOperation({
    summary: 'Git provider OAuth callback',
    description:
      'Called by the browser, redirected here by the provider; no bearer token. A missing, unknown, expired (10 minutes) or already used `state` is a 400 error body, with no redirect and no token exchange. Otherwise the answer is a 302 to the URL given when the flow started (a path on this site or an allowed origin, never anything else): as it is on success, with `integration_error=<reason>` added when the provider reported an error, the code exchange failed or the installation is not accessible to the authorizing user.',
  })
  @ApiResponse({ status: 302, description: 'Back to the original URL', headers: { Location: { description: 'The original URL (plus `integration_error` on failure)', schema: { type: 'string' } } } })
  @ApiErrors(OAuthErrors.INVALID_STATE, OAuthErrors.INVALID_CALLBACK)
  async complete(@Query() query: OAuthCallbackQueryDto, @Res() res: Response): Promise<void> {
    const location = await this.callback.complete(query);
    res.status(302).setHeader('Location', location);
    res.setHeader('Cache-Control', 'no-store');
    res.end();
  }
}

