import 'reflect-metadata';
import { WorkerHost } from '@nestjs/bullmq';
import { DiscoveryService, NestFactory } from '@nestjs/core';
import { AppLogger } from '@/common/logging/request-logger';
import { startupLine } from '@/common/logging/startup-line';
import { loadConfigOrExit } from '@/common/config/app-config';
import { ServerErrors } from '@/common/errors/common.errors';
import { exitGracefullyOnSignals, lifecycle } from '@/common/lifecycle/graceful-shutdown';
import { checkReadiness, READINESS_CACHE_MS } from '@/common/lifecycle/readiness';
import { sharedRead } from '@/common/lifecycle/shared-read';
import { MetricsService } from '@/common/metrics/metrics.service';
import { opsError, OpsServer } from '@/common/metrics/ops-server';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RedisService } from '@/common/redis/redis.module';
import { WorkerModule } from '@/worker.module';

const JSON_TYPE = 'application/json; charset=utf-8';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  // Listening for SIGTERM from the start: a signal during start-up exits 0 at once (nothing is in flight yet).
  let stop: () => Promise<void> = async () => undefined;
  exitGracefullyOnSignals('worker', config.shutdownGraceMs, () => stop(), config);
  const app = await NestFactory.createApplicationContext(WorkerModule, { bufferLogs: true });
  app.useLogger(app.get(AppLogger));
  const metrics = app.get(MetricsService);
  const prisma = app.get(PrismaService);
  const redis = app.get(RedisService);
  // One check per second however often it is probed (as the API's GET /health/ready).
  const readiness = sharedRead(READINESS_CACHE_MS, () => checkReadiness(prisma, redis));
  // The worker has no public HTTP: an orchestrator probes this port, Prometheus scrapes it.
  const ops = await OpsServer.start(
    config.workerHealthPort,
    {
      '/health/live': async () => ({ status: 200, contentType: JSON_TYPE, body: JSON.stringify({ data: { status: 'ok' } }) }),
      '/health/ready': async () => {
        if (lifecycle.shuttingDown)
          return { ...opsError(503, ServerErrors.SERVICE_UNAVAILABLE.code, 'Not ready: the worker is shutting down.'), headers: { 'Retry-After': '5' } };
        const { ready, checks } = await readiness();
        if (ready) return { status: 200, contentType: JSON_TYPE, body: JSON.stringify({ data: { status: 'ok', checks } }) };
        const down = Object.entries(checks)
          .filter(([, c]) => c.status !== 'up')
          .map(([name]) => name);
        return {
          ...opsError(503, ServerErrors.SERVICE_UNAVAILABLE.code, `Not ready: ${down.join(', ')} unavailable.`, {
            details: [{ title: 'Checks', render: 'object', object: Object.fromEntries(Object.entries(checks).map(([k, v]) => [k, v.status])) }],
          }),
          headers: { 'Retry-After': '5' },
        };
      },
      '/metrics': async () => ({ status: 200, contentType: metrics.contentType, body: await metrics.scrape() }),
    },
    config.workerHealthHost,
  );
  // SIGTERM: BullMQ workers stop taking jobs and wait for the active ones to finish, then the
  // application closes, within SHUTDOWN_GRACE_MS; past it the process exits, and a job it held is
  // taken over by another worker once its lock expires (BullMQ's stalled-job check).
  stop = async () => {
    // First the BullMQ workers, each waiting for its active jobs: Nest would close them only after
    // Prisma and Redis (onModuleDestroy), leaving the jobs in flight without their database.
    const hosts = app
      .get(DiscoveryService)
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is WorkerHost => instance instanceof WorkerHost);
    await Promise.all(hosts.map((host) => closeWorker(host)));
    await app.close();
    await ops.close();
  };
  await app.init();
  const line = startupLine(config, 'worker started', { healthHost: ops.host, healthPort: ops.port });
  if (line) process.stdout.write(line);
}

/** Stops taking jobs and waits for the active ones (a host whose worker never started has nothing to close). */
async function closeWorker(host: WorkerHost): Promise<void> {
  let worker: WorkerHost['worker'];
  try {
    worker = host.worker;
  } catch {
    return;
  }
  await worker.close();
}

void main().catch((error: unknown) => {
  process.stderr.write(`worker failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
