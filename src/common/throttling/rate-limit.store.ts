import { once } from 'node:events';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { RedisService } from '@/common/redis/redis.module';
import { type BudgetSpec, DEFAULT_PRE_COUNT_POLICY, type HitRecord, LocalPreCount } from './local-pre-count';

/** What a check returns when Redis could not answer: the request is let through, without headers. */
export const FAIL_OPEN = Object.freeze({ totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 });

// The limiter sits on every request: a slow or absent Redis must cost at most this much, not the
// shared client's retries and reconnect queue.
const COMMAND_TIMEOUT_MS = 300;
// After a failure, checks skip Redis this long: a silent Redis then costs one timeout per second, not per check.
const SKIP_AFTER_FAILURE_MS = 1_000;
const READY_WAIT_MS = 2_000;
/** Hits counted locally are added to Redis this often (one pipelined round trip for all budgets). */
export const PRE_COUNT_FLUSH_MS = 50;

/**
 * A fixed window per budget (the algorithm of @nest-lab/throttler-storage-redis, adding `hits` at
 * once so that locally counted hits join in one call): the count expires with its window; past the
 * limit a block marker is set for `blockDuration`, and while it stands every hit is refused. Sent
 * by SHA (EVALSHA), not as text on every call.
 */
const INCREMENT_SCRIPT = `
local hitKey = KEYS[1]
local blockKey = KEYS[2]
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local blockDuration = tonumber(ARGV[3])
local hits = tonumber(ARGV[4])
local totalHits = redis.call('INCRBY', hitKey, hits)
local timeToExpire = redis.call('PTTL', hitKey)
if timeToExpire <= 0 then
  redis.call('PEXPIRE', hitKey, ttl)
  timeToExpire = ttl
end
local isBlocked = redis.call('GET', blockKey)
local timeToBlockExpire = 0
if isBlocked then
  timeToBlockExpire = redis.call('PTTL', blockKey)
elseif totalHits > limit then
  redis.call('SET', blockKey, 1, 'PX', blockDuration)
  isBlocked = '1'
  timeToBlockExpire = blockDuration
end
if isBlocked and timeToBlockExpire <= 0 then
  redis.call('DEL', blockKey)
  redis.call('SET', hitKey, hits, 'PX', ttl)
  totalHits = hits
  timeToExpire = ttl
  isBlocked = false
end
return { totalHits, timeToExpire, isBlocked and 1 or 0, timeToBlockExpire }
`;

type RateLimitRedis = Redis & {
  rateLimitIncrement(
    hitKey: string,
    blockKey: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    hits: number,
  ): Promise<[number, number, number, number]>;
};

/**
 * The counters of every budget, in Redis (fixed windows), on a connection of their own that never
 * queues: when Redis is down or silent, checks fail open at once and the outage is logged once.
 * With RATE_LIMIT_LOCAL_PRE_COUNT (the default) a hit on a budget far from spent is counted in
 * this process and added to Redis within PRE_COUNT_FLUSH_MS (see local-pre-count.ts for the
 * tolerance); near the limit every hit asks Redis.
 */
@Injectable()
export class RateLimitStore implements ThrottlerStorage, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimits');
  private readonly connection: RateLimitRedis;
  private readonly preCount: LocalPreCount | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private failing = false;
  private skipUntil = 0;

  constructor(redis: RedisService, @Inject(APP_CONFIG) config: AppConfig) {
    const connection = redis.client.duplicate({ enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: COMMAND_TIMEOUT_MS });
    connection.on('error', () => undefined);
    connection.defineCommand('rateLimitIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
    this.connection = connection as RateLimitRedis;
    this.preCount = config.rateLimits.localPreCount
      ? new LocalPreCount({ ...DEFAULT_PRE_COUNT_POLICY, freshMs: config.rateLimits.localPreCountFreshMs })
      : undefined;
  }

  async onModuleInit(): Promise<void> {
    if (this.connection.status === 'ready') return;
    await once(this.connection, 'ready', { signal: AbortSignal.timeout(READY_WAIT_MS) }).catch(() =>
      this.failOpen(new Error(`Redis not ready after ${READY_WAIT_MS} ms`)),
    );
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.flushTimer);
    await this.flush();
    await this.connection.quit().catch(() => this.connection.disconnect());
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, name: string): Promise<HitRecord> {
    const now = Date.now();
    if (now < this.skipUntil) return FAIL_OPEN;
    const hitKey = `{${key}:${name}}:hits`;
    const local = this.preCount?.tryLocal(hitKey, limit, now);
    if (local) {
      this.scheduleFlush();
      return local;
    }
    const spec: BudgetSpec = { ttlMs: ttl, limit, blockDurationMs: blockDuration, name };
    const hits = 1 + (this.preCount?.takePending(hitKey) ?? 0);
    try {
      const [totalHits, timeToExpire, isBlocked, timeToBlockExpire] = await this.connection.rateLimitIncrement(
        hitKey,
        `{${key}:${name}}:blocked`,
        ttl,
        limit,
        blockDuration,
        hits,
      );
      this.preCount?.synced(hitKey, spec, { totalHits, timeToExpireMs: timeToExpire, isBlocked: isBlocked === 1 }, Date.now());
      return this.recovered({
        totalHits,
        timeToExpire: Math.ceil(timeToExpire / 1000),
        isBlocked: isBlocked === 1,
        timeToBlockExpire: Math.ceil(timeToBlockExpire / 1000),
      });
    } catch (error) {
      this.preCount?.forget(hitKey);
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

  /** Adds every locally counted hit to Redis in one pipelined round trip. */
  async flush(): Promise<void> {
    this.flushTimer = undefined;
    const pending = this.preCount?.takeAllPending() ?? [];
    if (pending.length === 0) return;
    const pipeline = this.connection.pipeline();
    for (const { hitKey, hits, spec } of pending) {
      // Queued on the pipeline (it returns the pipeline, not a promise): the answers come from exec().
      void (pipeline as unknown as RateLimitRedis).rateLimitIncrement(
        hitKey,
        hitKey.replace(/:hits$/, ':blocked'),
        spec.ttlMs,
        spec.limit,
        spec.blockDurationMs,
        hits,
      );
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      const now = Date.now();
      results.forEach(([error, answer], i) => {
        const { hitKey, spec } = pending[i];
        if (error || !Array.isArray(answer)) return this.preCount?.forget(hitKey);
        const [totalHits, timeToExpire, isBlocked] = answer as number[];
        this.preCount?.synced(hitKey, spec, { totalHits, timeToExpireMs: timeToExpire, isBlocked: isBlocked === 1 }, now);
      });
    } catch (error) {
      // The hits are lost, as a failed synchronous check lets its request through: fail open.
      for (const { hitKey } of pending) this.preCount?.forget(hitKey);
      this.failOpen(error);
    }
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => void this.flush(), PRE_COUNT_FLUSH_MS);
    this.flushTimer.unref();
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
