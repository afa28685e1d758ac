import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { createWithGivenId } from '@/common/http/given-id';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { CodeSource, Integration, Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { ProviderFailure, type GitProviderClient, type ProviderKind } from '@/modules/git-providers/git-provider.port';
import { providerError } from '@/modules/git-providers/git-providers.errors';
import { type ClientLimits, GitProviders } from '@/modules/git-providers/git-providers.service';
import { CreatedIntegrationDto, CreateIntegrationDto, IntegrationDto, IntegrationWebhookSecretDto, toIntegrationDto } from './dto/integration.dto';
import { IntegrationCredentials } from './integration-credentials';
import { nextStatus, type IntegrationEvent } from './integration-status';
import { IntegrationErrors } from './integrations.errors';
import { allowedRedirect } from './redirect-policy';

const LIST = newestFirst<Integration>('integrations');
/** How long an authorization `state` stays valid. */
export const STATE_TTL_MS = 10 * 60_000;

export function hashState(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** Integrations: connections to a git provider account, with encrypted credentials. */
@Injectable()
export class IntegrationsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly providers: GitProviders,
    private readonly credentials: IntegrationCredentials,
  ) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<IntegrationDto>> {
    return paginate(fromModel(this.prisma.integration, { organizationId: principal.organizationId }), LIST, query, toIntegrationDto);
  }

  async get(principal: Principal, id: string): Promise<IntegrationDto> {
    return toIntegrationDto(await this.find(principal.organizationId, id));
  }

  async create(principal: Principal, dto: CreateIntegrationDto): Promise<CreatedIntegrationDto> {
    const hostUrl = await this.serverFor(principal.organizationId, dto);
    return dto.authMethod === 'API_TOKEN' ? this.createWithToken(principal, dto, hostUrl) : this.startAuthorization(principal, dto);
  }

  /** API_TOKEN: the provider confirms the token before anything is stored. */
  private async createWithToken(principal: Principal, dto: CreateIntegrationDto, hostUrl: string | undefined): Promise<IntegrationDto> {
    if (!dto.token) throw new AppError(IntegrationErrors.TOKEN_REQUIRED, { details: [invalidFields(['data.token: is required with authMethod API_TOKEN'])] });
    const token = dto.token;
    let webhookSecret: string | undefined;
    const account = await this.call(() => this.providers.client({ provider: dto.provider, hostUrl }, token).currentAccount(), 'checking');
    const row = await createWithGivenId(dto.name, dto.givenId, IntegrationErrors.GIVEN_ID_TAKEN, (givenId) =>
      this.prisma.$transaction(async (tx) => {
        const created = await tx.integration.create({
          data: {
            organizationId: principal.organizationId,
            givenId,
            name: dto.name,
            provider: dto.provider,
            authMethod: 'API_TOKEN',
            status: 'ACTIVE',
            externalAccountId: account.id,
            externalAccountName: account.login,
            lastValidatedAt: new Date(),
            gitServerId: dto.gitServerId ?? null,
            createdById: principal.actorId,
          },
        });
        const hook = this.webhookSecretFor(dto.provider, created.id);
        const sealed = await tx.integration.update({
          where: { id: created.id },
          data: { ...this.credentials.seal(created.id, { accessToken: token }), ...(hook && { encryptedWebhookSecret: hook.encryptedWebhookSecret }) },
        });
        webhookSecret = hook?.secret;
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.IntegrationConnected,
          targetType: 'integration',
          targetId: created.id,
          metadata: { provider: dto.provider, authMethod: 'API_TOKEN', account: account.login },
        });
        return sealed;
      }),
    );
    return { ...toIntegrationDto(row), ...(webhookSecret !== undefined && { webhookSecret }) };
  }

  /** OAUTH / APP_INSTALLATION: an INITIATED integration and a single-use state bound to it, the member and the redirect. */
  private async startAuthorization(principal: Principal, dto: CreateIntegrationDto): Promise<CreatedIntegrationDto> {
    // Refuses a provider without a configured app before anything is stored.
    this.providers.authorization(dto.provider);
    // Normalised first, then checked; the normalised target is what is stored and used.
    const normalisedRedirect = allowedRedirect(dto.redirectUrl ?? '/', this.config.git.redirectAllowedOrigins);
    if (!normalisedRedirect) {
      throw new AppError(IntegrationErrors.REDIRECT_NOT_ALLOWED, {
        details: [invalidFields(['data.redirectUrl: must be a path on this site (/...) or an allowed origin'])],
      });
    }
    if (dto.token)
      throw new AppError(IntegrationErrors.TOKEN_REQUIRED, {
        message: 'A token is only accepted with authMethod API_TOKEN.',
        details: [invalidFields([`data.token: is not accepted with authMethod ${dto.authMethod}`])],
      });
    const state = randomBytes(32).toString('base64url');
    let webhookSecret: string | undefined;
    const row = await createWithGivenId(dto.name, dto.givenId, IntegrationErrors.GIVEN_ID_TAKEN, (givenId) =>
      this.prisma.$transaction(async (tx) => {
        const created = await tx.integration.create({
          data: {
            organizationId: principal.organizationId,
            givenId,
            name: dto.name,
            provider: dto.provider,
            authMethod: dto.authMethod,
            status: 'INITIATED',
            externalAccountId: '',
            createdById: principal.actorId,
          },
        });
        const hook = this.webhookSecretFor(dto.provider, created.id);
        if (hook) await tx.integration.update({ where: { id: created.id }, data: { encryptedWebhookSecret: hook.encryptedWebhookSecret } });
        webhookSecret = hook?.secret;
        await tx.oAuthState.create({
          data: {
            organizationId: principal.organizationId,
            integrationId: created.id,
            memberId: principal.actorId,
            stateHash: hashState(state),
            redirectUrl: normalisedRedirect,
            expiresAt: new Date(Date.now() + STATE_TTL_MS),
          },
        });
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.IntegrationCreated,
          targetType: 'integration',
          targetId: created.id,
          metadata: { provider: dto.provider, authMethod: dto.authMethod },
        });
        return created;
      }),
    );
    // Not the provider's page: the API's start URL, which binds the flow to the browser that opens it.
    return {
      ...toIntegrationDto(row),
      ...(webhookSecret !== undefined && { webhookSecret }),
      authorizeUrl: `${this.config.git.publicUrl}/scm/authorize?${new URLSearchParams({ state })}`,
    };
  }

  /** A new webhook secret (GitHub), returned this once; the previous one stops verifying at once. */
  async rotateWebhookSecret(principal: Principal, id: string): Promise<IntegrationWebhookSecretDto> {
    return this.prisma.$transaction(async (tx) => {
      const integration = await this.find(principal.organizationId, id, tx);
      const hook = this.webhookSecretFor(integration.provider, integration.id);
      if (!hook) throw new AppError(IntegrationErrors.WEBHOOKS_NOT_SUPPORTED, { metadata: { id, provider: integration.provider } });
      await tx.integration.updateMany({
        where: { id, organizationId: principal.organizationId },
        data: { encryptedWebhookSecret: hook.encryptedWebhookSecret },
      });
      await this.audit.record(tx, principal, {
        organizationId: principal.organizationId,
        action: AuditAction.IntegrationWebhookSecretRotated,
        targetType: 'integration',
        targetId: id,
        metadata: { provider: integration.provider },
      });
      return { ...toIntegrationDto(await this.find(principal.organizationId, id, tx)), webhookSecret: hook.secret };
    });
  }

  /** Webhooks are GitHub's (POST /webhooks/github); other providers get no secret. */
  private webhookSecretFor(provider: Integration['provider'], integrationId: string) {
    return provider === 'GITHUB' || provider === 'GITHUB_ENTERPRISE' ? this.credentials.newWebhookSecret(integrationId) : undefined;
  }

  /** Asks the provider again; the status follows the answer (ACTIVE, NEEDS_ATTENTION, REVOKED). */
  async validate(principal: Principal, id: string): Promise<IntegrationDto> {
    const integration = await this.find(principal.organizationId, id);
    if (!integration.encryptedCredentials) throw new AppError(IntegrationErrors.NOT_CONNECTED, { metadata: { id, status: integration.status } });
    const client = await this.clientFor(integration);
    let event: IntegrationEvent = 'validated';
    let reason: string | null = null;
    try {
      const account = await client.currentAccount();
      if (integration.installationId && !(await client.userInstallationIds()).includes(integration.installationId)) {
        event = 'installationGone';
        reason = `installation ${integration.installationId} is no longer accessible`;
      } else if (account.id !== integration.externalAccountId) {
        event = 'credentialsRefused';
        reason = 'the credentials now belong to another account';
      }
    } catch (error) {
      const failure = error instanceof ProviderFailure ? error : undefined;
      if (!failure || (failure.kind !== 'unauthorized' && failure.kind !== 'forbidden')) throw failure ? providerError(failure, 'in-use') : error;
      event = 'credentialsRefused';
      reason = failure.reason;
    }
    return toIntegrationDto(await this.transition(principal, integration, event, reason, { lastValidatedAt: new Date() }));
  }

  async remove(principal: Principal, id: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const integration = await this.find(principal.organizationId, id, tx);
      const users = await tx.codeSource.findMany({
        where: { organizationId: principal.organizationId, integrationId: id },
        select: { id: true, nameWithOwner: true },
        take: 50,
        orderBy: { createdAt: 'asc' },
      });
      if (users.length > 0) {
        throw new AppError(IntegrationErrors.IN_USE, {
          metadata: { id, codeSourceIds: users.map((u) => u.id) },
          details: [{ title: 'Code sources using the integration', render: 'list', items: users.map((u) => `${u.id} (${u.nameWithOwner})`) }],
        });
      }
      await tx.integration.deleteMany({ where: { id, organizationId: principal.organizationId } });
      await this.audit.record(tx, principal, {
        organizationId: principal.organizationId,
        action: AuditAction.IntegrationDeleted,
        targetType: 'integration',
        targetId: id,
        metadata: { provider: integration.provider, name: integration.name },
      });
    });
  }

  /** The integration a code source connects through, in the source's organization; null when the source has lost it (or has none: LOCAL_GIT). */
  async integrationOf(source: Pick<CodeSource, 'integrationId' | 'organizationId'>): Promise<Integration | null> {
    if (!source.integrationId) return null;
    return this.prisma.integration.findFirst({ where: { id: source.integrationId, organizationId: source.organizationId } });
  }

  /**
   * The client for a code source's own writes (a merge queue's): an APP_INSTALLATION integration on
   * github.com acts as the GitHub App with an installation token when the app is configured, so
   * commits and statuses show the app, not the person who connected it; any other integration uses
   * its credentials (clientFor). Null when the source has lost its integration.
   */
  async clientForSource(source: CodeSource): Promise<GitProviderClient | null> {
    const integration = await this.integrationOf(source);
    if (!integration) return null;
    const app =
      source.provider === 'GITHUB' && integration.authMethod === 'APP_INSTALLATION' && integration.installationId ? this.providers.githubApp() : undefined;
    return app ? this.providers.client({ provider: 'GITHUB' }, await app.installationToken(integration.installationId as string)) : this.clientFor(integration);
  }

  /** A provider client with the integration's credentials (refreshed if needed); `limits` as GitProviders.client takes them. */
  async clientFor(integration: Integration, limits?: ClientLimits): Promise<GitProviderClient> {
    const hostUrl = integration.gitServerId
      ? (await this.prisma.gitServer.findFirst({ where: { id: integration.gitServerId, organizationId: integration.organizationId } }))?.hostUrl
      : undefined;
    const token = await this.call(() => this.credentials.accessToken(integration), 'in-use');
    return this.providers.client({ provider: integration.provider, hostUrl }, token, limits);
  }

  /** Records that the provider refused the integration's credentials while in use. */
  async credentialsRefused(organizationId: string, integration: Integration, reason: string): Promise<void> {
    await this.transition({ system: 'git provider' }, integration, 'credentialsRefused', reason, {});
  }

  async find(organizationId: string, id: string, client: Prisma.TransactionClient = this.prisma): Promise<Integration> {
    const row = await client.integration.findFirst({ where: { id, organizationId } });
    if (!row) throw new AppError(IntegrationErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }

  /** Applies a status event (audited when the status changes) and extra fields. */
  async transition(
    actor: Principal | { system: string },
    integration: Integration,
    event: IntegrationEvent,
    reason: string | null,
    data: Prisma.IntegrationUpdateManyMutationInput,
  ): Promise<Integration> {
    const status = nextStatus(integration.status, event) ?? integration.status;
    return this.prisma.$transaction(async (tx) => {
      await tx.integration.updateMany({
        where: { id: integration.id, organizationId: integration.organizationId },
        data: { ...data, status, lastError: reason },
      });
      if (status !== integration.status) {
        await this.audit.record(tx, actor, {
          organizationId: integration.organizationId,
          action: AuditAction.IntegrationStatusChanged,
          targetType: 'integration',
          targetId: integration.id,
          metadata: { from: integration.status, to: status, ...(reason ? { reason } : {}) },
        });
      }
      return this.find(integration.organizationId, integration.id, tx);
    });
  }

  private async serverFor(organizationId: string, dto: CreateIntegrationDto): Promise<string | undefined> {
    const selfHosted = dto.provider === 'GITHUB_ENTERPRISE' || dto.provider === 'GITLAB';
    if (!selfHosted) {
      if (dto.gitServerId)
        throw new AppError(IntegrationErrors.SERVER_MISMATCH, {
          message: `${dto.provider} is not self-hosted: leave gitServerId out.`,
          details: [invalidFields(['data.gitServerId: is not accepted for this provider'])],
        });
      return undefined;
    }
    if (!dto.gitServerId)
      throw new AppError(IntegrationErrors.SERVER_REQUIRED, { details: [invalidFields(['data.gitServerId: is required for this provider'])] });
    const server = await this.prisma.gitServer.findFirst({ where: { id: dto.gitServerId, organizationId } });
    if (!server || server.provider !== dto.provider)
      throw new AppError(IntegrationErrors.SERVER_MISMATCH, {
        metadata: { gitServerId: dto.gitServerId },
        details: [invalidFields(['data.gitServerId: is not a git server of this provider in the organization'])],
      });
    return server.hostUrl;
  }

  private async call<T>(run: () => Promise<T>, credentials: 'checking' | 'in-use'): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof ProviderFailure) throw providerError(error, credentials);
      throw error;
    }
  }
}

export type { ProviderKind };
