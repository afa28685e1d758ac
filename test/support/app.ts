import type { INestApplicationContext, ModuleMetadata } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '@/app.module';
import { configureApp } from '@/bootstrap';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { WorkerModule } from '@/worker.module';
import { ResponseValidation } from './openapi-validator';

/**
 * The real application, configured exactly as main.ts configures it, with every response checked
 * against the OpenAPI document it serves (see openapi-validator.ts).
 */
export async function createTestApp(
  extra: Pick<ModuleMetadata, 'controllers' | 'providers'> = {},
  customize: (builder: TestingModuleBuilder) => TestingModuleBuilder = (b) => b,
): Promise<NestExpressApplication> {
  const moduleRef = await customize(
    Test.createTestingModule({ imports: [AppModule, DiscoveryModule], controllers: extra.controllers ?? [], providers: extra.providers ?? [] }),
  ).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
  const validation = new ResponseValidation();
  app.use(validation.middleware);
  configureApp(app);
  await app.init();
  validation.use((await request(app.getHttpServer()).get('/docs-json').expect(200)).body);
  return app;
}

/**
 * A worker process in this test process (the BullMQ processors, schedulers and sweeps of
 * worker.ts), started: with `config` as its settings when given (the API's, to share a database
 * and queue prefix of its own), and `customize` for other overrides. Close it with `close()`.
 */
export async function createTestWorker(
  config?: AppConfig,
  customize: (builder: TestingModuleBuilder) => TestingModuleBuilder = (b) => b,
): Promise<INestApplicationContext> {
  const builder = Test.createTestingModule({ imports: [WorkerModule] });
  if (config) builder.overrideProvider(APP_CONFIG).useValue(config);
  return (await customize(builder).compile()).init();
}

/**
 * Two application instances on one Postgres and one Redis, sharing no memory, like two API
 * processes; created before the enclosing describe's tests and closed after them.
 */
export function useTwoApps(): { first: NestExpressApplication; second: NestExpressApplication } {
  const apps = {} as { first: NestExpressApplication; second: NestExpressApplication };
  beforeAll(async () => {
    [apps.first, apps.second] = await Promise.all([createTestApp(), createTestApp()]);
  });
  afterAll(async () => {
    await Promise.all([apps.first?.close(), apps.second?.close()]);
  });
  return apps;
}
