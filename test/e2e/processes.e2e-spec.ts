import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { createServer } from 'node:net';
import { buildIfStale } from '@tools/workspace/build';
import { eventually } from '../support/eventually';
import { startApi } from '../support/processes';

const ROOT = join(__dirname, '..', '..');
const env = { ...process.env } as NodeJS.ProcessEnv;

function node(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, args, { cwd: ROOT, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 60_000 });
}

describe('The built processes', () => {
  beforeAll(() => {
    buildIfStale();
  }, 180_000);

  it('cli bootstrap prints one JSON line, and a second run reuses the organization with a new key', () => {
    const org = `cli-${randomUUID()}`;
    const first = node(['dist/cli.js', 'bootstrap', '--org', org, '--json']);
    expect(first.status).toBe(0);
    const lines = first.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const a = JSON.parse(lines[0]);
    expect(Object.keys(a).sort()).toEqual(['apiKeyId', 'memberId', 'organizationId', 'token']);
    expect(a.token).toMatch(/^dpa_[0-9A-Za-z]{49}$/);
    const b = JSON.parse(node(['dist/cli.js', 'bootstrap', '--org', org, '--json']).stdout);
    expect(b.organizationId).toBe(a.organizationId);
    expect(b.memberId).toBe(a.memberId);
    expect(b.apiKeyId).not.toBe(a.apiKeyId);
    expect(b.token).not.toBe(a.token);
  }, 60_000);

  it.each([
    ['DATABASE_URL', { DATABASE_URL: '' }, /^Invalid configuration: DATABASE_URL is not set$/m],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://nope' }, /^Invalid configuration: DATABASE_URL must be a postgresql:\/\/ URL$/m],
    ['PORT', { PORT: 'eighty' }, /^Invalid configuration: PORT /m],
    ['REDIS_URL', { REDIS_URL: '' }, /^Invalid configuration: REDIS_URL is not set$/m],
  ])('the API refuses to boot with a bad %s, in one clear line', (_name, bad, message) => {
    const result = node(['dist/main.js'], bad);
    expect(result.status).toBe(78);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([['dist/main.js'], ['dist/worker.js']])(
    '%s with NODE_ENV unset runs as production: without CREDENTIALS_KEYS it stops with one line, exit 78',
    (script) => {
      const unset = { ...env };
      delete unset.NODE_ENV;
      delete unset.CREDENTIALS_KEYS;
      const result = spawnSync(process.execPath, [script], { cwd: ROOT, env: unset, encoding: 'utf8', timeout: 60_000 });
      expect(result.status).toBe(78);
      expect(result.stderr.trim()).toBe('Invalid configuration: CREDENTIALS_KEYS is not set (required in production, which is what an unset NODE_ENV means)');
    },
  );

  it("node dist/migrate.js (the image's migration command) needs only DATABASE_URL: creates a missing database, migrates it, and a second run applies nothing", async () => {
    const database = `dpa_migrate_${randomUUID().slice(0, 8)}`;
    const url = new URL(env.DATABASE_URL as string);
    url.pathname = `/${database}`;
    const only = { PATH: process.env.PATH, DATABASE_URL: url.toString() };
    try {
      const first = spawnSync(process.execPath, ['dist/migrate.js'], { cwd: ROOT, env: only, encoding: 'utf8', timeout: 60_000 });
      expect(first.stderr).toBe('');
      expect(first.status).toBe(0);
      expect(first.stdout).toMatch(/^migrations: [1-9]\d* applied, 0 already applied$/m);
      const second = spawnSync(process.execPath, ['dist/migrate.js'], { cwd: ROOT, env: only, encoding: 'utf8', timeout: 60_000 });
      expect(second.status).toBe(0);
      expect(second.stdout).toMatch(/^migrations: 0 applied, [1-9]\d* already applied$/m);
      expect(spawnSync(process.execPath, ['dist/migrate.js'], { cwd: ROOT, env: { PATH: process.env.PATH }, encoding: 'utf8' }).status).toBe(78);
    } finally {
      url.pathname = '/postgres';
      const admin = new Client({ connectionString: url.toString() });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    }
  }, 60_000);

  it('the worker starts, schedules its maintenance job, and stops on SIGTERM', async () => {
    const worker = spawn(process.execPath, ['dist/worker.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    worker.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await eventually('worker started', async () => output.includes('worker started') || worker.exitCode !== null, { timeoutMs: 90_000 });
      expect(output).toContain('worker started');
      const redisUrl = new URL(env.REDIS_URL as string);
      const queue = new Queue('maintenance', { connection: { url: redisUrl.toString() }, prefix: env.QUEUE_PREFIX });
      try {
        const schedulers = await queue.getJobSchedulers();
        expect(schedulers.map((s) => s.key)).toContain('purge-expired-oauth-states');
      } finally {
        await queue.close();
      }
    } finally {
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => worker.once('exit', (code, signal) => resolve({ code, signal })));
      worker.kill('SIGTERM');
      // Graceful shutdown (src/common/lifecycle): the workers and the application close, then exit 0.
      expect(await exited).toEqual({ code: 0, signal: null });
    }
  }, 150_000);

  it('an API that ran LOCAL_GIT commands and stopped leaves no temporary git HOME (dpa-git-home-*) behind', async () => {
    // The process gets a TMPDIR of its own, so what other processes on this machine leave in /tmp does not count.
    const tmp = mkdtempSync(join(tmpdir(), 'dpa-home-leak-'));
    const root = join(tmp, 'repos');
    try {
      const bootstrap = JSON.parse(node(['dist/cli.js', 'bootstrap', '--org', `home-${randomUUID()}`, '--json']).stdout);
      // The organization's own directory under GIT_LOCAL_ROOT.
      const path = join(root, bootstrap.organizationId, 'demo.git');
      execFileSync('git', ['init', '--bare', '--quiet', path]);
      const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };
      const tree = execFileSync('git', ['--git-dir', path, 'mktree'], { input: '' }).toString().trim();
      const commit = execFileSync('git', ['--git-dir', path, 'commit-tree', tree, '-m', 'x'], { env: gitEnv }).toString().trim();
      execFileSync('git', ['--git-dir', path, 'update-ref', 'refs/heads/main', commit]);
      execFileSync('git', ['--git-dir', path, 'symbolic-ref', 'HEAD', 'refs/heads/main']);
      const api = await startApi({ TMPDIR: tmp, GIT_LOCAL_ENABLED: 'true', GIT_LOCAL_ROOT: root });
      try {
        const headers = { Authorization: `Bearer ${bootstrap.token}`, 'Content-Type': 'application/json' };
        const created = await fetch(`${api.base}/code-sources`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ data: { provider: 'LOCAL_GIT', repository: path } }),
        });
        expect(created.status).toBe(201);
        const id = ((await created.json()) as { data: { id: string } }).data.id;
        // git ran in the API process: it read the default branch.
        const repository = await fetch(`${api.base}/code-source/${id}/repository`, { headers });
        expect(repository.status).toBe(200);
        expect(((await repository.json()) as { data: { defaultBranch: { name: string } } }).data.defaultBranch.name).toBe('main');
      } finally {
        await api.stop('SIGTERM');
      }
      expect(await api.exited()).toEqual({ code: 0, signal: null });
      expect(readdirSync(tmp).filter((name) => name.startsWith('dpa-git-home-'))).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 150_000);

  it('the API logs structured JSON with request ids and never a token', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const bootstrap = JSON.parse(node(['dist/cli.js', 'bootstrap', '--org', `logs-${randomUUID()}`, '--json']).stdout);
    const api = spawn(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: { ...env, PORT: String(port), LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    api.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    api.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const base = `http://127.0.0.1:${port}`;
      await eventually('api listening', async () => output.includes('api listening'), { timeoutMs: 90_000, everyMs: 200 }).catch(() => undefined);
      const ok = await fetch(`${base}/projects`, { headers: { Authorization: `Bearer ${bootstrap.token}`, 'X-Request-Id': 'log-check-1' } });
      expect(ok.status).toBe(200);
      const bad = await fetch(`${base}/projects?token=${bootstrap.token}`, {
        headers: { Authorization: `Bearer ${bootstrap.token.slice(0, -2)}xx`, 'X-Request-Id': 'log-check-2' },
      });
      expect(bad.status).toBe(401);
    } finally {
      const exited = new Promise((resolve) => api.once('exit', resolve));
      api.kill('SIGTERM');
      await exited;
    }
    const lines = output.split('\n').filter((line) => line.startsWith('{'));
    const requests = lines.map((line) => JSON.parse(line)).filter((entry) => entry.req?.id?.startsWith('log-check-'));
    expect(requests.map((entry) => [entry.req.id, entry.res.statusCode])).toEqual([
      ['log-check-1', 200],
      ['log-check-2', 401],
    ]);
    expect(output).not.toContain(bootstrap.token);
    expect(output).not.toContain(bootstrap.token.slice(4, 40));
  }, 150_000);
});
