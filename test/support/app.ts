import type { ModuleMetadata } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import { AppModule } from '@/app.module';
import { configureApp } from '@/bootstrap';

/** The real application, configured exactly as main.ts configures it. */
export async function createTestApp(
  extra: Pick<ModuleMetadata, 'controllers' | 'providers'> = {},
  customize: (builder: TestingModuleBuilder) => TestingModuleBuilder = (b) => b,
): Promise<NestExpressApplication> {
  const moduleRef = await customize(Test.createTestingModule({ imports: [AppModule, DiscoveryModule], controllers: extra.controllers ?? [], providers: extra.providers ?? [] })).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
  configureApp(app);
  await app.init();
  return app;
}
