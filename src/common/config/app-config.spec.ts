import { ConfigError, loadConfig } from './app-config';

const valid = { DATABASE_URL: 'postgresql://u@h:5432/db', REDIS_URL: 'redis://h:6379' };

describe(loadConfig.name, () => {
  it('applies defaults', () => {
    expect(loadConfig(valid)).toEqual({ databaseUrl: valid.DATABASE_URL, redisUrl: valid.REDIS_URL, port: 3000, logLevel: 'info', authCacheTtlMs: 30000, databasePoolSize: 10, queuePrefix: 'dpa' });
  });

  it('parses numbers', () => {
    expect(loadConfig({ ...valid, PORT: '8080', AUTH_CACHE_TTL_MS: '0' })).toMatchObject({ port: 8080, authCacheTtlMs: 0 });
  });

  it.each([
    [{ REDIS_URL: valid.REDIS_URL }, 'Invalid configuration: DATABASE_URL is not set'],
    [{ ...valid, DATABASE_URL: 'mysql://x' }, 'Invalid configuration: DATABASE_URL must be a postgresql:// URL'],
    [{ ...valid, REDIS_URL: 'http://x' }, 'Invalid configuration: REDIS_URL must be a redis:// or rediss:// URL'],
    [{ ...valid, PORT: '70000' }, 'Invalid configuration: PORT must not be greater than 65535'],
    [{ ...valid, LOG_LEVEL: 'loud' }, 'Invalid configuration: LOG_LEVEL must be one of the following values: fatal, error, warn, info, debug, trace, silent'],
  ])('names the bad variable in one line: %p', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
