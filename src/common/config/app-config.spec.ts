import { generateKeyPairSync } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ConfigError, loadConfig } from './app-config';

const base = { DATABASE_URL: 'postgresql://u@h:5432/db', REDIS_URL: 'redis://h:6379' };
// Most cases are about other variables: development, so no credential key is needed.
const valid = { ...base, NODE_ENV: 'development' };
const KEY = `k1:${Buffer.alloc(32, 7).toString('base64')}`;

describe(loadConfig.name, () => {
  it('applies defaults', () => {
    expect(loadConfig(valid)).toMatchObject({
      databaseUrl: valid.DATABASE_URL,
      redisUrl: valid.REDIS_URL,
      port: 3000,
      logLevel: 'info',
      logFormat: 'json',
      authCacheTtlMs: 30000,
      databasePoolSize: 10,
      queuePrefix: 'dpa',
    });
  });

  it('applies the dependency and HTTP timeout defaults', () => {
    expect(loadConfig(valid)).toMatchObject({
      databaseConnectTimeoutMs: 5000,
      databaseQueryTimeoutMs: 5000,
      databaseTransactionTimeoutMs: 5000,
      redisConnectTimeoutMs: 5000,
      redisCommandTimeoutMs: 2000,
      httpHeadersTimeoutMs: 10000,
      httpRequestTimeoutMs: 30000,
      httpKeepAliveTimeoutMs: 5000,
    });
  });

  it('parses timeouts and refuses headers timeouts longer than the request timeout', () => {
    expect(loadConfig({ ...valid, DATABASE_QUERY_TIMEOUT_MS: '750', REDIS_COMMAND_TIMEOUT_MS: '300' })).toMatchObject({
      databaseQueryTimeoutMs: 750,
      redisCommandTimeoutMs: 300,
    });
    expect(() => loadConfig({ ...valid, HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '15000' })).toThrow(
      'Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS',
    );
  });

  it('applies and parses the request body limits', () => {
    expect(loadConfig(valid)).toMatchObject({ bodyMaxDepth: 32, bodyMaxKeys: 1000 });
    expect(loadConfig({ ...valid, BODY_MAX_DEPTH: '8', BODY_MAX_KEYS: '50000' })).toMatchObject({ bodyMaxDepth: 8, bodyMaxKeys: 50000 });
    expect(() => loadConfig({ ...valid, BODY_MAX_DEPTH: '1000' })).toThrow('Invalid configuration: BODY_MAX_DEPTH must not be greater than 200');
    expect(() => loadConfig({ ...valid, BODY_MAX_KEYS: 'many' })).toThrow('Invalid configuration: BODY_MAX_KEYS must');
  });

  it('parses numbers', () => {
    expect(loadConfig({ ...valid, PORT: '8080', AUTH_CACHE_TTL_MS: '0' })).toMatchObject({ port: 8080, authCacheTtlMs: 0 });
  });

  it('applies production-sensible rate limits and trusts no proxy by default', () => {
    expect(loadConfig(valid)).toMatchObject({
      trustProxy: false,
      rateLimits: { windowMs: 60_000, perPrincipal: 600, unauthenticatedPerAddress: 60, keyCreation: 10, reports: 10 },
    });
  });

  it('parses rate limits and trust proxy', () => {
    const config = loadConfig({
      ...valid,
      RATE_LIMIT_WINDOW_MS: '10000',
      RATE_LIMIT_PER_PRINCIPAL: '5',
      RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS: '3',
      RATE_LIMIT_KEY_CREATION: '2',
      TRUST_PROXY: '1',
    });
    expect(config).toMatchObject({ trustProxy: 1, rateLimits: { windowMs: 10_000, perPrincipal: 5, unauthenticatedPerAddress: 3, keyCreation: 2 } });
    expect(loadConfig({ ...valid, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ ...valid, TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8']);
  });

  it.each([
    [{ REDIS_URL: valid.REDIS_URL }, 'Invalid configuration: DATABASE_URL is not set'],
    [{ ...valid, DATABASE_URL: 'mysql://x' }, 'Invalid configuration: DATABASE_URL must be a postgresql:// URL'],
    [{ ...valid, REDIS_URL: 'http://x' }, 'Invalid configuration: REDIS_URL must be a redis:// or rediss:// URL'],
    [{ ...valid, PORT: '70000' }, 'Invalid configuration: PORT must not be greater than 65535'],
    [{ ...valid, DATABASE_QUERY_TIMEOUT_MS: '5s' }, 'Invalid configuration: DATABASE_QUERY_TIMEOUT_MS must'],
    [{ ...valid, REDIS_COMMAND_TIMEOUT_MS: '10' }, 'Invalid configuration: REDIS_COMMAND_TIMEOUT_MS must not be less than 100'],
    [{ ...valid, RATE_LIMIT_PER_PRINCIPAL: '0' }, 'Invalid configuration: RATE_LIMIT_PER_PRINCIPAL must not be less than 1'],
    [{ ...valid, RATE_LIMIT_WINDOW_MS: '1m' }, 'Invalid configuration: RATE_LIMIT_WINDOW_MS must'],
    [{ ...valid, TRUST_PROXY: 'yes' }, 'Invalid configuration: TRUST_PROXY must be true, false, a number of hops'],
    [{ ...valid, LOG_LEVEL: 'loud' }, 'Invalid configuration: LOG_LEVEL must be one of the following values: fatal, error, warn, info, debug, trace, silent'],
  ])('names the bad variable in one line: %p', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
  it('LOCAL_GIT lives under GIT_LOCAL_ROOT: required in production when enabled, the OS temporary directory elsewhere', () => {
    const key = `k:${Buffer.alloc(32, 1).toString('base64')}`;
    expect(() => loadConfig({ ...valid, NODE_ENV: 'production', CREDENTIALS_KEYS: key, GIT_LOCAL_ENABLED: 'true' })).toThrow(
      'Invalid configuration: GIT_LOCAL_ROOT is not set (required when GIT_LOCAL_ENABLED=true in production)',
    );
    expect(loadConfig({ ...valid, NODE_ENV: 'production', CREDENTIALS_KEYS: key, GIT_LOCAL_ENABLED: 'true', GIT_LOCAL_ROOT: '/srv/git/' }).git).toMatchObject({
      localEnabled: true,
      localRoot: '/srv/git',
    });
    expect(loadConfig({ ...valid, NODE_ENV: 'production', CREDENTIALS_KEYS: key }).git.localEnabled).toBe(false);
    expect(loadConfig({ ...valid, NODE_ENV: 'test' }).git.localRoot).toBe(realpathSync(tmpdir()));
  });

  it('caps merge queues and counts rate limits per actor', () => {
    expect(loadConfig(valid)).toMatchObject({ mergeQueues: { maxLiveEntries: 1000, maxPerOrganization: 100 }, rateLimits: { perActor: 600 } });
    expect(loadConfig({ ...valid, RATE_LIMIT_PER_PRINCIPAL: '50' }).rateLimits.perActor).toBe(50);
    expect(loadConfig({ ...valid, MERGE_QUEUE_MAX_LIVE_ENTRIES: '5', MERGE_QUEUE_MAX_PER_ORGANIZATION: '2', RATE_LIMIT_PER_ACTOR: '70' })).toMatchObject({
      mergeQueues: { maxLiveEntries: 5, maxPerOrganization: 2 },
      rateLimits: { perActor: 70 },
    });
    expect(() => loadConfig({ ...valid, MERGE_QUEUE_MAX_LIVE_ENTRIES: '0' })).toThrow('MERGE_QUEUE_MAX_LIVE_ENTRIES');
  });

  describe('when NODE_ENV is forgotten', () => {
    it('behaves as production: no built-in credential key, one line naming CREDENTIALS_KEYS', () => {
      expect(() => loadConfig(base)).toThrow(ConfigError);
      expect(() => loadConfig(base)).toThrow(
        /^Invalid configuration: CREDENTIALS_KEYS is not set \(required in production, which is what an unset NODE_ENV means\)$/,
      );
      expect(() => loadConfig({ ...base, NODE_ENV: '' })).toThrow('Invalid configuration: CREDENTIALS_KEYS is not set');
    });

    it('is production with real keys, and LOCAL_GIT is off unless GIT_LOCAL_ENABLED=true', () => {
      const config = loadConfig({ ...base, CREDENTIALS_KEYS: KEY });
      expect(config.environment).toBe('production');
      expect(config.credentialKeys.current).toBe('k1');
      expect(Object.keys(config.credentialKeys.keys)).toEqual(['k1']);
      expect(config.git.localEnabled).toBe(false);
      expect(loadConfig({ ...base, CREDENTIALS_KEYS: KEY, GIT_LOCAL_ENABLED: 'true', GIT_LOCAL_ROOT: '/srv/git' }).git.localEnabled).toBe(true);
    });

    it('keeps the development key and LOCAL_GIT only for an explicit development or test', () => {
      for (const NODE_ENV of ['development', 'test']) {
        const config = loadConfig({ ...base, NODE_ENV });
        expect(config.environment).toBe(NODE_ENV);
        expect(config.credentialKeys.current).toBe('dev');
        expect(config.git.localEnabled).toBe(true);
        expect(loadConfig({ ...base, NODE_ENV, GIT_LOCAL_ENABLED: 'false' }).git.localEnabled).toBe(false);
      }
      expect(() => loadConfig({ ...base, NODE_ENV: 'staging' })).toThrow(
        'Invalid configuration: NODE_ENV must be one of the following values: production, development, test',
      );
    });
  });

  it('applies and parses the operations settings: metrics and worker health ports, shutdown grace, CORS', () => {
    expect(loadConfig(valid)).toMatchObject({ metricsPort: 9464, workerHealthPort: 9465, shutdownGraceMs: 25_000, corsOrigins: [] });
    expect(
      loadConfig({
        ...valid,
        METRICS_PORT: '0',
        WORKER_HEALTH_PORT: '19465',
        SHUTDOWN_GRACE_MS: '5000',
        CORS_ORIGINS: 'https://App.example.com, http://localhost:5173',
      }),
    ).toMatchObject({
      metricsPort: 0,
      workerHealthPort: 19465,
      shutdownGraceMs: 5000,
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
    });
  });

  it.each([
    [{ ...valid, METRICS_PORT: '70000' }, 'Invalid configuration: METRICS_PORT must not be greater than 65535'],
    [{ ...valid, WORKER_HEALTH_PORT: 'health' }, 'Invalid configuration: WORKER_HEALTH_PORT must'],
    [{ ...valid, SHUTDOWN_GRACE_MS: '-1' }, 'Invalid configuration: SHUTDOWN_GRACE_MS must not be less than 0'],
    [{ ...valid, CORS_ORIGINS: '*' }, 'Invalid configuration: CORS_ORIGINS must be comma-separated origins'],
    [{ ...valid, CORS_ORIGINS: 'https://app.example.com/path' }, 'Invalid configuration: CORS_ORIGINS must be comma-separated origins'],
  ])('names a bad operations variable in one line: %p', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('takes an empty value as unset (an env file line `X=`, compose `${X:-}`): the default applies', () => {
    const config = loadConfig({ ...valid, PORT: '', PUBLIC_URL: '', CORS_ORIGINS: '', GIT_LOCAL_ROOT: '', DNS_SERVERS: '', METRICS_PORT: '' });
    expect(config).toMatchObject({
      port: 3000,
      metricsPort: 9464,
      corsOrigins: [],
      domains: { dnsServers: [] },
      git: { publicUrl: 'http://localhost:3000', localRoot: realpathSync(tmpdir()) },
    });
    expect(() => loadConfig({ ...valid, DATABASE_URL: '' })).toThrow('Invalid configuration: DATABASE_URL is not set');
  });

  it('applies and bounds the webhook sweep and retention and the merge-queue executor slice and retry delay', () => {
    expect(loadConfig(valid)).toMatchObject({
      webhooks: { sweepIntervalMs: 60_000, deliveryRetentionMs: 30 * 86_400_000 },
      mergeQueues: { executorSliceMs: 2_000, executorRetryDelayMs: 2_000 },
    });
    expect(
      loadConfig({
        ...valid,
        WEBHOOK_SWEEP_INTERVAL_MS: '5000',
        WEBHOOK_DELIVERY_RETENTION_MS: String(9 * 86_400_000),
        MERGE_QUEUE_EXECUTOR_SLICE_MS: '500',
        MERGE_QUEUE_EXECUTOR_RETRY_DELAY_MS: '10000',
      }),
    ).toMatchObject({
      webhooks: { sweepIntervalMs: 5_000, deliveryRetentionMs: 9 * 86_400_000 },
      mergeQueues: { executorSliceMs: 500, executorRetryDelayMs: 10_000 },
    });
    // Not longer than the oldest delivery accepted (7 days on GitHub Enterprise Server), a replay could find its id gone and be applied twice.
    expect(() => loadConfig({ ...valid, WEBHOOK_DELIVERY_RETENTION_MS: String(7 * 86_400_000) })).toThrow(
      'Invalid configuration: WEBHOOK_DELIVERY_RETENTION_MS must not be less than 691200000',
    );
    // The App's webhook secret, with the previous one during a rotation (current first); the previous alone is refused.
    expect(loadConfig(valid).webhooks.appSecrets).toEqual([]);
    expect(
      loadConfig({ ...valid, GITHUB_APP_WEBHOOK_SECRET: 'new-app-secret-0123', GITHUB_APP_WEBHOOK_SECRET_PREVIOUS: 'old-app-secret-0123' }).webhooks.appSecrets,
    ).toEqual(['new-app-secret-0123', 'old-app-secret-0123']);
    expect(() => loadConfig({ ...valid, GITHUB_APP_WEBHOOK_SECRET_PREVIOUS: 'old-app-secret-0123' })).toThrow(
      'Invalid configuration: GITHUB_APP_WEBHOOK_SECRET_PREVIOUS needs GITHUB_APP_WEBHOOK_SECRET',
    );
    expect(() => loadConfig({ ...valid, GITHUB_APP_WEBHOOK_SECRET: 'short' })).toThrow('GITHUB_APP_WEBHOOK_SECRET');
    expect(() => loadConfig({ ...valid, WEBHOOK_SWEEP_INTERVAL_MS: '10' })).toThrow(
      'Invalid configuration: WEBHOOK_SWEEP_INTERVAL_MS must not be less than 1000',
    );
    expect(() => loadConfig({ ...valid, MERGE_QUEUE_EXECUTOR_SLICE_MS: '0' })).toThrow(
      'Invalid configuration: MERGE_QUEUE_EXECUTOR_SLICE_MS must not be less than 100',
    );
    expect(() => loadConfig({ ...valid, MERGE_QUEUE_EXECUTOR_RETRY_DELAY_MS: '2s' })).toThrow(
      'Invalid configuration: MERGE_QUEUE_EXECUTOR_RETRY_DELAY_MS must',
    );
  });

  it('names every bad variable on a line of its own', () => {
    expect(() => loadConfig({ ...valid, PORT: '70000', LOG_LEVEL: 'loud', DATABASE_URL: '' })).toThrow(ConfigError);
    let message = '';
    try {
      loadConfig({ ...valid, PORT: '70000', LOG_LEVEL: 'loud', DATABASE_URL: '' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split('\n').sort()).toEqual([
      'Invalid configuration: DATABASE_URL is not set',
      'Invalid configuration: LOG_LEVEL must be one of the following values: fatal, error, warn, info, debug, trace, silent',
      'Invalid configuration: PORT must not be greater than 65535',
    ]);
  });

  it('takes GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY together, the key an RSA private key (\\n escapes allowed)', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(loadConfig(valid).git.github.app).toBeUndefined();
    expect(loadConfig({ ...valid, GITHUB_APP_ID: '42', GITHUB_APP_PRIVATE_KEY: rsa.replace(/\n/g, '\\n') }).git.github.app).toEqual({
      appId: '42',
      privateKey: rsa,
    });
    expect(() => loadConfig({ ...valid, GITHUB_APP_ID: '42' })).toThrow(
      'Invalid configuration: GITHUB_APP_PRIVATE_KEY is not set (GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY go together)',
    );
    expect(() => loadConfig({ ...valid, GITHUB_APP_PRIVATE_KEY: rsa })).toThrow('Invalid configuration: GITHUB_APP_ID is not set');
    expect(() => loadConfig({ ...valid, GITHUB_APP_ID: '42', GITHUB_APP_PRIVATE_KEY: 'not a key' })).toThrow(
      'Invalid configuration: GITHUB_APP_PRIVATE_KEY is not a PEM private key',
    );
    expect(() => loadConfig({ ...valid, GITHUB_APP_ID: '42', GITHUB_APP_PRIVATE_KEY: ec })).toThrow(
      'Invalid configuration: GITHUB_APP_PRIVATE_KEY must be an RSA key (GitHub App keys are; RS256)',
    );
  });

  it('defaults PUBLIC_URL from PORT and strips trailing slashes from the GitHub URLs', () => {
    expect(loadConfig({ ...valid, PORT: '8080' }).git).toMatchObject({ publicUrl: 'http://localhost:8080', github: { apiUrl: 'https://api.github.com' } });
    expect(loadConfig({ ...valid, PORT: '8080', PUBLIC_URL: 'https://api.example.com', GITHUB_API_URL: 'https://ghe.example.com/api/v3/' }).git).toMatchObject({
      publicUrl: 'https://api.example.com',
      github: { apiUrl: 'https://ghe.example.com/api/v3' },
    });
  });
});
