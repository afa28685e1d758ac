import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from '@/app.module';
import { configureApp } from '@/bootstrap';
import { APP_CONFIG } from '@/common/config/config.module';
import { loadConfigOrExit, type AppConfig } from '@/common/config/app-config';
import { startupLine } from '@/common/logging/startup-line';
import { applyServerTimeouts } from '@/common/http/server-timeouts';
import { drainHttpServer, exitGracefullyOnSignals } from '@/common/lifecycle/graceful-shutdown';
import { MetricsService } from '@/common/metrics/metrics.service';
import { OpsServer } from '@/common/metrics/ops-server';

async function main(): Promise<void> {
  const early = loadConfigOrExit();
  // Listening for SIGTERM from the start: a signal during start-up exits 0 at once (nothing is in flight yet).
  let stop: () => Promise<void> = async () => undefined;
  exitGracefullyOnSignals('api', early.shutdownGraceMs, () => stop(), early);
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false, bufferLogs: true });
  configureApp(app);
  const config = app.get<AppConfig>(APP_CONFIG);
  applyServerTimeouts(app.getHttpServer(), config);
  // Prometheus scrapes a listener of its own: /metrics is never served on the public port.
  const metrics = app.get(MetricsService);
  const ops = await OpsServer.start(
    config.metricsPort,
    { '/metrics': async () => ({ status: 200, contentType: metrics.contentType, body: await metrics.scrape() }) },
    config.metricsHost,
  );
  // SIGTERM: readiness turns 503, the server stops accepting and answers what is in flight, then
  // the application closes (BullMQ producers, Prisma, Redis), all within SHUTDOWN_GRACE_MS.
  stop = async () => {
    await drainHttpServer(app.getHttpServer());
    await app.close();
    await ops.close();
  };
  await app.listen(config.port, '0.0.0.0');
  const address = app.getHttpServer().address() as { port: number };
  const line = startupLine(config, 'api listening', {
    port: address.port,
    metricsHost: ops.host,
    metricsPort: ops.port,
    docs: `http://localhost:${address.port}/docs`,
  });
  if (line) process.stdout.write(line);
}

void main().catch((error: unknown) => {
  process.stderr.write(`api failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
