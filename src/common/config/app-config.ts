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
}

export interface AppConfig {
  databaseUrl: string;
  redisUrl: string;
  port: number;
  logLevel: string;
  authCacheTtlMs: number;
  databasePoolSize: number;
  queuePrefix: string;
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
  return {
    databaseUrl: raw.DATABASE_URL,
    redisUrl: raw.REDIS_URL,
    port: raw.PORT ?? 3000,
    logLevel: raw.LOG_LEVEL ?? 'info',
    authCacheTtlMs: raw.AUTH_CACHE_TTL_MS ?? 30_000,
    databasePoolSize: raw.DATABASE_POOL_SIZE ?? 10,
    queuePrefix: raw.QUEUE_PREFIX ?? 'dpa',
  };
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
