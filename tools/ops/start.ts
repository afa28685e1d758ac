/** `npm start`: services, migrations, demo seed, build, then the API and a worker until Ctrl-C. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { migrate } from '@/common/prisma/migration-runner';
import { GitProviderEmulator } from '@tools/git-emulator/emulator';
import { buildIfStale } from '@tools/workspace/build';
import { databaseName, ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';
import { seedDemo } from '../../prisma/seed';

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
  const { token } = await seedDemo(databaseUrl);
  const port = process.env.PORT ?? '3000';
  // The demo git provider: the GitHub emulator with a user, a repository (a real bare repository)
  // and an app installation, so the OAuth flow and code sources work without any credentials.
  const provider = await new GitProviderEmulator().start(Number(process.env.DEMO_PROVIDER_PORT ?? 0));
  const demo = provider.addUser('demo-user');
  provider.addRepository('demo-user', 'checkout-service', { description: 'A demo repository served by the local provider emulator' });
  provider.addInstallation('demo-user', ['demo-user']);
  provider.browserUser = 'demo-user';
  provider.callbackUrl = `http://localhost:${port}/scm/callback`;
  const env = {
    ...process.env,
    // A demo on a laptop: the development credential key and LOCAL_GIT (an unset NODE_ENV means production).
    NODE_ENV: process.env.NODE_ENV ?? 'development',
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
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
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
      '  Stop          Ctrl-C',
      '',
    ].join('\n') + '\n',
  );
});
