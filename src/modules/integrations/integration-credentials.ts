import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { CredentialCipher } from '@/common/crypto/credential-cipher';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Integration } from '@/generated/prisma/client';
import type { ProviderTokens } from '@/modules/git-providers/git-provider.port';
import { GitProviders } from '@/modules/git-providers/git-providers.service';

/** Tokens are refreshed when they expire within this. */
const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * An integration's provider tokens: sealed with AES-256-GCM (bound to the row id) before they
 * reach the database, opened only to call the provider, refreshed before they expire. They are
 * never part of a DTO, an audit record or a log line.
 */
@Injectable()
export class IntegrationCredentials {
  private readonly cipher: CredentialCipher;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly prisma: PrismaService,
    private readonly providers: GitProviders,
  ) {
    this.cipher = new CredentialCipher(config.credentialKeys);
  }

  seal(integrationId: string, tokens: ProviderTokens): { encryptedCredentials: Uint8Array<ArrayBuffer>; credentialsExpireAt: Date | null } {
    return {
      encryptedCredentials: new Uint8Array(this.cipher.seal(JSON.stringify(tokens), integrationId)),
      credentialsExpireAt: tokens.expiresAt ? new Date(tokens.expiresAt) : null,
    };
  }

  /** A fresh webhook secret and its sealed form (bound to the row id and its purpose). */
  newWebhookSecret(integrationId: string): { secret: string; encryptedWebhookSecret: Uint8Array<ArrayBuffer> } {
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    return { secret, encryptedWebhookSecret: new Uint8Array(this.cipher.seal(secret, webhookAssociated(integrationId))) };
  }

  /** The integration's webhook secret, or undefined when it has none. */
  webhookSecret(integration: Pick<Integration, 'id' | 'encryptedWebhookSecret'>): string | undefined {
    return integration.encryptedWebhookSecret ? this.cipher.open(integration.encryptedWebhookSecret, webhookAssociated(integration.id)) : undefined;
  }

  /** The access token to call the provider with, refreshed first when it is about to expire. */
  async accessToken(integration: Integration): Promise<string | undefined> {
    if (!integration.encryptedCredentials) return undefined;
    const tokens = JSON.parse(this.cipher.open(integration.encryptedCredentials, integration.id)) as ProviderTokens;
    if (!tokens.refreshToken || !tokens.expiresAt || Date.parse(tokens.expiresAt) - Date.now() > REFRESH_MARGIN_MS) return tokens.accessToken;
    const fresh = await this.providers.authorization(integration.provider).refresh(tokens.refreshToken);
    await this.prisma.integration.updateMany({
      where: { id: integration.id, organizationId: integration.organizationId },
      data: this.seal(integration.id, fresh),
    });
    return fresh.accessToken;
  }
}

/** What a webhook secret is sealed with: the row id and the purpose, so it never opens as a credential. */
function webhookAssociated(integrationId: string): string {
  return `${integrationId}:webhook-secret`;
}
