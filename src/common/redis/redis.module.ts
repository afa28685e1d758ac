import { Global, Inject, Injectable, Module, OnModuleDestroy } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { dependencyStatus } from '@/common/errors/dependency-errors';

/**
 * Options that bound every wait on Redis: connecting, each command (queued ones included, while
 * reconnecting), and a socket that stops answering after a write (a black-holed connection is
 * dropped and re-opened instead of holding every later command).
 */
export function redisOptions(config: AppConfig): RedisOptions {
  return {
    connectTimeout: config.redisConnectTimeoutMs,
    commandTimeout: config.redisCommandTimeoutMs,
    socketTimeout: config.redisCommandTimeoutMs,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
  };
}

/**
 * Logs a connection's outage once when it starts and once when it ends; ioredis emits an error
 * for every reconnect attempt, which would otherwise be one stack trace per attempt.
 */
export function watchRedisConnection(client: Redis, name: string): void {
  client.on('error', (error: Error) => dependencyStatus.down(name, error));
  client.on('ready', () => dependencyStatus.up(name));
}

/** One command connection per process; subscribers create their own with duplicate(). */
@Injectable()
export class RedisService implements OnModuleDestroy {
  readonly client: Redis;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = new Redis(config.redisUrl, { ...redisOptions(config), lazyConnect: false });
    watchRedisConnection(this.client, 'redis');
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

@Global()
@Module({ providers: [RedisService], exports: [RedisService] })
export class RedisModule {}
