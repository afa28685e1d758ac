import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from '@/app.module';
import { configureApp } from '@/bootstrap';
import { APP_CONFIG } from '@/common/config/config.module';
import { loadConfigOrExit, type AppConfig } from '@/common/config/app-config';
import { applyServerTimeouts } from '@/common/http/server-timeouts';

async function main(): Promise<void> {
  loadConfigOrExit();
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false, bufferLogs: true });
  configureApp(app);
  const config = app.get<AppConfig>(APP_CONFIG);
  applyServerTimeouts(app.getHttpServer(), config);
  await app.listen(config.port, '0.0.0.0');
  const address = app.getHttpServer().address() as { port: number };
  process.stdout.write(`${JSON.stringify({ level: 30, msg: 'api listening', port: address.port, docs: `http://localhost:${address.port}/docs` })}\n`);
}

void main();
