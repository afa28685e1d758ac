import { feature, int, pattern } from '../variables';

export const redisConfig = feature(
  'Redis',
  {
    REDIS_URL: pattern(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL', {
      required: true,
      doc: '`redis://[user:password@]host:port[/db]` or `rediss://`',
      example: 'redis://127.0.0.1:6379',
    }),
    REDIS_CONNECT_TIMEOUT_MS: int({ min: 100, max: 600_000, default: 5_000, doc: 'opening a Redis connection' }),
    REDIS_COMMAND_TIMEOUT_MS: int({
      min: 100,
      max: 600_000,
      default: 2_000,
      doc: 'one Redis command (queued ones included while reconnecting); a connection silent this long after a write is dropped and re-opened',
    }),
  },
  (v) => ({ redisUrl: v.REDIS_URL, redisConnectTimeoutMs: v.REDIS_CONNECT_TIMEOUT_MS, redisCommandTimeoutMs: v.REDIS_COMMAND_TIMEOUT_MS }),
);
