import { createPrivateKey } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, validateSync } from 'class-validator';
import { QueueName } from '@/common/queues/queue-names';

/**
 * An optional whole number in [min, max]: absent or empty is undefined, anything else must parse.
 * The same decorators, in the same order, as writing them out on the property.
 */
function OptionalInt(min: number, max: number): PropertyDecorator {
  const decorators = [IsOptional(), Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value))), IsInt(), Min(min), Max(max)];
  return (target, key) => {
    for (const decorator of decorators.reverse()) decorator(target, key);
  };
}

/**
 * Environment variables the processes read, validated once at boot into AppConfig. The few other
 * readers of process.env run without it: failpoints (test builds only), the CLI, the container
 * healthcheck, migrate, and the PATH handed to git.
 */
export class EnvironmentVariables {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'must be a postgresql:// URL' })
  DATABASE_URL: string;

  @Matches(/^rediss?:\/\/\S+$/, { message: 'must be a redis:// or rediss:// URL' })
  REDIS_URL: string;

  @OptionalInt(0, 65535)
  PORT?: number;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  @OptionalInt(0, 3_600_000)
  AUTH_CACHE_TTL_MS?: number;

  @OptionalInt(1, 1000)
  DATABASE_POOL_SIZE?: number;

  // 'false' behind a pooler in transaction mode (PgBouncer < 1.21 without max_prepared_statements).
  @IsOptional()
  @IsIn(['true', 'false'])
  DATABASE_PREPARED_STATEMENTS?: string;

  @IsOptional()
  @IsString()
  @Matches(/^[a-z][a-z0-9-]{0,30}$/, { message: 'must be a short lower-case prefix' })
  QUEUE_PREFIX?: string;

  // class-transformer recurses per level: far past a few hundred levels it overflows the stack.
  @OptionalInt(2, 200)
  BODY_MAX_DEPTH?: number;

  @OptionalInt(10, 100_000)
  BODY_MAX_KEYS?: number;

  @OptionalInt(100, 600000)
  DATABASE_CONNECT_TIMEOUT_MS?: number;

  @OptionalInt(100, 600000)
  DATABASE_QUERY_TIMEOUT_MS?: number;

  @OptionalInt(100, 600000)
  DATABASE_TRANSACTION_TIMEOUT_MS?: number;

  @OptionalInt(100, 600000)
  REDIS_CONNECT_TIMEOUT_MS?: number;

  @OptionalInt(100, 600000)
  REDIS_COMMAND_TIMEOUT_MS?: number;

  @OptionalInt(1000, 600000)
  HTTP_HEADERS_TIMEOUT_MS?: number;

  @OptionalInt(1000, 3600000)
  HTTP_REQUEST_TIMEOUT_MS?: number;

  @OptionalInt(1000, 600000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS?: number;

  /** Express `trust proxy`: `false`, `true`, a number of hops, or comma-separated addresses/subnets. */
  @IsOptional()
  @Matches(
    /^(true|false|\d{1,2}|(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(\/\d{1,3})?)(\s*,\s*(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(\/\d{1,3})?))*)$/,
    {
      message: 'must be true, false, a number of hops, or comma-separated addresses/subnets (or loopback, linklocal, uniquelocal)',
    },
  )
  TRUST_PROXY?: string;

  @OptionalInt(1000, 86_400_000)
  RATE_LIMIT_WINDOW_MS?: number;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_PER_PRINCIPAL?: number;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_PER_ACTOR?: number;

  @IsOptional()
  @IsIn(['true', 'false'])
  RATE_LIMIT_LOCAL_PRE_COUNT?: string;

  @OptionalInt(10, 10_000)
  RATE_LIMIT_LOCAL_PRE_COUNT_FRESH_MS?: number;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS?: number;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_KEY_CREATION?: number;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_REPORTS?: number;

  /** Comma-separated resolver addresses, `ip` or `ip:port` (`[ipv6]:port`); empty means the system's. */
  @IsOptional()
  @Matches(
    /^\s*(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+)(\s*,\s*(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+))*\s*$/,
    {
      message: 'must be comma-separated IP addresses, each with an optional :port (IPv6 with a port as [addr]:port)',
    },
  )
  DNS_SERVERS?: string;

  @OptionalInt(100, 60_000)
  DNS_TIMEOUT_MS?: number;

  @OptionalInt(60_000, 7 * 86_400_000)
  DOMAIN_REVERIFY_INTERVAL_MS?: number;

  @OptionalInt(0, 30 * 86_400_000)
  DOMAIN_VERIFICATION_GRACE_MS?: number;

  @OptionalInt(60_000, 365 * 86_400_000)
  DOMAIN_PENDING_TTL_MS?: number;

  @OptionalInt(1_000, 86_400_000)
  DOMAIN_PENDING_SWEEP_INTERVAL_MS?: number;

  /** Unset (or empty) means production: a forgotten variable never turns development conveniences on. */
  @IsOptional()
  @Transform(({ value }) => (value === '' ? undefined : value))
  @IsIn(['production', 'development', 'test'])
  NODE_ENV?: string;

  /** The API's Prometheus listener (GET /metrics), never the public port; 0 = any free port. */
  @OptionalInt(0, 65535)
  METRICS_PORT?: number;

  /** The worker's health and metrics listener; 0 = any free port. */
  @OptionalInt(0, 65535)
  WORKER_HEALTH_PORT?: number;

  /** How long a process given SIGTERM may spend finishing in-flight requests and jobs. */
  @OptionalInt(0, 600_000)
  SHUTDOWN_GRACE_MS?: number;

  /** Browser origins allowed by CORS, comma-separated; unset: no CORS headers at all. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#,]+(\s*,\s*https?:\/\/[^\s/?#,]+)*$/, { message: 'must be comma-separated origins such as https://app.example.com' })
  CORS_ORIGINS?: string;

  /** `id:base64-of-32-bytes`, comma-separated: the first encrypts, every one decrypts (key rotation). */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=(\s*,\s*[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=)*$/, {
    message: 'must be comma-separated id:base64 pairs of 32-byte keys',
  })
  CREDENTIALS_KEYS?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  GIT_LOCAL_ENABLED?: string;

  @IsOptional()
  @Matches(/^\/\S*$/, { message: 'must be an absolute path' })
  GIT_LOCAL_ROOT?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, { message: 'must be an http(s) URL without query or fragment' })
  GITHUB_API_URL?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, { message: 'must be an http(s) URL without query or fragment' })
  GITHUB_WEB_URL?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9._-]{1,100}$/, { message: 'must be an OAuth client id' })
  GITHUB_CLIENT_ID?: string;

  @IsOptional()
  @Matches(/^\S{1,200}$/, { message: 'must be an OAuth client secret without spaces' })
  GITHUB_CLIENT_SECRET?: string;

  @IsOptional()
  @Matches(/^[a-z0-9][a-z0-9-]{0,99}$/, { message: 'must be a GitHub App slug' })
  GITHUB_APP_SLUG?: string;

  @IsOptional()
  @Matches(/^[1-9][0-9]{0,19}$/, { message: 'must be the numeric GitHub App id' })
  GITHUB_APP_ID?: string;

  /** The App's private key (PEM; `\n` escapes allowed for one-line env files). */
  @IsOptional()
  @IsString()
  GITHUB_APP_PRIVATE_KEY?: string;

  @OptionalInt(100, 120_000)
  GIT_PROVIDER_TIMEOUT_MS?: number;

  @OptionalInt(100, 600_000)
  GIT_LOCAL_TIMEOUT_MS?: number;

  @OptionalInt(0, 3_600_000)
  GIT_REPOSITORY_CACHE_TTL_MS?: number;

  @OptionalInt(1024, 1_073_741_824)
  GIT_PROVIDER_MAX_RESPONSE_BYTES?: number;

  @OptionalInt(1, 10_000)
  GIT_PROVIDER_MAX_PAGES?: number;

  @IsOptional()
  @IsIn(['true', 'false'])
  GIT_SERVER_ALLOW_HTTP?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  GIT_SERVER_ALLOW_PRIVATE_HOSTS?: string;

  /** DNS servers for self-hosted git server names, `ip` or `ip:port` comma-separated (default: the system resolver). */
  @IsOptional()
  @Matches(/^[0-9A-Fa-f.:\[\]]+(\s*,\s*[0-9A-Fa-f.:\[\]]+)*$/, { message: 'must be comma-separated ip or ip:port' })
  GIT_DNS_SERVERS?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+$/, { message: 'must be an origin such as https://api.example.com' })
  PUBLIC_URL?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\s*,\s*https?:\/\/[^\s/?#]+)*$/, { message: 'must be comma-separated origins such as https://app.example.com' })
  OAUTH_REDIRECT_ALLOWED_ORIGINS?: string;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_OAUTH_CALLBACK?: number;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_USAGE_IMPORT?: number;

  @OptionalInt(1, 10_000_000)
  RATE_LIMIT_WEBHOOKS?: number;

  @OptionalInt(0, 86_400)
  USAGE_IMPORT_COOLDOWN_SECONDS?: number;

  @OptionalInt(1_000, 365 * 86_400_000)
  USAGE_IMPORT_FRESHNESS_MS?: number;

  @OptionalInt(1, 1_000_000)
  USAGE_IMPORT_MAX_PAGES?: number;

  @OptionalInt(100, 3_600_000)
  MERGE_QUEUE_SWEEP_INTERVAL_MS?: number;

  @OptionalInt(300, 600_000)
  MERGE_QUEUE_LEASE_MS?: number;

  @OptionalInt(1, 15)
  MERGE_QUEUE_STATUS_POST_ATTEMPTS?: number;

  @OptionalInt(10, 10_000)
  MERGE_QUEUE_STATUS_POST_BACKOFF_MS?: number;

  @OptionalInt(100, 86_400_000)
  MERGE_QUEUE_STATUS_REPAIR_INTERVAL_MS?: number;

  @OptionalInt(1_000, 86_400_000)
  MERGE_QUEUE_PATHS_SWEEP_INTERVAL_MS?: number;

  @OptionalInt(1, 100_000)
  MERGE_QUEUE_MAX_LIVE_ENTRIES?: number;

  @OptionalInt(1, 100_000)
  MERGE_QUEUE_MAX_PER_ORGANIZATION?: number;

  @OptionalInt(10, 3_600_000)
  MERGE_QUEUE_RETRY_BASE_MS?: number;

  @OptionalInt(10, 86_400_000)
  MERGE_QUEUE_RETRY_MAX_MS?: number;

  @OptionalInt(1, 1_000)
  MERGE_QUEUE_QUARANTINE_AFTER?: number;

  @OptionalInt(100, 86_400_000)
  JOB_SCHEDULER_CHECK_INTERVAL_MS?: number;

  @OptionalInt(1, 100)
  JOB_ATTEMPTS?: number;

  @OptionalInt(10, 3_600_000)
  JOB_BACKOFF_MS?: number;

  @OptionalInt(1, 256)
  WORKER_CONCURRENCY?: number;
}

/** A BullMQ worker's settings (passed to its Worker when it is created). */
export interface WorkerSettings {
  concurrency: number;
  lockDuration?: number;
  stalledInterval?: number;
  maxStalledCount?: number;
}

/**
 * Each queue's worker. `parallel` (WORKER_CONCURRENCY) for the queues whose jobs are independent;
 * one at a time where order matters (commit statuses: the newest revision wins in the process) or
 * the work is periodic. Resumable jobs (usage imports, merge-queue executors) are taken over
 * quickly when their worker dies (short lock, frequent stalled check) and never failed for stalling.
 */
function workerSettings(parallel: number): Record<QueueName, WorkerSettings> {
  const resumable = { lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 100 };
  return {
    [QueueName.Maintenance]: { concurrency: 1 },
    [QueueName.Domains]: { concurrency: 1 },
    [QueueName.MergeQueues]: { concurrency: parallel, ...resumable },
    [QueueName.UsageImports]: { concurrency: parallel, ...resumable },
    [QueueName.Webhooks]: { concurrency: parallel },
    [QueueName.CommitStatuses]: { concurrency: 1 },
  };
}

export interface AppConfig {
  databaseUrl: string;
  redisUrl: string;
  port: number;
  logLevel: string;
  authCacheTtlMs: number;
  databasePoolSize: number;
  /** Name each statement by its text so every connection parses and plans it once (see prisma.service.ts). */
  databasePreparedStatements: boolean;
  queuePrefix: string;
  /** JSON request bodies: deepest nesting, and keys plus array items in all; checked before validation. */
  bodyMaxDepth: number;
  bodyMaxKeys: number;
  /** Opening a Postgres connection, and waiting for one from the pool. */
  databaseConnectTimeoutMs: number;
  /** One statement: the server cancels it (statement_timeout), the client gives up shortly after. */
  databaseQueryTimeoutMs: number;
  /** An interactive transaction from BEGIN to COMMIT. */
  databaseTransactionTimeoutMs: number;
  redisConnectTimeoutMs: number;
  /** One Redis command; also how long a socket may stay silent after a write before it is dropped. */
  redisCommandTimeoutMs: number;
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  /** Express `trust proxy`; decides which address `req.ip` (and so the per-address limit) sees. */
  trustProxy: boolean | number | string[];
  /** Budgets shared by every API process through Redis, each per window of `windowMs`. */
  rateLimits: {
    windowMs: number;
    perPrincipal: number;
    /** Every key of one member or service account together: minting keys does not multiply the budget. */
    perActor: number;
    /** Count hits on budgets far from spent in the process, added to Redis in batches (local-pre-count.ts). */
    localPreCount: boolean;
    /** How old a Redis reading may be for a local decision of the pre-count (RATE_LIMIT_LOCAL_PRE_COUNT_FRESH_MS). */
    localPreCountFreshMs: number;
    unauthenticatedPerAddress: number;
    keyCreation: number;
    reports: number;
    /** GET /scm/callback per client address. */
    oauthCallback: number;
    /** POST /scm/actions/usage/import per organization. */
    usageImport: number;
    /** POST /webhooks/github per client address (the provider's delivery hosts). */
    webhooks: number;
  };
  /** CI usage imports (POST /scm/actions/usage/import and the worker). */
  usage: {
    /** The least `retryAfterSeconds` the import endpoint answers. */
    cooldownSeconds: number;
    /** A code source whose newest successful import is older than this makes the usage `stale`. */
    freshnessMs: number;
    /** The most pages of workflow runs one import walks through; a provider listing more fails the import (PAGE_LIMIT_REACHED). */
    maxPages: number;
  };
  /** The merge-queue worker. */
  mergeQueues: {
    /** How often a worker looks for queues whose operations wait without an executor (a lost kick, a dead process). */
    sweepIntervalMs: number;
    /**
     * How long an executor's lease on a queue lasts unless renewed (renewed every third of it); an
     * executor that stops renewing (a stalled process) is replaced this long after its last renewal.
     */
    leaseMs: number;
    /** Entries of one queue not yet merged, removed or failed; one more is a 422. */
    maxLiveEntries: number;
    /** Merge queues of one organization; one more is a 422. */
    maxPerOrganization: number;
    /** After a failed executor run: exponential backoff with full jitter from this base... */
    retryBaseMs: number;
    /** ...up to this (a provider's Retry-After included). */
    retryMaxMs: number;
    /** A queue whose executor failed this many times in a row is quarantined (paused with the reason). */
    quarantineAfter: number;
    /** Attempts of one commit status post, and the first retry's delay (each next one doubles). */
    statusPostAttempts: number;
    statusPostBackoffMs: number;
    /** How often a worker posts again, from the queue's current state, the statuses whose every attempt the provider refused. */
    statusRepairIntervalMs: number;
    /** How often the worker looks for live entries of queues with path groups whose changed paths were never kept, and asks them. */
    pathsSweepIntervalMs: number;
  };
  /** How often each worker checks that its BullMQ job schedulers still exist (Redis may have lost them) and re-creates them. */
  jobSchedulerCheckIntervalMs: number;
  /** BullMQ: the default options of every job, and each queue's worker settings. */
  jobs: {
    /** Attempts of a job before it fails for good (repeatable jobs set their own). */
    attempts: number;
    /** The first retry's delay; each next one doubles. */
    backoffMs: number;
    workers: Readonly<Record<QueueName, WorkerSettings>>;
  };
  /** Managed domains: the resolver verification uses, and periodic re-verification. */
  domains: {
    /** Empty: the system's resolvers. */
    dnsServers: string[];
    /** Per attempt of one lookup. */
    dnsTimeoutMs: number;
    reverifyIntervalMs: number;
    /** How long an ACTIVE domain's record may be missing before it lapses. */
    verificationGraceMs: number;
    /** How long a registration may stay PENDING_VERIFICATION; past it, it expires (cannot be verified, is replaced by a new registration). */
    pendingTtlMs: number;
    /** How often a worker deletes PENDING registrations older than pendingTtlMs (the domains queue's job scheduler). */
    pendingSweepIntervalMs: number;
  };
  /** `production` unless NODE_ENV says otherwise. */
  environment: 'production' | 'development' | 'test';
  /** Port of the API's separate /metrics listener (0: any free port). */
  metricsPort: number;
  /** Port of the worker's /health/live, /health/ready and /metrics listener (0: any free port). */
  workerHealthPort: number;
  /** SIGTERM: how long in-flight HTTP requests and jobs get before the process exits anyway. */
  shutdownGraceMs: number;
  /** CORS: allowed origins (lower case); empty means CORS stays off. */
  corsOrigins: string[];
  /** Keys for provider credentials at rest; `current` encrypts, all decrypt. */
  credentialKeys: { current: string; keys: Record<string, Buffer> };
  git: GitConfig;
}

export interface GitConfig {
  /** LOCAL_GIT code sources (bare repositories on this server's disk); on by default only when NODE_ENV is development or test. */
  localEnabled: boolean;
  /**
   * LOCAL_GIT repositories must live under this directory (symlinks resolved). Required in
   * production when LOCAL_GIT is enabled; elsewhere it defaults to the OS temporary directory.
   */
  localRoot: string;
  /** One `git` command on a LOCAL_GIT repository (its whole process group is killed past it). */
  localTimeoutMs: number;
  github: {
    apiUrl: string;
    webUrl: string;
    clientId?: string;
    clientSecret?: string;
    appSlug?: string;
    /** The GitHub App that APP_INSTALLATION integrations act as (installation tokens); both or neither. Never logged. */
    app?: { appId: string; privateKey: string };
  };
  /** Each request to a provider, connection to last byte. */
  timeoutMs: number;
  /** The most bytes one provider response body may have; more is a provider failure (502). */
  maxResponseBytes: number;
  /** The most pages one provider listing is followed through; more is a provider failure (502). */
  maxPages: number;
  repositoryCacheTtlMs: number;
  /** Self-hosted servers: plain http, and private/loopback/CGNAT/unique-local hosts, both refused unless set. */
  allowHttp: boolean;
  allowPrivateHosts: boolean;
  dnsServers?: string[];
  /** The API's public origin: the OAuth callback URL given to providers is `${publicUrl}/scm/callback`. */
  publicUrl: string;
  /** Origins (besides relative paths) the OAuth callback may redirect to. */
  redirectAllowedOrigins: string[];
}

/** The development-only credential key, used when CREDENTIALS_KEYS is unset and NODE_ENV is development or test. Never secret. */
const DEVELOPMENT_CREDENTIAL_KEY = { id: 'dev', key: Buffer.alloc(32, 'delivery-platform-development-key') };

export class ConfigError extends Error {}

/** GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY together, the key checked to be an RSA private key (its value never in the message). */
function githubApp(appId: string | undefined, privateKey: string | undefined): { app?: { appId: string; privateKey: string } } {
  if (!appId && !privateKey) return {};
  if (!appId || !privateKey)
    throw new ConfigError(
      `Invalid configuration: ${appId ? 'GITHUB_APP_PRIVATE_KEY' : 'GITHUB_APP_ID'} is not set (GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY go together)`,
    );
  const pem = privateKey.includes('\\n') ? privateKey.replace(/\\n/g, '\n') : privateKey;
  let key;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new ConfigError('Invalid configuration: GITHUB_APP_PRIVATE_KEY is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new ConfigError('Invalid configuration: GITHUB_APP_PRIVATE_KEY must be an RSA key (GitHub App keys are; RS256)');
  return { app: { appId, privateKey: pem } };
}

/**
 * Validates the environment once and returns the typed configuration. Throws a ConfigError whose
 * message is one line per bad variable, naming it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // An empty value is an unset one (`X=` in an env file, `\${X:-}` in compose): the default applies.
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const raw = plainToInstance(EnvironmentVariables, given, { enableImplicitConversion: false });
  const errors = validateSync(raw, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => {
      const value = (env as Record<string, string | undefined>)[e.property];
      const why = value === undefined || value === '' ? 'is not set' : Object.values(e.constraints ?? {})[0]?.replace(`${e.property} `, '');
      return `Invalid configuration: ${e.property} ${why}`;
    });
    throw new ConfigError(lines.join('\n'));
  }
  if ((raw.HTTP_HEADERS_TIMEOUT_MS ?? 10_000) > (raw.HTTP_REQUEST_TIMEOUT_MS ?? 30_000)) {
    throw new ConfigError('Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS');
  }
  // Unset is production: only an explicit development/test turns on the built-in key, LOCAL_GIT and failpoints.
  const environment = (raw.NODE_ENV ?? 'production') as AppConfig['environment'];
  if (environment === 'production' && !raw.CREDENTIALS_KEYS)
    throw new ConfigError('Invalid configuration: CREDENTIALS_KEYS is not set (required in production, which is what an unset NODE_ENV means)');
  const localEnabled = raw.GIT_LOCAL_ENABLED === undefined ? environment !== 'production' : raw.GIT_LOCAL_ENABLED === 'true';
  // LOCAL_GIT reads and writes the server's disk: in production only under a directory the operator chose.
  if (environment === 'production' && localEnabled && !raw.GIT_LOCAL_ROOT)
    throw new ConfigError('Invalid configuration: GIT_LOCAL_ROOT is not set (required when GIT_LOCAL_ENABLED=true in production)');
  return {
    databaseUrl: raw.DATABASE_URL,
    redisUrl: raw.REDIS_URL,
    port: raw.PORT ?? 3000,
    logLevel: raw.LOG_LEVEL ?? 'info',
    authCacheTtlMs: raw.AUTH_CACHE_TTL_MS ?? 30_000,
    databasePoolSize: raw.DATABASE_POOL_SIZE ?? 10,
    databasePreparedStatements: raw.DATABASE_PREPARED_STATEMENTS !== 'false',
    queuePrefix: raw.QUEUE_PREFIX ?? 'dpa',
    bodyMaxDepth: raw.BODY_MAX_DEPTH ?? 32,
    bodyMaxKeys: raw.BODY_MAX_KEYS ?? 1_000,
    databaseConnectTimeoutMs: raw.DATABASE_CONNECT_TIMEOUT_MS ?? 5_000,
    databaseQueryTimeoutMs: raw.DATABASE_QUERY_TIMEOUT_MS ?? 5_000,
    databaseTransactionTimeoutMs: raw.DATABASE_TRANSACTION_TIMEOUT_MS ?? 5_000,
    redisConnectTimeoutMs: raw.REDIS_CONNECT_TIMEOUT_MS ?? 5_000,
    redisCommandTimeoutMs: raw.REDIS_COMMAND_TIMEOUT_MS ?? 2_000,
    httpHeadersTimeoutMs: raw.HTTP_HEADERS_TIMEOUT_MS ?? 10_000,
    httpRequestTimeoutMs: raw.HTTP_REQUEST_TIMEOUT_MS ?? 30_000,
    httpKeepAliveTimeoutMs: raw.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 5_000,
    trustProxy: parseTrustProxy(raw.TRUST_PROXY),
    rateLimits: {
      windowMs: raw.RATE_LIMIT_WINDOW_MS ?? 60_000,
      perPrincipal: raw.RATE_LIMIT_PER_PRINCIPAL ?? 600,
      perActor: raw.RATE_LIMIT_PER_ACTOR ?? raw.RATE_LIMIT_PER_PRINCIPAL ?? 600,
      localPreCount: raw.RATE_LIMIT_LOCAL_PRE_COUNT !== 'false',
      localPreCountFreshMs: raw.RATE_LIMIT_LOCAL_PRE_COUNT_FRESH_MS ?? 200,
      unauthenticatedPerAddress: raw.RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS ?? 60,
      keyCreation: raw.RATE_LIMIT_KEY_CREATION ?? 10,
      reports: raw.RATE_LIMIT_REPORTS ?? 10,
      oauthCallback: raw.RATE_LIMIT_OAUTH_CALLBACK ?? 30,
      usageImport: raw.RATE_LIMIT_USAGE_IMPORT ?? 10,
      webhooks: raw.RATE_LIMIT_WEBHOOKS ?? 1_200,
    },
    usage: {
      cooldownSeconds: raw.USAGE_IMPORT_COOLDOWN_SECONDS ?? 60,
      freshnessMs: raw.USAGE_IMPORT_FRESHNESS_MS ?? 86_400_000,
      maxPages: raw.USAGE_IMPORT_MAX_PAGES ?? 1_000,
    },
    mergeQueues: {
      sweepIntervalMs: raw.MERGE_QUEUE_SWEEP_INTERVAL_MS ?? 10_000,
      leaseMs: raw.MERGE_QUEUE_LEASE_MS ?? 15_000,
      maxLiveEntries: raw.MERGE_QUEUE_MAX_LIVE_ENTRIES ?? 1_000,
      maxPerOrganization: raw.MERGE_QUEUE_MAX_PER_ORGANIZATION ?? 100,
      retryBaseMs: raw.MERGE_QUEUE_RETRY_BASE_MS ?? 1_000,
      retryMaxMs: raw.MERGE_QUEUE_RETRY_MAX_MS ?? 300_000,
      quarantineAfter: raw.MERGE_QUEUE_QUARANTINE_AFTER ?? 10,
      statusPostAttempts: raw.MERGE_QUEUE_STATUS_POST_ATTEMPTS ?? 10,
      statusPostBackoffMs: raw.MERGE_QUEUE_STATUS_POST_BACKOFF_MS ?? 2_000,
      statusRepairIntervalMs: raw.MERGE_QUEUE_STATUS_REPAIR_INTERVAL_MS ?? 300_000,
      pathsSweepIntervalMs: raw.MERGE_QUEUE_PATHS_SWEEP_INTERVAL_MS ?? 60_000,
    },
    jobSchedulerCheckIntervalMs: raw.JOB_SCHEDULER_CHECK_INTERVAL_MS ?? 60_000,
    jobs: { attempts: raw.JOB_ATTEMPTS ?? 5, backoffMs: raw.JOB_BACKOFF_MS ?? 1_000, workers: workerSettings(raw.WORKER_CONCURRENCY ?? 4) },
    domains: {
      dnsServers: (raw.DNS_SERVERS ?? '')
        .split(',')
        .map((server) => server.trim())
        .filter(Boolean),
      dnsTimeoutMs: raw.DNS_TIMEOUT_MS ?? 5_000,
      reverifyIntervalMs: raw.DOMAIN_REVERIFY_INTERVAL_MS ?? 3_600_000,
      verificationGraceMs: raw.DOMAIN_VERIFICATION_GRACE_MS ?? 86_400_000,
      pendingTtlMs: raw.DOMAIN_PENDING_TTL_MS ?? 7 * 86_400_000,
      pendingSweepIntervalMs: raw.DOMAIN_PENDING_SWEEP_INTERVAL_MS ?? 600_000,
    },
    environment,
    metricsPort: raw.METRICS_PORT ?? 9464,
    workerHealthPort: raw.WORKER_HEALTH_PORT ?? 9465,
    shutdownGraceMs: raw.SHUTDOWN_GRACE_MS ?? 25_000,
    corsOrigins: (raw.CORS_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    credentialKeys: parseCredentialKeys(raw.CREDENTIALS_KEYS),
    git: {
      localEnabled,
      localRoot: (raw.GIT_LOCAL_ROOT ?? safeRealpath(tmpdir())).replace(/(.)\/+$/, '$1'),
      localTimeoutMs: raw.GIT_LOCAL_TIMEOUT_MS ?? 30_000,
      github: {
        apiUrl: (raw.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/$/, ''),
        webUrl: (raw.GITHUB_WEB_URL ?? 'https://github.com').replace(/\/$/, ''),
        clientId: raw.GITHUB_CLIENT_ID,
        clientSecret: raw.GITHUB_CLIENT_SECRET,
        appSlug: raw.GITHUB_APP_SLUG,
        ...githubApp(raw.GITHUB_APP_ID, raw.GITHUB_APP_PRIVATE_KEY),
      },
      timeoutMs: raw.GIT_PROVIDER_TIMEOUT_MS ?? 10_000,
      maxResponseBytes: raw.GIT_PROVIDER_MAX_RESPONSE_BYTES ?? 10 * 1024 * 1024,
      maxPages: raw.GIT_PROVIDER_MAX_PAGES ?? 100,
      repositoryCacheTtlMs: raw.GIT_REPOSITORY_CACHE_TTL_MS ?? 30_000,
      allowHttp: raw.GIT_SERVER_ALLOW_HTTP === 'true',
      allowPrivateHosts: raw.GIT_SERVER_ALLOW_PRIVATE_HOSTS === 'true',
      dnsServers: raw.GIT_DNS_SERVERS?.split(',').map((s) => s.trim()),
      publicUrl: raw.PUBLIC_URL ?? `http://localhost:${raw.PORT ?? 3000}`,
      redirectAllowedOrigins: (raw.OAUTH_REDIRECT_ALLOWED_ORIGINS ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    },
  };
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function parseCredentialKeys(value: string | undefined): AppConfig['credentialKeys'] {
  if (!value) return { current: DEVELOPMENT_CREDENTIAL_KEY.id, keys: { [DEVELOPMENT_CREDENTIAL_KEY.id]: DEVELOPMENT_CREDENTIAL_KEY.key } };
  const pairs = value.split(',').map((pair) => pair.trim().split(':') as [string, string]);
  return { current: pairs[0][0], keys: Object.fromEntries(pairs.map(([id, key]) => [id, Buffer.from(key, 'base64')])) };
}

function parseTrustProxy(value: string | undefined): boolean | number | string[] {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim());
}

/** For process entry points: a bad environment ends the process with its one-line message (exit 78). */
export function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
}
