/**
 * `npm start`: services, migrations, demo seed, build, then the API and a worker until Ctrl-C, and
 * the demo: a merge queue on the GitHub emulator's repository with a few pull requests and a demo
 * CI (one PR breaks the build), whose progress is printed after the banner.
 *
 * Knobs (for the e2e that runs it): DEMO_CI_SECONDS (how long the demo CI "tests", default 5),
 * DEMO_TOKEN_FILE (where the demo token is kept, default .data/demo-token), DEMO_PROVIDER_PORT.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { migrate } from '@/common/prisma/migration-runner';
import { GitProviderEmulator } from '@tools/git-emulator/emulator';
import { buildIfStale } from '@tools/workspace/build';
import { databaseName, ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';
import { seedDemo } from '../../prisma/seed';
import { DemoCi } from './demo/demo-ci';
import { watchDemo } from './demo/demo-progress';
import { startProcessEnv } from './demo/process-env';
import { queuePageLink, seedDemoQueue, type DemoQueue } from './demo/demo-queue';

async function waitForReady(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the API exited with code ${child.exitCode} while starting (see its log above)`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the API did not become ready within ${timeoutMs / 1000}s`);
}

runOrExplain(async () => {
  const services = await provideServices();
  for (const line of services.describe) process.stdout.write(`› ${line}\n`);
  const databaseUrl = await ensureDatabase(services.postgresServerUrl, databaseName('delivery_platform'));
  const migrated = await migrate(databaseUrl);
  process.stdout.write(`› migrations: ${migrated.applied.length} applied, ${migrated.alreadyApplied} already applied\n`);
  buildIfStale();
  const { token } = await seedDemo(databaseUrl, process.env.DEMO_TOKEN_FILE || undefined);
  const port = process.env.PORT ?? '3000';
  // The demo git provider: the GitHub emulator with a user, a repository (a real bare repository)
  // and an app installation, so the OAuth flow and code sources work without any credentials.
  const provider = await new GitProviderEmulator().start(Number(process.env.DEMO_PROVIDER_PORT ?? 0));
  const demo = provider.addUser('demo-user');
  provider.addUser('demo-reviewer');
  const repository = provider.addRepository('demo-user', 'checkout-service', {
    description: 'A demo repository served by the local provider emulator',
    collaborators: ['demo-user', 'demo-reviewer'],
  });
  provider.addInstallation('demo-user', ['demo-user']);
  provider.browserUser = 'demo-user';
  provider.callbackUrl = `http://localhost:${port}/scm/callback`;
  const env = {
    ...process.env,
    // A demo on a laptop: the development credential key and LOCAL_GIT (an unset NODE_ENV means
    // production), and quiet readable logs, so that the banner is the last thing printed.
    ...startProcessEnv(process.env),
    DATABASE_URL: databaseUrl,
    REDIS_URL: services.redisUrl,
    PORT: port,
    GITHUB_API_URL: process.env.GITHUB_API_URL ?? provider.url,
    GITHUB_WEB_URL: process.env.GITHUB_WEB_URL ?? provider.url,
    GITHUB_CLIENT_ID: process.env.GITHUB_CLIENT_ID ?? provider.clientId,
    GITHUB_CLIENT_SECRET: process.env.GITHUB_CLIENT_SECRET ?? provider.clientSecret,
    GITHUB_APP_SLUG: process.env.GITHUB_APP_SLUG ?? provider.appSlug,
  };
  const children = ['main.js', 'worker.js'].map((file) =>
    spawn(process.execPath, ['--enable-source-maps', join(ROOT, 'dist', file)], { cwd: ROOT, env, stdio: 'inherit' }),
  );
  const ci = new DemoCi(provider, repository, {
    durationMs: Number(process.env.DEMO_CI_SECONDS ?? 5) * 1000,
    onError: (error) => process.stdout.write(`› demo CI: ${error instanceof Error ? error.message : String(error)}\n`),
  }).start();
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    ci.stop();
    process.stdout.write('\n› stopping the API and the worker…\n');
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
    await provider.stop().catch(() => undefined);
    await services.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  for (const child of children) child.on('exit', (code) => void stop(code ?? 1));
  await waitForReady(`http://127.0.0.1:${port}/health/ready`, children[0]);
  let queue: DemoQueue | undefined;
  let link: Awaited<ReturnType<typeof queuePageLink>> | undefined;
  try {
    queue = await seedDemoQueue(provider, {
      apiBase: `http://127.0.0.1:${port}`,
      token,
      login: 'demo-user',
      userToken: demo.token,
      repository,
      reviewer: 'demo-reviewer',
    });
    link = await queuePageLink(queue);
  } catch (error) {
    process.stdout.write(`› the demo merge queue could not be set up: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  const failing = queue && queue.titles.get(queue.failing);
  process.stdout.write(
    [
      '',
      '  Delivery Platform API is running (API + worker).',
      `  Swagger UI    http://localhost:${port}/docs`,
      `  OpenAPI JSON  http://localhost:${port}/docs-json`,
      `  Demo token    ${token}`,
      `  Try           curl -H "Authorization: Bearer ${token}" http://localhost:${port}/projects`,
      `  Git provider  ${provider.url} (a local GitHub emulator: user demo-user, token ${demo.token},`,
      '                repository demo-user/checkout-service; POST /integrations with provider GITHUB)',
      ...(queue && link
        ? [
            `  Merge queue   ${link} (open it in a browser: the queue's page, no token needed)`,
            `                ${queue.titles.size} pull requests of demo-user/checkout-service queued on main; the demo CI (check run "ci",`,
            `                by webhook) fails #${queue.failing} "${failing}" on purpose. Progress below.`,
          ]
        : []),
      '  Stop          Ctrl-C',
      '',
    ].join('\n') + '\n',
  );
  if (queue) {
    const demoQueue = queue;
    void watchDemo(
      demoQueue,
      (line) => process.stdout.write(`${line}\n`),
      () => stopping,
    );
  }
});
