import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { AppError } from '@/common/errors/app-error';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RedisService } from '@/common/redis/redis.module';
import { hashToken } from '@/common/auth/api-key-hash';
import { isWellFormedApiKeyToken } from '@/common/auth/api-key-token';
import { CredentialCache } from './credential-cache';
import type { Principal } from './principal';
import { AuthErrors } from '@/common/errors/common.errors';

export const CREDENTIAL_INVALIDATION_CHANNEL = 'dpa:auth:invalidate';
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/**
 * Turns a bearer token into a principal. A hot key costs no database round trip: verified keys are
 * cached per process for AUTH_CACHE_TTL_MS, and revocations reach every process through Redis.
 */
@Injectable()
export class ApiKeyAuthenticator implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ApiKeyAuthenticator.name);
  private readonly cache: CredentialCache;
  private readonly lastUsedWrites = new Map<string, number>();
  private subscriber?: Redis;

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cache = new CredentialCache(config.authCacheTtlMs);
  }

  async onModuleInit(): Promise<void> {
    this.cache.setEnabled(false);
    const subscriber = this.redis.client.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, message: string) => {
      try {
        this.cache.invalidate(JSON.parse(message) as { tokenHash?: string; actorId?: string; organizationId?: string });
      } catch {
        this.cache.setEnabled(true);
      }
    });
    subscriber.on('error', () => undefined);
    subscriber.on('close', () => this.cache.setEnabled(false));
    // ioredis re-subscribes after a reconnect; caching resumes only once that happened.
    subscriber.on('ready', () => {
      void subscriber.subscribe(CREDENTIAL_INVALIDATION_CHANNEL).then(() => this.cache.setEnabled(true), () => undefined);
    });
    await subscriber.subscribe(CREDENTIAL_INVALIDATION_CHANNEL).catch((error: unknown) => this.logger.warn({ err: error }, 'credential invalidation channel unavailable; caching off'));
    if (subscriber.status === 'ready') this.cache.setEnabled(true);
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }

  /** Announces to every process that credentials matching `match` must be looked up again. */
  async invalidate(match: { tokenHash?: string; actorId?: string; organizationId?: string }): Promise<void> {
    this.cache.invalidate(match);
    await this.redis.client.publish(CREDENTIAL_INVALIDATION_CHANNEL, JSON.stringify(match));
  }

  async authenticate(token: string): Promise<Principal> {
    if (!isWellFormedApiKeyToken(token)) throw new AppError(AuthErrors.INVALID_TOKEN);
    const tokenHash = hashToken(token);
    const now = Date.now();
    const cached = this.cache.get(tokenHash, now);
    if (cached) {
      if (cached.expiresAt !== null && cached.expiresAt <= now) throw new AppError(AuthErrors.TOKEN_EXPIRED);
      this.touch(cached.principal.apiKeyId, now);
      return cached.principal;
    }
    const epoch = this.cache.epoch;
    const key = await this.prisma.apiKey.findUnique({ where: { tokenHash } });
    if (!key) throw new AppError(AuthErrors.INVALID_TOKEN);
    if (key.revokedAt) throw new AppError(AuthErrors.TOKEN_REVOKED);
    if (key.expiresAt && key.expiresAt.getTime() <= now) throw new AppError(AuthErrors.TOKEN_EXPIRED);
    const owner =
      key.ownerType === 'MEMBERSHIP'
        ? await this.prisma.member.findFirst({ where: { id: key.ownerId, organizationId: key.organizationId } })
        : await this.prisma.serviceAccount.findFirst({ where: { id: key.ownerId, organizationId: key.organizationId } });
    if (!owner) throw new AppError(AuthErrors.INVALID_TOKEN);
    const principal: Principal = {
      organizationId: key.organizationId,
      actorId: owner.id,
      actorType: key.ownerType,
      actorName: owner.name,
      role: owner.role,
      isSuperadmin: 'isSuperadmin' in owner ? owner.isSuperadmin : false,
      apiKeyId: key.id,
      ...(key.expiresAt && { apiKeyExpiresAt: key.expiresAt.toISOString() }),
    };
    this.cache.set(tokenHash, principal, key.expiresAt ? key.expiresAt.getTime() : null, now, epoch);
    this.touch(key.id, now);
    return principal;
  }

  /** lastUsedAt is written at most once a minute per key and process, off the request path. */
  private touch(apiKeyId: string, now: number): void {
    const last = this.lastUsedWrites.get(apiKeyId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(apiKeyId, now);
    if (this.lastUsedWrites.size > 10_000) this.lastUsedWrites.clear();
    this.prisma.apiKey.updateMany({ where: { id: apiKeyId }, data: { lastUsedAt: new Date(now) } }).catch(() => undefined);
  }
}
