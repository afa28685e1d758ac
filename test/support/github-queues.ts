import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { TestingModuleBuilder } from '@nestjs/testing';
import request from 'supertest';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { PrismaService } from '@/common/prisma/prisma.service';
import { IntegrationCredentials } from '@/modules/integrations/integration-credentials';
import { createTestApp, createTestWorker } from './app';
import { createTenant } from './factories';
import { GitProviderEmulator, gitTestConfig } from './git';
import { commit, git } from './git-repos';
import { MergeQueueClient, type MqQueue } from './merge-queue-client';
import { ownDatabase } from './own-database';

/** A user on the emulator (login `<prefix>-xxxxxxxx`) and the tenant's API_TOKEN GitHub integration acting as it. */
export async function githubIntegration(app: NestExpressApplication, emulator: GitProviderEmulator, auth: Record<string, string>, prefix: string) {
  const login = `${prefix}-${randomUUID().slice(0, 8)}`;
  const { token } = emulator.addUser(login);
  const integration = await request(app.getHttpServer())
    .post('/integrations')
    .set(auth)
    .send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name: `gh ${login}`, token } })
    .expect(201);
  return { login, token, integrationId: integration.body.data.id as string, webhookSecret: integration.body.data.webhookSecret as string };
}

/**
 * The tenant's APP_INSTALLATION integration of a new installation on `login`'s account, as the
 * install callback leaves it (ACTIVE, the installer's user token sealed, the installation id).
 */
export async function appInstallationIntegration(
  app: NestExpressApplication,
  emulator: GitProviderEmulator,
  tenant: { organizationId: string; memberId: string },
  login: string,
) {
  const prisma = app.get(PrismaService);
  const installation = emulator.addInstallation(login, [login]);
  const row = await prisma.integration.create({
    data: {
      organizationId: tenant.organizationId,
      givenId: `app-${installation.id}`,
      name: `GitHub App ${installation.id}`,
      provider: 'GITHUB',
      authMethod: 'APP_INSTALLATION',
      status: 'ACTIVE',
      externalAccountId: '1',
      externalAccountName: login,
      installationId: String(installation.id),
      createdById: tenant.memberId,
    },
  });
  await prisma.integration.update({
    where: { id: row.id },
    data: app.get(IntegrationCredentials, { strict: false }).seal(row.id, { accessToken: emulator.issueToken(login) }),
  });
  return { id: row.id, installation };
}

export type GithubQueueOptions = {
  files?: Record<string, string>;
  settings?: Record<string, unknown>;
  /** Runs on the new bare repository before its first commit. */
  prepare?: (path: string) => void;
};

/** A GitHub repository whose main holds `files`, connected as a code source, with a queue on main requiring `ci` (unless `settings` say otherwise). */
async function newGithubQueue(
  app: NestExpressApplication,
  emulator: GitProviderEmulator,
  auth: Record<string, string>,
  { login, integrationId }: { login: string; integrationId: string },
  { files = { 'README.md': 'hello\n' }, settings = {}, prepare }: GithubQueueOptions = {},
) {
  const http = () => request(app.getHttpServer());
  const name = `repo-${randomUUID().slice(0, 8)}`;
  const { path } = emulator.addRepository(login, name);
  prepare?.(path);
  const main = commit(path, git(path, 'rev-parse', 'main'), files, 'initial');
  git(path, 'update-ref', 'refs/heads/main', main);
  const source = await http()
    .post('/code-sources')
    .set(auth)
    .send({ data: { integrationId, repository: `${login}/${name}` } })
    .expect(201);
  expect(source.body.data.provider).toBe('GITHUB');
  const res = await http()
    .post('/merge-queues')
    .set(auth)
    .send({ data: { codeSourceId: source.body.data.id, baseRef: 'main', requiredChecks: ['ci'], checkTimeoutSeconds: 600, ...settings } })
    .expect(201);
  return { name, repository: `${login}/${name}`, path, main, source: source.body.data as { id: string; provider: string }, queue: res.body.data as MqQueue };
}

export type GithubQueueSuiteOptions = {
  /** The API's and the worker's configuration, from gitTestConfig's on the started emulator with the suite's database and queue prefix. */
  config?: (config: AppConfig, emulator: GitProviderEmulator) => AppConfig;
  /** Other overrides of the worker's providers (createTestWorker's `customize`). */
  worker?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
  /** The API also listens on a port of 127.0.0.1 (before the worker starts), e.g. for the emulator's webhook deliveries. */
  listen?: boolean;
  /** The API listens, and the emulator delivers webhooks to it with the integration's secret (`webhook`), until `close`. */
  webhooks?: boolean;
};

/**
 * What a GitHub merge-queue suite with a worker starts with: the provider emulator, a database and
 * queue prefix of the suite's own (own-database.ts: only its worker, with this emulator, takes its
 * jobs), the API and an in-process worker on them (`options.config` changes their configuration),
 * a tenant with a GitHub integration on the emulator, and `newQueue` (newGithubQueue as that
 * tenant and integration). `close` stops and drops it all.
 */
export async function githubQueueSuite(name: string, options: GithubQueueSuiteOptions = {}) {
  const emulator = await new GitProviderEmulator().start();
  const own = await ownDatabase(name);
  const base: AppConfig = { ...gitTestConfig(emulator), databaseUrl: own.databaseUrl, queuePrefix: own.queuePrefix };
  const config = options.config ? options.config(base, emulator) : base;
  const app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
  if (options.listen || options.webhooks) await app.listen(0, '127.0.0.1');
  const worker = await createTestWorker(config, options.worker);
  const prisma = app.get(PrismaService, { strict: false });
  const label = name.replace(/_/g, '-');
  const owner = await createTenant(app, `mq-${label}`);
  const mq = new MergeQueueClient(() => app.getHttpServer(), owner.auth, prisma);
  const github = await githubIntegration(app, emulator, owner.auth, label);
  const newQueue = (queue: GithubQueueOptions = {}) => newGithubQueue(app, emulator, owner.auth, github, queue);
  let webhook: GitProviderEmulator['webhook'];
  if (options.webhooks) {
    const { port } = app.getHttpServer().address() as AddressInfo;
    webhook = { url: `http://127.0.0.1:${port}/webhooks/github`, secret: github.webhookSecret };
    emulator.webhook = webhook;
  }
  const close = async () => {
    emulator.webhook = undefined;
    await worker.close();
    await app.close();
    await emulator.stop();
    await own.drop();
  };
  return { emulator, config, app, worker, prisma, owner, mq, github, webhook, newQueue, close };
}

/** What githubQueueSuite started. */
export type GithubQueueSuite = Awaited<ReturnType<typeof githubQueueSuite>>;
