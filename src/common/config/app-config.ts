import { credentialsConfig } from './features/credentials.config';
import { databaseConfig } from './features/database.config';
import { domainsConfig } from './features/domains.config';
import { gitProvidersConfig } from './features/git-providers.config';
import { githubConfig } from './features/github.config';
import { httpConfig } from './features/http.config';
import { jobsConfig } from './features/jobs.config';
import { mergeQueuesConfig } from './features/merge-queues.config';
import { processConfig } from './features/process.config';
import { rateLimitsConfig } from './features/rate-limits.config';
import { redisConfig } from './features/redis.config';
import { usageImportsConfig } from './features/usage-imports.config';
import { webhooksConfig } from './features/webhooks.config';
import { ConfigError, environment, type Values, type VariablesOf } from './variables';

export { ConfigError } from './variables';

/**
 * Every feature's environment variables, in the order docs/configuration.md and .env.example list
 * them. The few other readers of process.env run without them: failpoints (test builds only), the
 * CLI, the container healthcheck, migrate, and the PATH handed to git.
 */
export const CONFIG_FEATURES = [
  databaseConfig,
  redisConfig,
  credentialsConfig,
  processConfig,
  httpConfig,
  rateLimitsConfig,
  jobsConfig,
  gitProvidersConfig,
  githubConfig,
  usageImportsConfig,
  mergeQueuesConfig,
  webhooksConfig,
  domainsConfig,
] as const;

const variables = environment(CONFIG_FEATURES);

/** The rules between variables of different features, then each feature's part of AppConfig. */
function compose(v: Values<VariablesOf<typeof CONFIG_FEATURES>>) {
  if (v.HTTP_HEADERS_TIMEOUT_MS > v.HTTP_REQUEST_TIMEOUT_MS)
    throw new ConfigError('Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS');
  const production = v.NODE_ENV === 'production';
  if (production && !v.CREDENTIALS_KEYS)
    throw new ConfigError('Invalid configuration: CREDENTIALS_KEYS is not set (required in production, which is what an unset NODE_ENV means)');
  const localEnabled = v.GIT_LOCAL_ENABLED ?? !production;
  // LOCAL_GIT reads and writes the server's disk: in production only under a directory the operator chose.
  if (production && localEnabled && !v.GIT_LOCAL_ROOT)
    throw new ConfigError('Invalid configuration: GIT_LOCAL_ROOT is not set (required when GIT_LOCAL_ENABLED=true in production)');
  return {
    ...databaseConfig.build(v),
    ...redisConfig.build(v),
    ...credentialsConfig.build(v),
    ...processConfig.build(v),
    ...httpConfig.build(v),
    ...rateLimitsConfig.build(v),
    ...jobsConfig.build(v),
    ...usageImportsConfig.build(v),
    ...mergeQueuesConfig.build(v),
    ...webhooksConfig.build(v),
    ...domainsConfig.build(v),
    git: {
      /** LOCAL_GIT code sources (bare repositories on this server's disk); on by default only when NODE_ENV is development or test. */
      localEnabled,
      ...gitProvidersConfig.build(v),
      ...githubConfig.build(v),
      /** The API's public origin: the OAuth callback URL given to providers is `${publicUrl}/scm/callback`. */
      publicUrl: v.PUBLIC_URL ?? `http://localhost:${v.PORT}`,
    },
  };
}

export type AppConfig = ReturnType<typeof compose>;
export type GitConfig = AppConfig['git'];

/**
 * Validates the environment once and returns the typed configuration. Throws a ConfigError whose
 * message is one line per bad variable, naming it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  return compose(variables.read(env));
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
