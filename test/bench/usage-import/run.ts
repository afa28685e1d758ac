/**
 * `npm run bench:usage-import`: one usage import of 10,000 workflow runs with 5 jobs each (plus
 * every tenth run's second attempt: 55,000 jobs) from the provider emulator, run by the real worker
 * process (dist/worker.js), timed from the enqueue to the import's SUCCEEDED row. Prints the time,
 * runs/s, records/s (runs + jobs upserted) and the provider requests made. Target: under 60 s on
 * the 2-core machine.
 * Environment: BENCH_RUNS (10000), BENCH_JOBS_PER_RUN (5), BENCH_DATABASE (used when DATABASE_URL is unset: dropped and re-created).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { Queue } from 'bullmq';
import { loadConfig } from '@/common/config/app-config';
import { CredentialCipher } from '@/common/crypto/credential-cipher';
import { migrate } from '@/common/prisma/migration-runner';
import { QueueName, UsageImportsJob } from '@/common/queues/queue-names';
import { PrismaClient } from '@/generated/prisma/client';
import { codeSourceDeduplicationId, IMPORT_ATTEMPTS, importJobId } from '@/modules/usage/usage-rules';
import { GitProviderEmulator } from '@tools/git-emulator/emulator';
import { buildIfStale } from '@tools/workspace/build';
import { ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';

const RUNS = Number(process.env.BENCH_RUNS ?? 10_000);
const JOBS_PER_RUN = Number(process.env.BENCH_JOBS_PER_RUN ?? 5);
const DATABASE = process.env.BENCH_DATABASE ?? 'delivery_platform_bench_usage';

async function main(): Promise<void> {
  const services = await provideServices();
  const databaseUrl = process.env.DATABASE_URL ?? (await ensureDatabase(services.postgresServerUrl, DATABASE, { fresh: true }));
  const redisUrl = process.env.REDIS_URL ?? services.redisUrl;
  await migrate(databaseUrl);
  buildIfStale();
  const prefix = `dpa-bench-${randomUUID().slice(0, 8)}`;
  const emulator = await new GitProviderEmulator().start();
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  const queue = new Queue(QueueName.UsageImports, { connection: { url: redisUrl }, prefix });
  // The bench seals tokens itself with the development key: both sides say development (unset means production).
  const nodeEnv = process.env.NODE_ENV ?? 'development';
  const config = loadConfig({ ...process.env, NODE_ENV: nodeEnv, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl });
  const worker = spawn(process.execPath, ['dist/worker.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: nodeEnv,
      WORKER_HEALTH_PORT: '0',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      GITHUB_API_URL: emulator.url,
      GITHUB_WEB_URL: emulator.url,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let organizationId: string | undefined;
  try {
    let output = '';
    worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    while (!output.includes('worker started')) {
      if (worker.exitCode !== null) throw new Error('the worker exited');
      await new Promise((r) => setTimeout(r, 50));
    }
    const { token } = emulator.addUser('bench');
    emulator.addRepository('bench', 'monorepo');
    const generatedAt = Date.now();
    const runs = emulator.addWorkflowRuns('bench', 'monorepo', { count: RUNS, jobsPerRun: JOBS_PER_RUN, days: 90 });
    const jobs = runs.reduce((n, r) => n + r.jobs.length, 0);
    process.stdout.write(`emulator: ${RUNS} runs, ${jobs} jobs generated in ${Date.now() - generatedAt} ms\n`);

    const organization = await prisma.organization.create({ data: { name: `bench-usage-${randomUUID()}` } });
    organizationId = organization.id;
    const integrationId = randomUUID();
    const sealed = new CredentialCipher(config.credentialKeys).seal(JSON.stringify({ accessToken: token }), integrationId);
    await prisma.integration.create({
      data: {
        id: integrationId,
        organizationId,
        givenId: 'bench',
        name: 'bench',
        provider: 'GITHUB',
        authMethod: 'API_TOKEN',
        status: 'ACTIVE',
        externalAccountId: '1',
        externalAccountName: 'bench',
        encryptedCredentials: new Uint8Array(sealed),
      },
    });
    const source = await prisma.codeSource.create({
      data: { organizationId, provider: 'GITHUB', integrationId, foreignId: '1', nameWithOwner: 'bench/monorepo', url: `${emulator.url}/bench/monorepo` },
    });

    const importId = randomUUID();
    const started = Date.now();
    await queue.add(
      UsageImportsJob.ImportCodeSource,
      { importId, organizationId, codeSourceId: source.id },
      { jobId: importJobId(importId), deduplication: { id: codeSourceDeduplicationId(source.id) }, attempts: IMPORT_ATTEMPTS, removeOnComplete: true },
    );
    let row = await prisma.usageImport.findFirst({ where: { id: importId } });
    let lastReport = 0;
    while (!row || (row.status !== 'SUCCEEDED' && row.status !== 'FAILED')) {
      await new Promise((r) => setTimeout(r, 100));
      row = await prisma.usageImport.findFirst({ where: { id: importId } });
      if (row && Date.now() - lastReport > 5_000) {
        lastReport = Date.now();
        process.stdout.write(`  ${((Date.now() - started) / 1000).toFixed(1)} s: ${row.pagesDone} pages, ${row.runsImported} runs, ${row.jobsImported} jobs\n`);
      }
    }
    const seconds = (Date.now() - started) / 1000;
    if (row.status === 'FAILED') throw new Error(`the import failed: ${row.lastError}`);
    const stored = await prisma.ciJobUsage.count({ where: { codeSourceId: source.id } });
    const storedRuns = await prisma.ciUsageRecord.count({ where: { codeSourceId: source.id } });
    const records = row.runsImported + row.jobsImported;
    process.stdout.write(
      [
        `usage import: ${row.runsImported} runs + ${row.jobsImported} jobs (${storedRuns} + ${stored} rows) in ${seconds.toFixed(1)} s, ${row.pagesDone} pages, ${emulator.requests.length} provider requests`,
        `  ${Math.round(row.runsImported / seconds)} runs/s, ${Math.round(records / seconds)} records/s (target: ${RUNS} runs in under 60 s: ${seconds < 60 ? 'met' : 'NOT met'})`,
        '',
      ].join('\n'),
    );
  } finally {
    worker.kill('SIGTERM');
    if (organizationId) await prisma.organization.delete({ where: { id: organizationId } }).catch(() => undefined);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await prisma.$disconnect();
    await emulator.stop();
    await services.stop();
  }
}

runOrExplain(main);
