import { once } from 'node:events';
import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type { Redis } from 'ioredis';
import { RedisService } from '@/common/redis/redis.module';

/** What a check returns when Redis could not answer: the request is let through, without headers. */
export const FAIL_OPEN = Object.freeze({ totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 });

// The limiter sits on every request: a slow or absent Redis must cost at most this much, not the
// shared client's retries and reconnect queue.
const COMMAND_TIMEOUT_MS = 300;
// After a failure, checks skip Redis this long: a silent Redis then costs one timeout per second, not per check.
const SKIP_AFTER_FAILURE_MS = 1_000;
const READY_WAIT_MS = 2_000;

/**
 * The counters of every budget, in Redis (fixed windows, via @nest-lab/throttler-storage-redis),
 * on a connection of their own that never queues: when Redis is down or silent, checks fail open
 * at once and the outage is logged once.
 */
@Injectable()
export class RateLimitStore implements ThrottlerStorage, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimits');
  private readonly connection: Redis;
  private readonly counters: ThrottlerStorageRedisService;
  private failing = false;
  private skipUntil = 0;

  constructor(redis: RedisService) {
    this.connection = redis.client.duplicate({ enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: COMMAND_TIMEOUT_MS });
    this.connection.on('error', () => undefined);
    this.counters = new ThrottlerStorageRedisService(this.connection);
  }

  async onModuleInit(): Promise<void> {
    if (this.connection.status === 'ready') return;
    await once(this.connection, 'ready', { signal: AbortSignal.timeout(READY_WAIT_MS) }).catch(() => this.failOpen(new Error(`Redis not ready after ${READY_WAIT_MS} ms`)));
  }

  async onModuleDestroy(): Promise<void> {
    await this.connection.quit().catch(() => this.connection.disconnect());
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, name: string) {
    if (Date.now() < this.skipUntil) return FAIL_OPEN;
    try {
      return this.recovered(await this.counters.increment(key, ttl, limit, blockDuration, name));
    } catch (error) {
      this.failOpen(error);
      return FAIL_OPEN;
    }
  }

  /** Milliseconds left on a block marker, 0 when there is none (or Redis cannot say). */
  async blockedFor(key: string): Promise<number> {
    if (Date.now() < this.skipUntil) return 0;
    try {
      return this.recovered(Math.max(0, await this.connection.pttl(key)));
    } catch (error) {
      this.failOpen(error);
      return 0;
    }
  }

  async block(key: string, ms: number): Promise<void> {
    if (ms <= 0 || Date.now() < this.skipUntil) return;
    await this.connection.set(key, '1', 'PX', ms).catch((error: unknown) => this.failOpen(error));
  }

  private recovered<T>(value: T): T {
    if (this.failing) {
      this.failing = false;
      this.logger.log('Redis answers again; rate limits apply');
    }
    return value;
  }

  private failOpen(error: unknown): void {
    this.skipUntil = Date.now() + SKIP_AFTER_FAILURE_MS;
    if (this.failing) return;
    this.failing = true;
    this.logger.warn({ err: error }, 'Redis unavailable; rate limits are not enforced until it answers (fail open)');
  }
}
