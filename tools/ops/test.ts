/** `npm test`: services, a fresh migrated test database, type-check, lint (code and imports) and format check, then every Jest suite. */
import { spawnSync } from 'node:child_process';
import { migrate } from '@/common/prisma/migration-runner';
import { ensureChromium } from '@tools/workspace/browser';
import { buildIfStale } from '@tools/workspace/build';
import { ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';

// Overridable so that several checkouts on one machine can run their suites side by side.
const TEST_DATABASE = process.env.DPA_TEST_DATABASE ?? 'delivery_platform_test';
const TEST_REDIS_DB = Number(process.env.DPA_TEST_REDIS_DB ?? 13);

runOrExplain(async () => {
  const services = await provideServices();
  for (const line of services.describe) process.stdout.write(`› ${line}\n`);
  let status = 1;
  try {
    const databaseUrl = await ensureDatabase(services.postgresServerUrl, TEST_DATABASE, { fresh: true });
    const migrated = await migrate(databaseUrl);
    process.stdout.write(`› test database ${TEST_DATABASE}: ${migrated.applied.length} migrations applied\n`);
    const redis = new URL(services.redisUrl);
    redis.pathname = `/${TEST_REDIS_DB}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.toString(),
      QUEUE_PREFIX: process.env.DPA_TEST_QUEUE_PREFIX ?? 'dpa-test',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    };
    // The browser tests skip, printing why, where chromium cannot be had.
    const chromium = ensureChromium((line) => process.stdout.write(`› ${line}\n`));
    if ('executablePath' in chromium) env.DPA_TEST_CHROMIUM = chromium.executablePath;
    else env.DPA_TEST_CHROMIUM_SKIP = chromium.skipReason;
    process.stdout.write('› type-checking…\n');
    const typecheck = spawnSync('npx', ['tsc', '-p', 'tsconfig.check.json'], { cwd: ROOT, env, stdio: 'inherit' });
    if (typecheck.status !== 0) throw new Error('type-check failed');
    // The linter and the formatter gate the suite as the type-check does (CI runs npm test).
    // DPA_TEST_LINT=false skips them while iterating on one suite (never in CI).
    if (process.env.CI || process.env.DPA_TEST_LINT !== 'false') {
      process.stdout.write('› linting (npm run lint, npm run lint:imports) and checking formatting (npm run format:check)…\n');
      const lint = spawnSync('npx', ['eslint', '.', '--cache', '--cache-location', 'node_modules/.cache/eslint/'], { cwd: ROOT, env, stdio: 'inherit' });
      if (lint.status !== 0) throw new Error('lint failed: see above (npm run lint)');
      const imports = spawnSync('npm', ['run', '--silent', 'lint:imports'], { cwd: ROOT, env, stdio: 'inherit' });
      if (imports.status !== 0) throw new Error('an import breaks the house rules: see above (npm run lint:imports, .dependency-cruiser.cjs)');
      const format = spawnSync('npx', ['prettier', '--check', '.', '--log-level', 'warn'], { cwd: ROOT, env, stdio: 'inherit' });
      if (format.status !== 0) throw new Error('files not formatted: run npm run format');
    }
    // The suites that start built processes (API, worker, CLI) find dist/ fresh instead of building it in parallel.
    buildIfStale();
    const jestArgs = ['jest', '--maxWorkers=2', ...(process.env.CI ? ['--ci'] : []), ...process.argv.slice(2)];
    status = spawnSync('npx', jestArgs, { cwd: ROOT, env, stdio: 'inherit' }).status ?? 1;
  } finally {
    await services.stop();
  }
  process.exit(status);
});
