import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { AppError } from '@/common/errors/app-error';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RedisService, watchRedisConnection } from '@/common/redis/redis.module';
import { hashToken } from '@/common/auth/api-key-hash';
import { isWellFormedApiKeyToken } from '@/common/auth/api-key-token';
import { CredentialCache } from './credential-cache';
import type { Principal } from './principal';
import { AuthErrors } from '@/common/errors/common.errors';

export const CREDENTIAL_INVALIDATION_CHANNEL = 'dpa:auth:invalidate';
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
// A subscriber only reads, so a black-holed connection would look healthy forever; a ping makes
// ioredis' socketTimeout notice it, and the cache turns off within about a second plus that timeout.
const SUBSCRIBER_HEARTBEAT_MS = 1_000;
const MAX_PENDING_ANNOUNCEMENTS = 1_000;

type InvalidationMatch = { tokenHash?: string; actorId?: string; organizationId?: string; all?: boolean };

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
  private heartbeat?: NodeJS.Timeout;
  private readonly pendingAnnouncements: string[] = [];

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
        this.cache.invalidate(JSON.parse(message) as InvalidationMatch);
      } catch {
        this.cache.setEnabled(true);
      }
    });
    watchRedisConnection(subscriber, 'redis (credential invalidation channel)');
    subscriber.on('close', () => this.cache.setEnabled(false));
    this.heartbeat = setInterval(() => void subscriber.ping().catch(() => this.cache.setEnabled(false)), SUBSCRIBER_HEARTBEAT_MS).unref();
    this.redis.client.on('ready', () => void this.announcePending());
    // ioredis re-subscribes after a reconnect; caching resumes only once that happened.
    subscriber.on('ready', () => {
      void subscriber.subscribe(CREDENTIAL_INVALIDATION_CHANNEL).then(
        () => this.cache.setEnabled(true),
        () => undefined,
      );
    });
    await subscriber
      .subscribe(CREDENTIAL_INVALIDATION_CHANNEL)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'credential invalidation channel unavailable; caching off'));
    if (subscriber.status === 'ready') this.cache.setEnabled(true);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }

  /**
   * Announces to every process that credentials matching `match` must be looked up again. Never
   * fails on a Redis outage: the caller's change is already stored, every process whose channel is
   * down has stopped caching, and the announcement is repeated once Redis answers again for any
   * process that did not notice the outage.
   */
  async invalidate(match: InvalidationMatch): Promise<void> {
    this.cache.invalidate(match);
    const message = JSON.stringify(match);
    try {
      await this.redis.client.publish(CREDENTIAL_INVALIDATION_CHANNEL, message);
    } catch {
      if (this.pendingAnnouncements.length < MAX_PENDING_ANNOUNCEMENTS) this.pendingAnnouncements.push(message);
      // Too many to replay one by one: announce that every process must drop everything instead.
      else this.pendingAnnouncements.splice(0, this.pendingAnnouncements.length, JSON.stringify({ all: true }));
    }
  }

  private async announcePending(): Promise<void> {
    while (this.pendingAnnouncements.length > 0) {
      const message = this.pendingAnnouncements[0];
      try {
        await this.redis.client.publish(CREDENTIAL_INVALIDATION_CHANNEL, message);
      } catch {
        return;
      }
      this.pendingAnnouncements.shift();
    }
  }

  /** True when this process holds the token as a verified, unexpired credential: using it costs no lookup. */
  holds(token: string): boolean {
    if (!isWellFormedApiKeyToken(token)) return false;
    const now = Date.now();
    const cached = this.cache.get(hashToken(token), now);
    return cached !== undefined && (cached.expiresAt === null || cached.expiresAt > now);
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
      // A scoped key acts only within its scopes, and a superadmin's powers are in no scope.
      isSuperadmin: key.scopes.length === 0 && 'isSuperadmin' in owner ? owner.isSuperadmin : false,
      apiKeyId: key.id,
      ...(key.expiresAt && { apiKeyExpiresAt: key.expiresAt.toISOString() }),
      ...(key.scopes.length > 0 && { scopes: Object.freeze([...key.scopes]) }),
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
