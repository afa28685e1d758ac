import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RequestErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';
import type { Integration, OAuthState } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { GitProviders } from '@/modules/git-providers/git-providers.service';
import { IntegrationCredentials } from './integration-credentials';
import { nextStatus } from './integration-status';
import { flowCookie, flowCookieName, newBrowserNonce, nonceMatches, readCookie, type FlowCookie } from './oauth-browser-binding';
import { setupOutcome, type ParsedCallbackQuery } from './oauth-callback-query';
import { CONFIRMATION_FRAGMENT, hashConfirmationCode, newConfirmationCode, renderAuthorizedPage, withFragment } from './oauth-confirmation';
import { installationVerdict, needsMembership } from './installation-admin';
import { OAuthErrors } from './integrations.errors';
import { hashState } from './integrations.service';
import { allowedRedirect, withQueryParameter } from './redirect-policy';

/** The query parameter the callback adds to the original URL when the connection failed. */
export const ERROR_FLAG = 'integration_error';

/** The page shown once the provider authorized (the integration waits for the member's confirmation). */
interface AuthorizedPage {
  page: string;
}

/** Where to send the browser (or the page to show it), and the flow cookie to clear. */
export interface CallbackOutcome {
  location?: string;
  page?: string;
  /** The flow's cookie name (cleared on every answer that identified the flow). */
  cookieName: string;
}

type StateRow = OAuthState & { integration: Integration };

/**
 * GET /scm/authorize and GET /scm/callback. The state is the only thing trusted from the query: it
 * names (by its hash) the organization, member, integration and original URL, and is used once
 * within 10 minutes. The start URL is single use and binds the flow to the browser that opens it
 * (see oauth-browser-binding.ts); the callback requires that browser's cookie before it reads
 * anything the provider sent (only an expired or used state is answered first), then exchanges
 * the code with the provider, and accepts an installation id only when the provider confirms the
 * authorizing user can access it.
 *
 * Once the state identifies a flow, every answer is a 302 to the flow's original URL (with
 * `integration_error=<reason>` on failure); only a state that identifies nothing is an error.
 */
@Injectable()
export class OAuthCallbackService implements OnModuleInit {
  private readonly logger = new Logger(OAuthCallbackService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly providers: GitProviders,
    private readonly credentials: IntegrationCredentials,
  ) {}

  /**
   * The flow cookie is Secure (`__Host-`): browsers keep it from https origins and (Chrome,
   * Firefox) from http://localhost, and drop it from any other http origin, where every callback
   * would then end in `browser_mismatch`. Said once at boot rather than found out by a user.
   */
  onModuleInit(): void {
    const { publicUrl, github } = this.config.git;
    if (!github.clientId) return;
    try {
      const url = new URL(publicUrl);
      if (url.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) && !url.hostname.endsWith('.localhost')) {
        this.logger.warn(
          { publicUrl },
          'PUBLIC_URL is plain http on a host other than localhost: browsers will not keep the OAuth flow cookie (__Host-, Secure), so OAuth connections will fail with browser_mismatch; serve the API over https',
        );
      }
    } catch {
      // PUBLIC_URL is validated by the configuration at boot.
    }
  }

  /**
   * GET /scm/authorize?state=: marks the flow started (once), and answers the provider URL and the
   * cookie that binds the flow to this browser.
   */
  async start(state: string): Promise<{ providerUrl: string; cookie: FlowCookie }> {
    const row = await this.prisma.oAuthState.findUnique({ where: { stateHash: hashState(state) }, include: { integration: true } });
    const now = new Date();
    if (!row) throw new AppError(OAuthErrors.INVALID_STATE, { message: 'This authorization link is unknown.' });
    const { nonce, hash } = newBrowserNonce();
    // Atomically: of two browsers opening one link, one wins; a used, expired or started link starts nothing.
    const started = await this.prisma.oAuthState.updateMany({
      where: { id: row.id, consumedAt: null, startedAt: null, expiresAt: { gt: now } },
      data: { startedAt: now, browserNonceHash: hash },
    });
    if (started.count !== 1) throw new AppError(OAuthErrors.LINK_USED, { metadata: { integrationId: row.integrationId } });
    const authorization = this.providers.authorization(row.integration.provider);
    const mode = row.integration.authMethod === 'APP_INSTALLATION' ? 'APP_INSTALLATION' : 'OAUTH';
    return {
      providerUrl: authorization.authorizeUrl({ state, redirectUri: this.providers.callbackUrl(), mode }),
      cookie: flowCookie(row.id, nonce, row.expiresAt.getTime() - now.getTime()),
    };
  }

  /** GET /scm/callback: where to redirect the browser (the state's original URL, with a flag on failure). */
  async complete(query: ParsedCallbackQuery, cookieHeader: string | undefined): Promise<CallbackOutcome> {
    const { params, problems } = query;
    const row =
      params.state && !problems.some((p) => p.name === 'state')
        ? await this.prisma.oAuthState.findUnique({ where: { stateHash: hashState(params.state) }, include: { integration: true } })
        : null;
    if (!row) {
      // Nothing says where to send the browser back: an error (the controller renders a page for browsers).
      if (problems.length > 0) {
        const items = problems.map((p) => `${p.name}: ${p.why}`);
        throw new AppError(RequestErrors.VALIDATION_FAILED, {
          message: `Invalid request: ${items.join('; ')}`,
          details: [invalidFields(items, 'Invalid query parameters')],
          metadata: { fields: problems.map((p) => p.name) },
        });
      }
      throw new AppError(OAuthErrors.INVALID_STATE, params.state ? {} : { message: 'The callback carries no state.' });
    }
    // Checked when the flow started; normalised and checked again so the callback can never send anyone elsewhere.
    const original = allowedRedirect(row.redirectUrl, this.config.git.redirectAllowedOrigins) ?? '/';
    const outcome = (location: string): CallbackOutcome => ({ location, cookieName: flowCookieName(row.id) });
    const actor = { system: `oauth callback for member ${row.memberId}` };
    const integration = row.integration;
    const now = new Date();

    if (row.consumedAt) return outcome(withQueryParameter(original, ERROR_FLAG, 'state_used'));
    // Consumed atomically: of two concurrent callbacks with one state, one wins.
    const consumed = await this.prisma.oAuthState.updateMany({ where: { id: row.id, consumedAt: null }, data: { consumedAt: now } });
    if (consumed.count !== 1) return outcome(withQueryParameter(original, ERROR_FLAG, 'state_used'));
    if (row.expiresAt <= now) return outcome(await this.fail(integration, actor, original, 'state_expired', 'the authorization took longer than 10 minutes'));
    // Bound to the browser that opened the start URL: anyone else (a person sent the link) connects nothing.
    if (!nonceMatches(readCookie(cookieHeader, flowCookieName(row.id)), row.browserNonceHash)) {
      const why = row.startedAt
        ? 'the authorization was completed in a browser that did not start it'
        : 'the authorization did not begin at GET /scm/authorize';
      return outcome(await this.fail(integration, actor, original, 'browser_mismatch', why));
    }
    if (params.error) return outcome(await this.fail(integration, actor, original, params.error, params.error_description ?? params.error));
    if (problems.length > 0)
      return outcome(await this.fail(integration, actor, original, 'invalid_callback', problems.map((p) => `${p.name}: ${p.why}`).join('; ')));
    const setup = setupOutcome(params.setup_action);
    if (setup === 'requested') {
      return outcome(
        await this.fail(
          integration,
          actor,
          original,
          'installation_requested',
          'the GitHub app installation was requested, not made: an owner of the GitHub account must approve it, then connect again',
        ),
      );
    }
    if (setup === 'unsupported')
      return outcome(await this.fail(integration, actor, original, 'unsupported_setup_action', `setup_action ${params.setup_action} is not supported`));
    if (!params.code) return outcome(await this.fail(integration, actor, original, 'missing_code', 'the callback carried neither a code nor an error'));
    if (integration.status !== 'INITIATED')
      return outcome(await this.fail(integration, actor, original, 'not_initiated', `the integration is ${integration.status}`));
    const done = await this.exchange(row, params.code, params.installation_id, original, actor);
    return typeof done === 'string' ? outcome(done) : { ...done, cookieName: flowCookieName(row.id) };
  }

  private async exchange(
    row: StateRow,
    code: string,
    installationId: string | undefined,
    original: string,
    actor: { system: string },
  ): Promise<string | AuthorizedPage> {
    const integration = row.integration;
    try {
      const authorization = this.providers.authorization(integration.provider);
      const tokens = await authorization.exchangeCode(code, this.providers.callbackUrl());
      const client = this.providers.client({ provider: integration.provider }, tokens.accessToken);
      const account = await client.currentAccount();
      if (integration.authMethod === 'APP_INSTALLATION') {
        if (!installationId) return this.fail(integration, actor, original, 'installation_missing', 'the provider sent no installation id');
        // Never taken on the callback's word: GitHub must list it for this person, and say they administer it.
        const installation = await client.installations?.userInstallation(installationId);
        const membership = needsMembership(installation) ? await client.installations?.organizationMembership(installation.account.login) : undefined;
        const verdict = installationVerdict(installationId, installation, account, membership);
        if (!verdict.ok) return this.fail(integration, actor, original, verdict.reason, verdict.why);
      }
      // Authorized, not connected: the member who started the flow confirms this account with the code shown here.
      const confirmationCode = newConfirmationCode();
      const authorized = await this.prisma.$transaction(async (tx) => {
        const updated = await tx.integration.updateMany({
          where: { id: integration.id, organizationId: integration.organizationId, status: 'INITIATED' },
          data: {
            ...this.credentials.seal(integration.id, tokens),
            status: nextStatus(integration.status, 'connected'),
            externalAccountId: account.id,
            externalAccountName: account.login,
            installationId: installationId ?? null,
            lastValidatedAt: new Date(),
            lastError: null,
          },
        });
        if (updated.count !== 1) return false;
        await tx.oAuthState.updateMany({
          where: { id: row.id },
          data: { authorizedAt: new Date(), confirmationHash: hashConfirmationCode(confirmationCode) },
        });
        await this.audit.record(tx, actor, {
          organizationId: integration.organizationId,
          action: AuditAction.IntegrationAuthorized,
          targetType: 'integration',
          targetId: integration.id,
          metadata: { provider: integration.provider, authMethod: integration.authMethod, account: account.login, memberId: row.memberId },
        });
        return true;
      });
      if (!authorized) return this.fail(integration, actor, original, 'not_initiated', 'the integration changed during the authorization');
      const organization = await this.prisma.organization.findUnique({ where: { id: integration.organizationId }, select: { name: true } });
      return {
        page: renderAuthorizedPage({
          provider: integration.provider,
          account: account.login,
          organization: organization?.name ?? '',
          integrationId: integration.id,
          confirmationCode,
          continueUrl: withFragment(original, CONFIRMATION_FRAGMENT, confirmationCode),
          apiUrl: this.config.git.publicUrl,
        }),
      };
    } catch (error) {
      if (error instanceof ProviderFailure)
        return this.fail(integration, actor, original, error.kind === 'rejected' ? 'token_exchange_failed' : 'provider_unavailable', error.reason);
      if (error instanceof AppError) return this.fail(integration, actor, original, 'not_configured', error.message);
      throw error;
    }
  }

  private async fail(integration: Integration, actor: { system: string }, original: string, flag: string, reason: string): Promise<string> {
    const status = nextStatus(integration.status, 'failed') ?? integration.status;
    await this.prisma.$transaction(async (tx) => {
      await tx.integration.updateMany({
        where: { id: integration.id, organizationId: integration.organizationId },
        data: { status, lastError: `${flag}: ${reason}`.slice(0, 1000) },
      });
      await this.audit.record(tx, actor, {
        organizationId: integration.organizationId,
        action: AuditAction.IntegrationFailed,
        targetType: 'integration',
        targetId: integration.id,
        metadata: { error: flag, reason: reason.slice(0, 300) },
      });
    });
    this.logger.warn({ integrationId: integration.id, error: flag }, 'git provider authorization failed');
    return withQueryParameter(original, ERROR_FLAG, flag.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100));
  }
}
