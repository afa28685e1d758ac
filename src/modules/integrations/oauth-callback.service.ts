import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Integration } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { GitProviders } from '@/modules/git-providers/git-providers.service';
import type { OAuthCallbackQueryDto } from './dto/integration.dto';
import { IntegrationCredentials } from './integration-credentials';
import { nextStatus } from './integration-status';
import { OAuthErrors } from './integrations.errors';
import { hashState } from './integrations.service';
import { allowedRedirect, withQueryParameter } from './redirect-policy';

/** The query parameter the callback adds to the original URL when the connection failed. */
export const ERROR_FLAG = 'integration_error';

/**
 * GET /scm/callback. The state is the only thing trusted from the query: it names (by its hash)
 * the organization, member, integration and original URL, and is used once within 10 minutes.
 * The code is exchanged with the provider, and an installation id is accepted only when the
 * provider confirms the authorizing user can access it.
 */
@Injectable()
export class OAuthCallbackService {
  private readonly logger = new Logger(OAuthCallbackService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly providers: GitProviders,
    private readonly credentials: IntegrationCredentials,
  ) {}

  /** Where to redirect the browser (always the state's original URL, with a flag on failure). */
  async complete(query: OAuthCallbackQueryDto): Promise<string> {
    if (!query.state) throw new AppError(OAuthErrors.INVALID_STATE, { message: 'The callback carries no state.' });
    const stateHash = hashState(query.state);
    const now = new Date();
    // Consumed atomically: of two concurrent callbacks with one state, one wins.
    const consumed = await this.prisma.oAuthState.updateMany({ where: { stateHash, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } });
    if (consumed.count !== 1) throw new AppError(OAuthErrors.INVALID_STATE);
    const state = await this.prisma.oAuthState.findUniqueOrThrow({ where: { stateHash }, include: { integration: true } });
    // Checked when the flow started; checked again so that the callback can never send anyone elsewhere.
    const original = allowedRedirect(state.redirectUrl, this.config.git.redirectAllowedOrigins) ?? '/';
    const integration = state.integration;
    const actor = { system: `oauth callback for member ${state.memberId}` };

    if (query.error) return this.fail(integration, actor, original, query.error, query.error_description ?? query.error);
    if (!query.code) throw new AppError(OAuthErrors.INVALID_CALLBACK);
    if (integration.status !== 'INITIATED') return this.fail(integration, actor, original, 'not_initiated', `the integration is ${integration.status}`);
    const code = query.code;
    try {
      const authorization = this.providers.authorization(integration.provider);
      const tokens = await authorization.exchangeCode(code, this.providers.callbackUrl());
      const client = this.providers.client({ provider: integration.provider }, tokens.accessToken);
      if (integration.authMethod === 'APP_INSTALLATION') {
        if (!query.installation_id) return this.fail(integration, actor, original, 'installation_missing', 'the provider sent no installation id');
        if (!(await client.userInstallationIds()).includes(query.installation_id)) {
          return this.fail(integration, actor, original, 'installation_not_accessible', `installation ${query.installation_id} is not accessible to the authorizing user`);
        }
      }
      const account = await client.currentAccount();
      await this.prisma.$transaction(async (tx) => {
        await tx.integration.updateMany({
          where: { id: integration.id, organizationId: integration.organizationId, status: 'INITIATED' },
          data: { ...this.credentials.seal(integration.id, tokens), status: nextStatus(integration.status, 'connected'), externalAccountId: account.id, externalAccountName: account.login, installationId: query.installation_id ?? null, lastValidatedAt: new Date(), lastError: null },
        });
        await this.audit.record(tx, actor, { organizationId: integration.organizationId, action: AuditAction.IntegrationConnected, targetType: 'integration', targetId: integration.id, metadata: { provider: integration.provider, authMethod: integration.authMethod, account: account.login, memberId: state.memberId } });
      });
      return original;
    } catch (error) {
      if (error instanceof ProviderFailure) return this.fail(integration, actor, original, error.kind === 'rejected' ? 'token_exchange_failed' : 'provider_unavailable', error.reason);
      if (error instanceof AppError) return this.fail(integration, actor, original, 'not_configured', error.message);
      throw error;
    }
  }

  private async fail(integration: Integration, actor: { system: string }, original: string, flag: string, reason: string): Promise<string> {
    const status = nextStatus(integration.status, 'failed') ?? integration.status;
    await this.prisma.$transaction(async (tx) => {
      await tx.integration.updateMany({ where: { id: integration.id, organizationId: integration.organizationId }, data: { status, lastError: `${flag}: ${reason}`.slice(0, 1000) } });
      await this.audit.record(tx, actor, { organizationId: integration.organizationId, action: AuditAction.IntegrationFailed, targetType: 'integration', targetId: integration.id, metadata: { error: flag, reason: reason.slice(0, 300) } });
    });
    this.logger.warn({ integrationId: integration.id, error: flag }, 'git provider authorization failed');
    return withQueryParameter(original, ERROR_FLAG, flag.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100));
  }
}
