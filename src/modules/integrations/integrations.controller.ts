import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal, Public, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { NoStore } from '@/common/http/no-store';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { GitProviderErrors, PROVIDER_CALL_ERRORS } from '@/modules/git-providers/git-providers.errors';
import {
  CreatedIntegrationDto,
  CreateIntegrationRequest,
  IntegrationDto,
  IntegrationWebhookSecretDto,
  OAuthStartQueryDto,
  STATUS_DESCRIPTION,
} from './dto/integration.dto';
import { IntegrationErrors, OAuthErrors } from './integrations.errors';
import { IntegrationsService } from './integrations.service';
import { CALLBACK_ERROR_REASONS, CALLBACK_PARAMETER_RULES, parseCallbackQuery } from './oauth-callback-query';
import { OAuthCallbackService } from './oauth-callback.service';
import { OAuthErrorPageFilter } from './oauth-error-page.filter';

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
  @NoStore()
  @ApiOperation({
    summary: 'Connect a git provider account',
    description: `API_TOKEN: the token is checked with the provider first (a refused token is a 422 with the provider's reason; a provider down or too slow is a 502/503 and nothing is stored), then stored encrypted and never returned. OAUTH / APP_INSTALLATION (GitHub): the integration is created INITIATED and \`authorizeUrl\` is this API's GET /scm/authorize with a fresh single-use state (10 minutes): the member opens it in the browser that will authorize (it binds the flow to that browser with a cookie and sends it to the provider); GET /scm/callback completes it and records the connected account (\`externalAccountName\`). Status: ${STATUS_DESCRIPTION}`,
  })
  @ApiDataResponse(CreatedIntegrationDto, { status: 201 })
  @ApiErrors(
    IntegrationErrors.GIVEN_ID_TAKEN,
    IntegrationErrors.TOKEN_REQUIRED,
    IntegrationErrors.SERVER_REQUIRED,
    IntegrationErrors.SERVER_MISMATCH,
    IntegrationErrors.REDIRECT_NOT_ALLOWED,
    GitProviderErrors.CREDENTIALS_REJECTED,
    GitProviderErrors.NOT_CONFIGURED,
    ...PROVIDER_CALL_ERRORS,
  )
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateIntegrationRequest) {
    return { data: await this.integrations.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.IntegrationsRead)
  @ApiOperation({
    summary: 'Get an integration',
    description: `Its configuration and current state; credentials are never returned. Status: ${STATUS_DESCRIPTION}`,
  })
  @ApiDataResponse(IntegrationDto)
  @ApiErrors(IntegrationErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.integrations.get(principal, id) };
  }

  @Post(':id/validate')
  @HttpCode(200)
  @RequirePermission(Permission.IntegrationsWrite)
  @ApiOperation({
    summary: 'Check the credentials with the provider again',
    description:
      'Updates `status` (ACTIVE, NEEDS_ATTENTION when the provider refuses them, REVOKED when the installation is gone) and `lastValidatedAt`. A provider that cannot be reached changes nothing (502/503).',
  })
  @ApiDataResponse(IntegrationDto)
  @ApiErrors(
    IntegrationErrors.NOT_FOUND,
    IntegrationErrors.NOT_CONNECTED,
    GitProviderErrors.NOT_CONFIGURED,
    GitProviderErrors.REPOSITORY_NOT_FOUND,
    GitProviderErrors.INTEGRATION_NEEDS_ATTENTION,
    ...PROVIDER_CALL_ERRORS,
  )
  async validate(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.integrations.validate(principal, id) };
  }

  @Post(':id/webhook-secret')
  @HttpCode(200)
  @RequirePermission(Permission.IntegrationsWrite)
  @RateLimit('keyCreation')
  @NoStore()
  @ApiOperation({
    summary: 'Rotate the webhook secret',
    description:
      'A new secret for POST /webhooks/github, returned in this response only (stored encrypted, never returned again or logged). Deliveries signed with the previous secret are refused (401) from now on: enter the new one in the GitHub App or repository webhook settings right away. GITHUB and GITHUB_ENTERPRISE integrations only (422 otherwise).',
  })
  @ApiDataResponse(IntegrationWebhookSecretDto)
  @ApiErrors(IntegrationErrors.NOT_FOUND, IntegrationErrors.WEBHOOKS_NOT_SUPPORTED)
  async rotateWebhookSecret(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.integrations.rotateWebhookSecret(principal, id) };
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

const ERROR_PAGE_RESPONSE = {
  content: {
    'text/html': {
      schema: {
        type: 'string',
        description:
          "A plain HTML page (escaped, no request value shown) saying what to do; sent when the request's Accept header prefers text/html (a browser). Other clients get the error body.",
      },
    },
  },
};

const CALLBACK_QUERY_DESCRIPTIONS: Record<keyof typeof CALLBACK_PARAMETER_RULES, string> = {
  code: 'The OAuth authorization code',
  state: 'The CSRF state issued when the flow started',
  installation_id: 'The provider app installation id',
  setup_action:
    'GitHub: `install` or `update` (proceed), `request` (a non-owner asked for the installation: outcome `installation_requested`); anything else: `unsupported_setup_action`',
  error: "The provider's error code, e.g. access_denied (on failure)",
  error_description: "The provider's error description (on failure)",
  error_uri: 'Sent by some providers alongside an error',
};

/** OpenAPI query parameters of the callback, from the rules the handler applies itself. */
function ApiCallbackQuery(): MethodDecorator {
  return applyDecorators(
    ...Object.entries(CALLBACK_PARAMETER_RULES).map(([name, rule]) =>
      ApiQuery({
        name,
        required: false,
        description: CALLBACK_QUERY_DESCRIPTIONS[name as keyof typeof CALLBACK_PARAMETER_RULES],
        schema: { type: 'string', maxLength: rule.maxLength, ...(rule.pattern ? { pattern: rule.pattern.source } : {}) },
      }),
    ),
  );
}

const REASONS = Object.entries(CALLBACK_ERROR_REASONS)
  .map(([reason, meaning]) => `- \`${reason}\`: ${meaning}`)
  .join('\n');

@ApiTags('integrations')
@Controller('scm')
@UseFilters(OAuthErrorPageFilter)
export class OAuthCallbackController {
  constructor(private readonly callback: OAuthCallbackService) {}

  @Get('authorize')
  @Public()
  @RateLimit('oauthCallback')
  @ApiOperation({
    summary: 'Start a git provider authorization in this browser',
    description:
      "The `authorizeUrl` of POST /integrations (OAUTH / APP_INSTALLATION). Opened by the browser of the member who will authorize; no bearer token. Single use, within the state's 10 minutes: it sets a `__Host-dpa-oauth-<id>` cookie (Secure, HttpOnly, SameSite=Lax, Path=/) holding a random nonce and answers a 302 to the provider's authorize or install page. GET /scm/callback requires that cookie, so a person sent the link after it was opened, or sent the provider's page, cannot complete the flow (`integration_error=browser_mismatch`). An unknown state is a 400, a link already opened or expired a 410; a browser gets them as a plain HTML page.",
  })
  @ApiResponse({
    status: 302,
    description: "To the provider's authorize or app install page",
    headers: {
      Location: { description: "The provider's page", schema: { type: 'string' } },
      'Set-Cookie': {
        description: 'The flow cookie `__Host-dpa-oauth-<id>=<nonce>; Max-Age=...; Path=/; HttpOnly; Secure; SameSite=Lax`',
        schema: { type: 'string' },
      },
    },
  })
  @ApiResponse({ status: 400, ...ERROR_PAGE_RESPONSE })
  @ApiResponse({ status: 410, ...ERROR_PAGE_RESPONSE })
  @ApiErrors(OAuthErrors.INVALID_STATE, OAuthErrors.LINK_USED, GitProviderErrors.NOT_CONFIGURED)
  async authorize(@Query() query: OAuthStartQueryDto, @Res() res: Response): Promise<void> {
    const { providerUrl, cookie } = await this.callback.start(query.state);
    res.cookie(cookie.name, cookie.value, cookie.options);
    res.status(302).set({ Location: providerUrl, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    res.end();
  }

  @Get('callback')
  @Public()
  @RateLimit('oauthCallback')
  @ApiOperation({
    summary: 'Git provider OAuth callback',
    description: `Called by the browser, redirected here by the provider; no bearer token. Query parameters this route does not know are ignored (providers add some). When the \`state\` identifies an authorization flow (known, whether or not expired or used), the answer is always a 302 to the URL given when the flow started (a path on this site or an allowed origin, normalised and checked, never anything else): as it is when the integration became ACTIVE, with \`integration_error=<reason>\` added otherwise. The callback requires the flow cookie set by GET /scm/authorize in this browser (compared in constant time) before it looks at the code, the provider's error or anything else the provider sent; only whether the state is expired or already used is decided first. Reasons:\n${REASONS}\n\nOnly a missing state, or one that identifies no flow, is an error (400, nothing changes): a plain HTML page for a browser (Accept prefers text/html), the error body otherwise; a malformed known parameter is then named (\`dpa:Request:VALIDATION_FAILED\`).`,
  })
  @ApiCallbackQuery()
  @ApiResponse({
    status: 302,
    description: 'Back to the original URL',
    headers: {
      Location: { description: 'The original URL (plus `integration_error` on failure)', schema: { type: 'string' } },
      'Set-Cookie': { description: 'Clears the flow cookie', schema: { type: 'string' } },
    },
  })
  @ApiResponse({ status: 400, ...ERROR_PAGE_RESPONSE })
  @ApiErrors(OAuthErrors.INVALID_STATE)
  async complete(@Req() req: Request, @Res() res: Response): Promise<void> {
    // Read by hand, not through the validation pipe: this route ignores parameters it does not know.
    const outcome = await this.callback.complete(parseCallbackQuery(req.query as Record<string, unknown>), req.headers.cookie);
    res.clearCookie(outcome.cookieName, { secure: true, httpOnly: true, sameSite: 'lax', path: '/' });
    res.status(302).set({ Location: outcome.location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    res.end();
  }
}
