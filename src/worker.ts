import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { loadConfigOrExit } from '@/common/config/app-config';
import { WorkerModule } from '@/worker.module';

async function main(): Promise<void> {
  loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(WorkerModule, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  await app.init();
  process.stdout.write(`${JSON.stringify({ level: 30, msg: 'worker started' })}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`worker failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
