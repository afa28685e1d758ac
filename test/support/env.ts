// Defaults for running Jest directly (npm test sets these to its fresh test database).
process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/delivery_platform_test';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/13';
process.env.QUEUE_PREFIX ??= 'dpa-test';
process.env.LOG_LEVEL ??= 'silent';
