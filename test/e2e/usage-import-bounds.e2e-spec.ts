import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import request from 'supertest';
import { APP_CONFIG } from '@/common/config/config.module';
import { loadConfig, type AppConfig } from '@/common/config/app-config';
import { buildIfStale } from '@tools/workspace/build';
import { createTestApp } from '../support/app';
import { createTenant, type TestTenant } from '../support/factories';
import { GitProviderEmulator } from '../support/git';
import { eventually, sleep } from '../support/eventually';
import { githubIntegration } from '../support/github-queues';
import { type BuiltProcess, startWorker } from '../support/processes';

/**
 * Issue 41, bounded usage imports, against the real worker process. The integration and its code
 * sources are created through the API on the provider emulator; the worker's GitHub is a small
 * server of this suite's own (`Scripted`) that answers the Actions listings as a provider a tenant
 * controls would: the largest pages allowed, answers that dribble in, answers that never come.
 */

// A prefix of this suite's own: workers other suites start must not take its jobs.
const PREFIX = `dpa-usage-bounds-${randomUUID().slice(0, 8)}`;
const MiB = 1024 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

/** GET /repos/{owner}/{repo}/actions/runs[/{id}/jobs] answered by the handler of the repository's name. */
class Scripted {
  readonly handlers = new Map<string, Handler>();
  /** Requests seen, with when they started and when their connection closed. */
  readonly seen: { path: string; startedAt: number; closedAt?: number }[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', this.url);
      const entry: { path: string; startedAt: number; closedAt?: number } = { path: url.pathname + url.search, startedAt: Date.now() };
      this.seen.push(entry);
      res.on('close', () => (entry.closedAt = Date.now()));
      const repo = url.pathname.match(/^\/repos\/[^/]+\/([^/]+)\/actions\/runs/)?.[1];
      const handler = repo ? this.handlers.get(repo) : undefined;
      if (!handler) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Not Found' }));
        return;
      }
      handler(req, res, url);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const page = (url: URL) => Number(url.searchParams.get('page') ?? '1');
const jobsOfRun = (url: URL) => url.pathname.match(/\/actions\/runs\/(\d+)\/jobs$/)?.[1];
const next = (url: URL, more: boolean) => (more ? { link: `<${url.origin}${url.pathname}?per_page=100&page=${page(url) + 1}>; rel="next"` } : {});

function runJson(id: number) {
  return {
    id,
    workflow_id: 9,
    name: 'ci',
    event: 'push',
    status: 'completed',
    conclusion: 'success',
    run_attempt: 1,
    created_at: '2026-03-01T10:00:00Z',
    run_started_at: '2026-03-01T10:00:00Z',
    updated_at: '2026-03-01T10:05:00Z',
  };
}

function jobJson(id: number, runId: number, heavy = '') {
  return `{"id":${id},"run_id":${runId},"name":"build","labels":["ubuntu-latest"],"runner_group_name":null,"conclusion":"success","started_at":"2026-03-01T10:00:00Z","completed_at":"2026-03-01T10:02:00Z"${heavy}}`;
}

/**
 * The largest page of 100 jobs a usage import accepts: just under USAGE_IMPORT_MAX_PAGE_BYTES
 * (4 MiB by default) and just under its 250,000 JSON values, made as costly to parse as allowed:
 * each job carries 1,150 empty step objects (the dearest value once parsed, about 64 bytes of
 * heap each) and a padding string for the rest of the bytes.
 */
function largestJobsPage(runId: number, pageNo: number): Buffer {
  const steps = `,"steps":[${'{},'.repeat(1_149)}{}]`;
  const head = `{"total_count":${100 * pageNo},"jobs":[`;
  const bare = Array.from({ length: 100 }, (_, i) => jobJson(runId * 10_000 + pageNo * 100 + i, runId, `${steps},"padding":""`));
  const room = 4 * MiB - 1_024 - Buffer.byteLength(head + bare.join(',') + ']}');
  const padding = 'x'.repeat(Math.floor(room / 100));
  const jobs = bare.map((job) => job.replace('"padding":""', `"padding":"${padding}"`));
  return Buffer.from(`${head}${jobs.join(',')}]}`);
}

/** The worker's peak and current resident memory, from /proc (bytes). */
function memoryOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

describe('Bounded usage imports (API + the real worker process + a provider a tenant controls)', () => {
  let emulator: GitProviderEmulator;
  let scripted: Scripted;
  let app: NestExpressApplication;
  let worker: BuiltProcess | undefined;
  const http = () => request(app.getHttpServer());

  /** The real worker process, its GitHub being the scripted server. */
  const startBoundsWorker = (env: NodeJS.ProcessEnv = {}) =>
    startWorker({ QUEUE_PREFIX: PREFIX, GITHUB_API_URL: scripted.url, GITHUB_WEB_URL: scripted.url, LOG_LEVEL: 'warn', ...env });

  beforeAll(async () => {
    buildIfStale();
    emulator = await new GitProviderEmulator().start();
    scripted = await new Scripted().start();
    const base = loadConfig();
    const config: AppConfig = {
      ...base,
      queuePrefix: PREFIX,
      usage: { ...base.usage, cooldownSeconds: 1 },
      git: { ...base.git, github: { ...base.git.github, apiUrl: emulator.url, webUrl: emulator.url }, repositoryCacheTtlMs: 0 },
    };
    app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
  }, 240_000);

  afterEach(async () => {
    await worker?.stop('SIGKILL');
    worker = undefined;
  });

  afterAll(async () => {
    await app?.close();
    await scripted?.stop();
    await emulator?.stop();
  });

  /** A tenant whose one GitHub code source is the repository `name` (answered by the scripted server). */
  async function tenantWithSource(label: string, name: string) {
    const tenant = await createTenant(app, label);
    const { login, integrationId } = await githubIntegration(app, emulator, tenant.auth, label);
    emulator.addRepository(login, name);
    const source = await http()
      .post('/code-sources')
      .set(tenant.auth)
      .send({ data: { integrationId, repository: `${login}/${name}` } })
      .expect(201);
    return { tenant, sourceId: source.body.data.id as string };
  }

  const startImport = async (tenant: TestTenant) =>
    expect((await http().post('/scm/actions/usage/import').set(tenant.auth).expect(202)).body.data.started).toBe(1);
  const theImport = async (tenant: TestTenant) =>
    (await http().get('/scm/actions/usage/imports').set(tenant.auth).expect(200)).body.data[0] as {
      status: string;
      pagesDone: number;
      runsImported: number;
      jobsImported: number;
      lastError?: string;
      startedAt?: string;
      finishedAt?: string;
    };
  const finished = (tenant: TestTenant, timeoutMs = 60_000) =>
    eventually(
      'the import finished',
      async () => {
        const row = await theImport(tenant);
        return (row?.status === 'SUCCEEDED' || row?.status === 'FAILED') && row;
      },
      { timeoutMs },
    );

  it('keeps the worker under its memory bound while it imports the largest pages allowed, 16 runs of 8 pages each at once', async () => {
    const RUNS = 16;
    const PAGES = 8;
    scripted.handlers.set('largest', (_req, res, url) => {
      const run = jobsOfRun(url);
      if (!run) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ total_count: RUNS, workflow_runs: Array.from({ length: RUNS }, (_, i) => runJson(1_000 + i)) }));
        return;
      }
      const body = largestJobsPage(Number(run), page(url));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length), ...next(url, page(url) < PAGES) });
      res.end(body);
    });
    const { tenant } = await tenantWithSource('bounds-mem', 'largest');
    worker = await startBoundsWorker();
    const pid = worker.child.pid as number;
    await sleep(1_000);
    const idle = memoryOf(pid);
    let sampled = idle.now;
    const sampler = setInterval(() => (sampled = Math.max(sampled, memoryOf(pid).now)), 50);
    try {
      await startImport(tenant);
      const done = await finished(tenant, 240_000);
      expect(done).toMatchObject({ status: 'SUCCEEDED', pagesDone: 1, runsImported: RUNS, jobsImported: RUNS * PAGES * 100 });
    } finally {
      clearInterval(sampler);
    }
    const { peak } = memoryOf(pid);
    const bytes = RUNS * PAGES * largestJobsPage(1_000, 1).length;
    // The bound: the idle worker plus, for each of the 16 pages a worker holds at once
    // (USAGE_IMPORT_PAGES_IN_FLIGHT), the page's bytes four times over (chunks, their concatenation,
    // the reader's copy, the decoded text) and its parsed values (250,000 at about 64 bytes): 16 × 32 MiB.
    const bound = idle.now + 16 * (4 * 4 * MiB + 16 * MiB);
    process.stdout.write(
      `memory: ${RUNS * PAGES} pages of ${(bytes / RUNS / PAGES / MiB).toFixed(2)} MiB (${(bytes / MiB).toFixed(0)} MiB in all); worker RSS idle ${(idle.now / MiB).toFixed(0)} MiB, ` +
        `peak ${(peak / MiB).toFixed(0)} MiB (VmHWM; sampled ${(sampled / MiB).toFixed(0)} MiB), bound ${(bound / MiB).toFixed(0)} MiB\n`,
    );
    expect(worker.running).toBe(true);
    expect(peak).toBeLessThan(bound);
  }, 300_000);

  it('releases the slot of a provider that dribbles: each page at GIT_PROVIDER_TIMEOUT_MS, the import at USAGE_IMPORT_DEADLINE_MS, with the reason', async () => {
    const TIMEOUT_MS = 1_500;
    const DEADLINE_MS = 6_000;
    // The runs page dribbles one byte every 100 ms forever: dropped at the per-request timeout.
    scripted.handlers.set('dribble-forever', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"total_count":1,"workflow_runs":[');
      const drip = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(drip));
    });
    // Every page dribbles in over 1 s, just inside the per-request timeout, and there is always a
    // next run with a next page: only the import's deadline ends it.
    scripted.handlers.set('dribble-pages', (_req, res, url) => {
      const run = jobsOfRun(url);
      const body = Buffer.from(
        run
          ? `{"total_count":1000000,"jobs":[${jobJson(Number(run) * 10_000 + page(url), Number(run))}]}`
          : JSON.stringify({ total_count: 100, workflow_runs: Array.from({ length: 100 }, (_, i) => runJson(page(url) * 1_000 + i)) }),
      );
      res.writeHead(200, { 'content-type': 'application/json', ...next(url, true) });
      let sent = 0;
      const step = Math.ceil(body.length / 10);
      const drip = setInterval(() => {
        res.write(body.subarray(sent, sent + step));
        sent += step;
        if (sent >= body.length) {
          clearInterval(drip);
          res.end();
        }
      }, 100);
      res.on('close', () => clearInterval(drip));
    });
    const forever = await tenantWithSource('bounds-drip', 'dribble-forever');
    const pages = await tenantWithSource('bounds-pages', 'dribble-pages');
    worker = await startBoundsWorker({ GIT_PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS), USAGE_IMPORT_DEADLINE_MS: String(DEADLINE_MS) });
    const queue = new Queue('usage-imports', { connection: { url: process.env.REDIS_URL as string }, prefix: PREFIX });
    try {
      await startImport(forever.tenant);
      const retrying = await eventually('the dribbling page dropped', async () => {
        const row = await theImport(forever.tenant);
        return row?.lastError && row;
      });
      expect(retrying.status).toBe('QUEUED');
      expect(retrying.lastError).toContain(`no complete answer from`);
      expect(retrying.lastError).toContain(`within ${TIMEOUT_MS} ms); retrying`);
      const dribbled = scripted.seen.find((s) => s.path.includes('/dribble-forever/'));
      expect(dribbled?.closedAt).toBeDefined();
      expect((dribbled?.closedAt ?? Infinity) - (dribbled?.startedAt ?? 0)).toBeLessThan(TIMEOUT_MS + 1_000);
      // The slot is free: the job waits for its retry, it is not running.
      expect((await queue.getJobs(['active'])).length).toBe(0);

      const started = Date.now();
      await startImport(pages.tenant);
      const done = await finished(pages.tenant, 60_000);
      const tookMs = Date.now() - started;
      expect(done.status).toBe('FAILED');
      expect(done.lastError).toContain('dpa:Usage:DEADLINE_EXCEEDED');
      expect(done.lastError).toContain(`${DEADLINE_MS} ms in workers`);
      expect(done.jobsImported).toBeGreaterThan(0);
      // Ended at the deadline (plus the time to take the job and record it), not by anything else.
      expect(tookMs).toBeLessThan(DEADLINE_MS + 4_000);
      await sleep(500);
      const open = scripted.seen.filter((s) => s.path.includes('/dribble-pages/') && s.closedAt === undefined);
      expect(open).toEqual([]);
      process.stdout.write(
        `dribble: page dropped after ${(dribbled?.closedAt ?? 0) - (dribbled?.startedAt ?? 0)} ms; import ended ${tookMs} ms after it was started (deadline ${DEADLINE_MS} ms), ${done.jobsImported} jobs kept\n`,
      );
    } finally {
      await queue.close();
    }
  }, 120_000);

  it('ends an import past USAGE_IMPORT_MAX_BYTES with the reason, keeping what it committed', async () => {
    scripted.handlers.set('many-bytes', (_req, res, url) => {
      const run = jobsOfRun(url);
      const body = run
        ? `{"total_count":100,"jobs":[${Array.from({ length: 100 }, (_, i) => jobJson(Number(run) * 1_000 + i, Number(run))).join(',')}]}`
        : JSON.stringify({ total_count: 100_000, workflow_runs: Array.from({ length: 100 }, (_, i) => runJson(page(url) * 1_000 + i)) });
      res.writeHead(200, { 'content-type': 'application/json', ...next(url, !run) });
      res.end(body);
    });
    const { tenant } = await tenantWithSource('bounds-bytes', 'many-bytes');
    const MAX_BYTES = 5 * MiB;
    worker = await startBoundsWorker({ USAGE_IMPORT_MAX_BYTES: String(MAX_BYTES) });
    await startImport(tenant);
    const done = await finished(tenant);
    expect(done.status).toBe('FAILED');
    expect(done.lastError).toContain('dpa:Usage:BYTES_LIMIT_REACHED');
    expect(done.lastError).toContain(`USAGE_IMPORT_MAX_BYTES is ${MAX_BYTES}`);
    expect(done.pagesDone).toBeGreaterThan(0);
    const read = Number(done.lastError?.match(/\((\d+) bytes read/)?.[1]);
    // Stopped within a page or so per lane of the cap (the pages in flight when it was crossed).
    expect(read).toBeGreaterThan(MAX_BYTES);
    expect(read).toBeLessThan(MAX_BYTES + 16 * 64 * 1024);
  }, 120_000);

  it("resumes a run's jobs where they stopped after the worker is SIGKILLed mid-run: no committed page of jobs fetched again, nothing counted twice", async () => {
    const RUNS = 2;
    const PAGES = 30;
    scripted.handlers.set('long-runs', (_req, res, url) => {
      const run = jobsOfRun(url);
      if (!run) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ total_count: RUNS, workflow_runs: Array.from({ length: RUNS }, (_, i) => runJson(5_000 + i)) }));
        return;
      }
      const body = `{"total_count":${PAGES * 100},"jobs":[${Array.from({ length: 100 }, (_, i) => jobJson(Number(run) * 10_000 + page(url) * 100 + i, Number(run))).join(',')}]}`;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', ...next(url, page(url) < PAGES) });
        res.end(body);
      }, 150);
    });
    const { tenant, sourceId } = await tenantWithSource('bounds-resume', 'long-runs');
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      worker = await startBoundsWorker();
      await startImport(tenant);
      await eventually('some pages of jobs committed', async () => (await theImport(tenant)).jobsImported >= 1_000, { timeoutMs: 60_000 });
      await worker.stop('SIGKILL');
      await sleep(500); // a commit the worker had sent lands (or not) before the checkpoints are read
      const killed = await theImport(tenant);
      const checkpoints = new Map(
        (
          await db.query<{ run: string; next: number }>(
            'SELECT "externalRunId" AS run, "jobsNextPage" AS next FROM "CiUsageRecord" WHERE "codeSourceId" = $1',
            [sourceId],
          )
        ).rows.map((r) => [r.run, r.next]),
      );
      const stored = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM "CiJobUsage" WHERE "codeSourceId" = $1', [sourceId])).rows[0].n;
      expect(killed.status).toBe('RUNNING');
      expect(stored).toBe(killed.jobsImported);
      // Each run's checkpoint is the page after the last one committed: (its stored jobs / 100) + 1.
      for (const [run, nextPage] of checkpoints) {
        const mine = (
          await db.query<{ n: number }>('SELECT count(*)::int AS n FROM "CiJobUsage" WHERE "codeSourceId" = $1 AND "externalRunId" = $2', [sourceId, run])
        ).rows[0].n;
        expect(nextPage).toBe(mine / 100 + 1);
      }
      const before = scripted.seen.length;
      worker = await startBoundsWorker();
      const done = await finished(tenant, 120_000);
      expect(done).toMatchObject({ status: 'SUCCEEDED', pagesDone: 1, runsImported: RUNS, jobsImported: RUNS * PAGES * 100 });
      const after = scripted.seen.slice(before).filter((s) => s.path.includes('/long-runs/'));
      for (const [run, nextPage] of checkpoints) {
        const pagesAsked = after.filter((s) => s.path.includes(`/runs/${run}/jobs`)).map((s) => Number(new URL(s.path, scripted.url).searchParams.get('page')));
        expect(Math.min(...pagesAsked)).toBe(nextPage);
        expect(pagesAsked.sort((a, b) => a - b)).toEqual(Array.from({ length: PAGES + 1 - nextPage }, (_, i) => nextPage + i));
      }
      expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM "CiJobUsage" WHERE "codeSourceId" = $1', [sourceId])).rows[0].n).toBe(
        RUNS * PAGES * 100,
      );
      process.stdout.write(`resume mid-run: killed with ${killed.jobsImported} jobs committed, run checkpoints ${[...checkpoints.values()].join(', ')}\n`);
    } finally {
      await db.end();
    }
  }, 240_000);

  it('fails an import whose worker stalls again and again (a crash loop) after USAGE_IMPORT_MAX_STALLS, with the reason', async () => {
    // Never answers: the worker holds the import until it is killed.
    scripted.handlers.set('crash-loop', () => undefined);
    const { tenant } = await tenantWithSource('bounds-stall', 'crash-loop');
    const env = { GIT_PROVIDER_TIMEOUT_MS: '120000' };
    const asked = () => scripted.seen.filter((s) => s.path.includes('/crash-loop/')).length;
    worker = await startBoundsWorker(env);
    await startImport(tenant);
    let kills = 0;
    // Each time a worker has taken the import (it asked the provider), it dies (SIGKILL, as out of
    // memory would); the next worker's stalled-job check finds the job after its lock (10 s) ran out.
    for (; kills < 3; kills++) {
      const before = asked();
      await eventually(`a worker took the import (${kills} kills so far)`, async () => asked() > before, { timeoutMs: 60_000 });
      await worker.stop('SIGKILL');
      worker = await startBoundsWorker(env);
    }
    const done = await finished(tenant, 90_000);
    expect(done.status).toBe('FAILED');
    expect(done.lastError).toContain('dpa:Usage:STALLED');
    expect(done.lastError).toContain('stopped 3 times');
    expect(done.finishedAt).toBeDefined();
    // Failed, not resumed again: no worker asks the provider for it any more.
    const after = asked();
    await sleep(16_000);
    expect(asked()).toBe(after);
  }, 300_000);
});
