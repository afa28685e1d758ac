// Defaults for running Jest directly (npm test sets these to its fresh test database).
// An unset NODE_ENV means production (no development credential key, LOCAL_GIT off): tests say test.
process.env.NODE_ENV ??= 'test';
process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/delivery_platform_test';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/13';
process.env.QUEUE_PREFIX ??= 'dpa-test';
process.env.LOG_LEVEL ??= 'silent';
// Other suites send thousands of requests with one token or from one address: limits out of the way.
// The rate-limit suite starts its own processes with low limits and a prefix of its own.
process.env.RATE_LIMIT_PER_PRINCIPAL ??= '1000000';
process.env.RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS ??= '1000000';
process.env.RATE_LIMIT_KEY_CREATION ??= '1000000';
process.env.RATE_LIMIT_REPORTS ??= '1000000';
process.env.RATE_LIMIT_OAUTH_CALLBACK ??= '1000000';
process.env.RATE_LIMIT_HEALTH_READY ??= '1000000';
process.env.RATE_LIMIT_PER_ORGANIZATION ??= '1000000';
process.env.RATE_LIMIT_UNAUTHENTICATED_PER_IPV6_48 ??= '1000000';
// A GitHub OAuth app as far as the API can tell without a provider: suites that talk to one point
// GITHUB_API_URL / GITHUB_WEB_URL at the provider emulator (test/support/git.ts).
process.env.GITHUB_CLIENT_ID ??= 'Iv1.testclient';
process.env.GITHUB_CLIENT_SECRET ??= 'test-client-secret';
process.env.GITHUB_APP_SLUG ??= 'delivery-platform-test';
process.env.GITHUB_API_URL ??= 'http://127.0.0.1:9';
process.env.GITHUB_WEB_URL ??= 'http://127.0.0.1:9';
process.env.RATE_LIMIT_USAGE_IMPORT ??= '1000000';
// Each process's metrics and worker health listeners on a free port: suites run processes side by side.
process.env.METRICS_PORT ??= '0';
process.env.WORKER_HEALTH_PORT ??= '0';
// Suites that scrape twice expect the second scrape to read Postgres again; scrapes in flight are still shared.
process.env.METRICS_SOURCE_CACHE_MS ??= '0';
