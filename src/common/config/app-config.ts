import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, validateSync } from 'class-validator';

/** Environment variables the processes read. Nothing else in the code base reads process.env. */
export class EnvironmentVariables {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'must be a postgresql:// URL' })
  DATABASE_URL: string;

  @Matches(/^rediss?:\/\/\S+$/, { message: 'must be a redis:// or rediss:// URL' })
  REDIS_URL: string;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT?: number;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  AUTH_CACHE_TTL_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1000)
  DATABASE_POOL_SIZE?: number;

  @IsOptional()
  @IsString()
  @Matches(/^[a-z][a-z0-9-]{0,30}$/, { message: 'must be a short lower-case prefix' })
  QUEUE_PREFIX?: string;

  // class-transformer recurses per level: far past a few hundred levels it overflows the stack.
  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(2)
  @Max(200)
  BODY_MAX_DEPTH?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(10)
  @Max(100_000)
  BODY_MAX_KEYS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(100)
  @Max(600000)
  DATABASE_CONNECT_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(100)
  @Max(600000)
  DATABASE_QUERY_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(100)
  @Max(600000)
  DATABASE_TRANSACTION_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(100)
  @Max(600000)
  REDIS_CONNECT_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(100)
  @Max(600000)
  REDIS_COMMAND_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1000)
  @Max(600000)
  HTTP_HEADERS_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1000)
  @Max(3600000)
  HTTP_REQUEST_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1000)
  @Max(600000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS?: number;

  /** Express `trust proxy`: `false`, `true`, a number of hops, or comma-separated addresses/subnets. */
  @IsOptional()
  @Matches(/^(true|false|\d{1,2}|(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(\/\d{1,3})?)(\s*,\s*(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(\/\d{1,3})?))*)$/, {
    message: 'must be true, false, a number of hops, or comma-separated addresses/subnets (or loopback, linklocal, uniquelocal)',
  })
  TRUST_PROXY?: string;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  RATE_LIMIT_WINDOW_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  RATE_LIMIT_PER_PRINCIPAL?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  RATE_LIMIT_KEY_CREATION?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  RATE_LIMIT_REPORTS?: number;

  /** Comma-separated resolver addresses, `ip` or `ip:port` (`[ipv6]:port`); empty means the system's. */
  @IsOptional()
  @Matches(/^\s*(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+)(\s*,\s*(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+))*\s*$/, {
    message: 'must be comma-separated IP addresses, each with an optional :port (IPv6 with a port as [addr]:port)',
  })
  DNS_SERVERS?: string;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(100)
  @Max(60_000)
  DNS_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(60_000)
  @Max(7 * 86_400_000)
  DOMAIN_REVERIFY_INTERVAL_MS?: number;

  @IsOptional()
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsInt()
  @Min(0)
  @Max(30 * 86_400_000)
  DOMAIN_VERIFICATION_GRACE_MS?: number;
}

export interface AppConfig {
  databaseUrl: string;
  redisUrl: string;
  port: number;
  logLevel: string;
  authCacheTtlMs: number;
  databasePoolSize: number;
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
    unauthenticatedPerAddress: number;
    keyCreation: number;
    reports: number;
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
  };
}

export class ConfigError extends Error {}

/**
 * Validates the environment once and returns the typed configuration. Throws a ConfigError whose
 * message is one line per bad variable, naming it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const raw = plainToInstance(EnvironmentVariables, { ...env }, { enableImplicitConversion: false });
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
  return {
    databaseUrl: raw.DATABASE_URL,
    redisUrl: raw.REDIS_URL,
    port: raw.PORT ?? 3000,
    logLevel: raw.LOG_LEVEL ?? 'info',
    authCacheTtlMs: raw.AUTH_CACHE_TTL_MS ?? 30_000,
    databasePoolSize: raw.DATABASE_POOL_SIZE ?? 10,
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
      unauthenticatedPerAddress: raw.RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS ?? 60,
      keyCreation: raw.RATE_LIMIT_KEY_CREATION ?? 10,
      reports: raw.RATE_LIMIT_REPORTS ?? 10,
    },
    domains: {
      dnsServers: (raw.DNS_SERVERS ?? '').split(',').map((server) => server.trim()).filter(Boolean),
      dnsTimeoutMs: raw.DNS_TIMEOUT_MS ?? 5_000,
      reverifyIntervalMs: raw.DOMAIN_REVERIFY_INTERVAL_MS ?? 3_600_000,
      verificationGraceMs: raw.DOMAIN_VERIFICATION_GRACE_MS ?? 86_400_000,
    },
  };
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
