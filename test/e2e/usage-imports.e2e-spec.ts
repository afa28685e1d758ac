import { randomUUID } from 'node:crypto';
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
import { eventually } from '../support/eventually';
import { githubIntegration } from '../support/github-queues';
import { type BuiltProcess, startWorker } from '../support/processes';
import { TcpProxy } from '../support/tcp-proxy';
import type { EmulatedRun } from '@tools/git-emulator/emulator';

// A prefix of this suite's own: workers other suites start in-process must not take its jobs.
const PREFIX = `dpa-usage-${randomUUID().slice(0, 8)}`;

function usageConfig(emulator: GitProviderEmulator, extra: Partial<AppConfig> = {}): AppConfig {
  const base = loadConfig();
  return {
    ...base,
    queuePrefix: PREFIX,
    usage: { ...base.usage, cooldownSeconds: 1, freshnessMs: 3_600_000 },
    git: { ...base.git, github: { ...base.git.github, apiUrl: emulator.url, webUrl: emulator.url }, repositoryCacheTtlMs: 0 },
    ...extra,
  };
}

/** The most pages the worker walks per import: the 2,000-run import below is exactly this many pages. */
const MAX_PAGES = 20;

/** The real worker process (dist/worker.js) on the emulator. */
const startUsageWorker = (emulator: GitProviderEmulator) =>
  startWorker({
    QUEUE_PREFIX: PREFIX,
    GITHUB_API_URL: emulator.url,
    GITHUB_WEB_URL: emulator.url,
    LOG_LEVEL: 'warn',
    USAGE_IMPORT_MAX_PAGES: String(MAX_PAGES),
  });

/** What GET /scm/actions/usage should say, computed from the emulator's own data. */
function expectedUsage(codeSourceId: string, runs: EmulatedRun[]) {
  const groups = new Map<
    string,
    { codeSourceId: string; workflowName: string; day: string; runs: number; os: Map<string, { jobs: number; minutes: number }> }
  >();
  for (const run of runs) {
    const day = run.createdAt.slice(0, 10);
    const key = `${day}|${run.name}`;
    const group = groups.get(key) ?? { codeSourceId, workflowName: run.name, day, runs: 0, os: new Map() };
    group.runs++;
    for (const job of run.jobs) {
      const os = job.labels.includes('self-hosted')
        ? 'SELF_HOSTED'
        : job.labels[0].startsWith('windows')
          ? 'WINDOWS'
          : job.labels[0].startsWith('macos')
            ? 'MACOS'
            : 'UBUNTU';
      const seconds = Math.round((Date.parse(job.completedAt) - Date.parse(job.startedAt)) / 1000);
      const entry = group.os.get(os) ?? { jobs: 0, minutes: 0 };
      entry.jobs++;
      entry.minutes += os === 'SELF_HOSTED' ? 0 : Math.ceil(seconds / 60);
      group.os.set(os, entry);
    }
    groups.set(key, group);
  }
  return [...groups.values()]
    .map((g) => {
      const byRunnerOs = [...g.os.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([runnerOs, e]) => ({ runnerOs, jobs: e.jobs, billableMinutes: e.minutes }));
      return {
        codeSourceId: g.codeSourceId,
        workflowName: g.workflowName,
        day: g.day,
        runs: g.runs,
        jobs: byRunnerOs.reduce((n, r) => n + r.jobs, 0),
        billableMinutes: byRunnerOs.reduce((n, r) => n + r.billableMinutes, 0),
        byRunnerOs,
      };
    })
    .sort((a, b) => (a.day !== b.day ? (a.day < b.day ? 1 : -1) : a.workflowName < b.workflowName ? -1 : a.workflowName > b.workflowName ? 1 : 0));
}

describe('CI usage imports (API + the real worker process + the provider emulator)', () => {
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let worker: BuiltProcess;
  let db: Client;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    buildIfStale();
    emulator = await new GitProviderEmulator().start();
    app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(usageConfig(emulator)));
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    worker = await startUsageWorker(emulator);
  }, 240_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await db?.end();
    await emulator?.stop();
  });

  afterEach(() =>
    Object.assign(emulator.knobs, { down: false, delayMs: 0, rateLimited: false, actionsRateLimitedUntil: 0, rateLimitStatus: 403, actionsFailures: 0 }),
  );

  /** A tenant with an API_TOKEN integration and one code source per repository (each with `runs` workflow runs). */
  async function tenantWithRepos(label: string, repos: { runs: number; jobsPerRun?: number }[]) {
    const tenant = await createTenant(app, label);
    const { login, token, integrationId } = await githubIntegration(app, emulator, tenant.auth, label);
    const sources: { id: string; name: string; runs: EmulatedRun[] }[] = [];
    for (const [i, spec] of repos.entries()) {
      const name = `repo-${i}`;
      emulator.addRepository(login, name);
      const runs = emulator.addWorkflowRuns(login, name, { count: spec.runs, jobsPerRun: spec.jobsPerRun ?? 3, seed: i + 7 });
      const source = await http()
        .post('/code-sources')
        .set(tenant.auth)
        .send({ data: { integrationId, repository: `${login}/${name}` } })
        .expect(201);
      sources.push({ id: source.body.data.id, name, runs });
    }
    return { tenant, login, token, integrationId, sources };
  }

  const startImport = (tenant: TestTenant) => http().post('/scm/actions/usage/import').set(tenant.auth).expect(202);
  const imports = async (tenant: TestTenant) =>
    (await http().get('/scm/actions/usage/imports?limit=100').set(tenant.auth).expect(200)).body.data as {
      id: string;
      codeSourceId: string;
      status: string;
      pagesDone: number;
      nextPage: number;
      runsImported: number;
      jobsImported: number;
      lastError?: string;
      rateLimitedUntil?: string;
    }[];
  // `timeoutMs`: how long to wait (a bound on waiting, never a figure): a resumed import waits for the
  // stalled-job check first, and the whole suite runs beside another on two cores.
  const allFinished = (tenant: TestTenant, count: number, timeoutMs = 60_000) =>
    eventually(
      `${count} finished imports`,
      async () => {
        const rows = await imports(tenant);
        return rows.filter((r) => r.status === 'SUCCEEDED' || r.status === 'FAILED').length >= count && rows;
      },
      { timeoutMs },
    );
  const counts = async (codeSourceId: string) => {
    const runs = (await db.query('SELECT count(*)::int AS n FROM "CiUsageRecord" WHERE "codeSourceId" = $1', [codeSourceId])).rows[0].n as number;
    const jobs = (await db.query('SELECT count(*)::int AS n FROM "CiJobUsage" WHERE "codeSourceId" = $1', [codeSourceId])).rows[0].n as number;
    return { runs, jobs };
  };
  const jobsOf = (runs: EmulatedRun[]) => runs.reduce((n, r) => n + r.jobs.length, 0);
  async function usageOf(tenant: TestTenant, query: string) {
    const rows: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await http()
        .get(`/scm/actions/usage?limit=7&${query}${cursor ? `&cursor=${cursor}` : ''}`)
        .set(tenant.auth)
        .expect(200);
      rows.push(...page.body.data);
      cursor = page.body.meta.nextCursor;
    } while (cursor);
    return rows;
  }

  it("imports every connected source once: started 1 then 0, stale until it succeeds, figures equal to the provider's", async () => {
    const { tenant, sources } = await tenantWithRepos('usage-a', [{ runs: 250 }]);
    const first = await startImport(tenant);
    expect(first.body).toEqual({ data: { started: 1 }, retryAfterSeconds: 1, stale: true });
    const second = await startImport(tenant);
    expect(second.body.data.started).toBe(0);
    expect(second.body.stale).toBe(true);
    const [done] = await allFinished(tenant, 1);
    expect(done).toMatchObject({ codeSourceId: sources[0].id, status: 'SUCCEEDED', pagesDone: 3, runsImported: 250, jobsImported: jobsOf(sources[0].runs) });
    expect(await counts(sources[0].id)).toEqual({ runs: 250, jobs: jobsOf(sources[0].runs) });

    const usage = await usageOf(tenant, `codeSourceId=${sources[0].id}`);
    expect(usage).toEqual(expectedUsage(sources[0].id, sources[0].runs));
    // A date range keeps the days inside it (inclusive).
    const days = [...new Set(sources[0].runs.map((r) => r.createdAt.slice(0, 10)))].sort();
    const [from, to] = [days[2], days[5]];
    const ranged = (await usageOf(tenant, `from=${from}&to=${to}`)) as { day: string }[];
    expect(ranged).toEqual(expectedUsage(sources[0].id, sources[0].runs).filter((g) => g.day >= from && g.day <= to));

    // Fresh now; a re-import upserts the overlap again and adds nothing.
    const third = await startImport(tenant);
    expect(third.body).toMatchObject({ data: { started: 1 }, stale: false });
    const rows = await allFinished(tenant, 2);
    expect(rows.map((r) => r.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(rows[0].runsImported).toBeGreaterThan(0);
    expect(await counts(sources[0].id)).toEqual({ runs: 250, jobs: jobsOf(sources[0].runs) });
    expect(await usageOf(tenant, `codeSourceId=${sources[0].id}`)).toEqual(expectedUsage(sources[0].id, sources[0].runs));
  }, 90_000);

  it('two API processes racing start each source once', async () => {
    const { tenant, sources } = await tenantWithRepos('usage-race', [{ runs: 30 }, { runs: 30 }, { runs: 30 }]);
    const other = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(usageConfig(emulator)));
    try {
      const answers = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          request((i % 2 ? other : app).getHttpServer())
            .post('/scm/actions/usage/import')
            .set(tenant.auth)
            .expect(202),
        ),
      );
      expect(answers.reduce((n, a) => n + a.body.data.started, 0)).toBe(3);
      const rows = await allFinished(tenant, 3);
      expect(new Set(rows.map((r) => r.codeSourceId))).toEqual(new Set(sources.map((s) => s.id)));
    } finally {
      await other.close();
    }
  }, 60_000);

  it.each([403, 429] as const)(
    'a provider rate limit (%i with retry-after) delays the job, which then completes; retryAfterSeconds says when',
    async (status) => {
      const { tenant, sources } = await tenantWithRepos(`usage-rl${status}`, [{ runs: 120 }]);
      const queue = new Queue('usage-imports', { connection: { url: process.env.REDIS_URL as string }, prefix: PREFIX });
      try {
        Object.assign(emulator.knobs, { actionsRateLimitedUntil: Date.now() + 6_000, rateLimitStatus: status });
        expect((await startImport(tenant)).body.data.started).toBe(1);
        const row = await eventually('the import delayed', async () => (await imports(tenant)).find((r) => r.rateLimitedUntil));
        expect(row.status).toBe('QUEUED');
        const delayed = await queue.getJobs(['delayed']);
        expect(delayed.map((j) => j.id)).toContain(`usage-import-${row.id}`);
        const again = await startImport(tenant);
        expect(again.body.data.started).toBe(0);
        expect(again.body.retryAfterSeconds).toBeGreaterThanOrEqual(3);
        expect(again.body.retryAfterSeconds).toBeLessThanOrEqual(7);
        const [done] = await allFinished(tenant, 1);
        expect(done).toMatchObject({ status: 'SUCCEEDED', runsImported: 120 });
        expect(done.rateLimitedUntil).toBeUndefined();
        expect(await counts(sources[0].id)).toEqual({ runs: 120, jobs: jobsOf(sources[0].runs) });
      } finally {
        await queue.close();
      }
    },
    60_000,
  );

  it('transient provider errors retry with backoff and the import completes', async () => {
    const { tenant, sources } = await tenantWithRepos('usage-transient', [{ runs: 40 }]);
    emulator.knobs.actionsFailures = 2;
    expect((await startImport(tenant)).body.data.started).toBe(1);
    const [done] = await allFinished(tenant, 1);
    expect(done).toMatchObject({ status: 'SUCCEEDED', runsImported: 40 });
    expect(await counts(sources[0].id)).toEqual({ runs: 40, jobs: jobsOf(sources[0].runs) });
  }, 60_000);

  it('resumes from the checkpoint after the worker is SIGKILLed: no page before it fetched again, nothing duplicated', async () => {
    const { tenant, login, sources } = await tenantWithRepos('usage-kill', [{ runs: 2_000, jobsPerRun: 2 }]);
    emulator.knobs.delayMs = 2;
    expect((await startImport(tenant)).body.data.started).toBe(1);
    await eventually('four pages committed', async () => (await imports(tenant))[0]?.pagesDone >= 4, { timeoutMs: 60_000 });
    await worker.stop('SIGKILL');
    const [killed] = await imports(tenant);
    const before = emulator.runPageRequests(login, 'repo-0').length;
    expect(killed.status).toBe('RUNNING');
    worker = await startUsageWorker(emulator);
    const [done] = await allFinished(tenant, 1, 180_000);
    const after = emulator.runPageRequests(login, 'repo-0').slice(before);
    expect(done).toMatchObject({ status: 'SUCCEEDED', pagesDone: 20, runsImported: 2_000, jobsImported: jobsOf(sources[0].runs) });
    expect(Math.min(...after)).toBe(killed.nextPage);
    expect(after.sort((a, b) => a - b)).toEqual(Array.from({ length: 21 - killed.nextPage }, (_, i) => killed.nextPage + i));
    expect(await counts(sources[0].id)).toEqual({ runs: 2_000, jobs: jobsOf(sources[0].runs) });
    process.stdout.write(
      `resume: killed at checkpoint page ${killed.nextPage} (${killed.pagesDone} pages committed); run-page requests before the kill ${before}, after ${after.length} (pages ${after[0]}..${after[after.length - 1]})\n`,
    );
  }, 300_000);

  it('a provider listing more than USAGE_IMPORT_MAX_PAGES pages fails the import with PAGE_LIMIT_REACHED; the page after the cap is never asked for', async () => {
    const { tenant, login, sources } = await tenantWithRepos('usage-cap', [{ runs: MAX_PAGES * 100 + 50, jobsPerRun: 1 }]);
    expect((await startImport(tenant)).body.data.started).toBe(1);
    const [done] = await allFinished(tenant, 1, 180_000);
    expect(done).toMatchObject({ status: 'FAILED', pagesDone: MAX_PAGES, runsImported: MAX_PAGES * 100 });
    expect(done.lastError).toContain('dpa:Usage:PAGE_LIMIT_REACHED');
    expect(done.lastError).toContain(`${MAX_PAGES} pages`);
    expect(emulator.runPageRequests(login, 'repo-0').sort((a, b) => a - b)).toEqual(Array.from({ length: MAX_PAGES }, (_, i) => i + 1));
    // What was imported before the cap stays.
    expect((await counts(sources[0].id)).runs).toBe(MAX_PAGES * 100);
  }, 240_000);

  it('a revoked token fails the import with a clear error and marks the integration NEEDS_ATTENTION', async () => {
    const { tenant, token, integrationId } = await tenantWithRepos('usage-revoked', [{ runs: 10 }]);
    emulator.revokeToken(token);
    expect((await startImport(tenant)).body.data.started).toBe(1);
    const [done] = await allFinished(tenant, 1);
    expect(done.status).toBe('FAILED');
    expect(done.lastError).toContain("refused the integration's credentials");
    const integration = await http().get(`/integrations/${integrationId}`).set(tenant.auth).expect(200);
    expect(integration.body.data.status).toBe('NEEDS_ATTENTION');
    // Its code source is no longer connected: nothing to start, nothing stale.
    expect((await startImport(tenant)).body).toMatchObject({ data: { started: 0 }, stale: false });
  }, 60_000);

  it('keeps organizations apart', async () => {
    const a = await tenantWithRepos('usage-iso-a', [{ runs: 20 }]);
    const b = await createTenant(app, 'usage-iso-b');
    await startImport(a.tenant);
    await allFinished(a.tenant, 1);
    expect(await imports(b)).toEqual([]);
    expect(await usageOf(b, `codeSourceId=${a.sources[0].id}`)).toEqual([]);
    expect(await usageOf(b, '')).toEqual([]);
    expect((await startImport(b)).body).toEqual({ data: { started: 0 }, retryAfterSeconds: 1, stale: false });
  }, 60_000);

  it('refuses bad filters with a 400 naming them', async () => {
    const tenant = await createTenant(app, 'usage-bad');
    for (const query of ['from=2026-02-31', 'to=yesterday', 'from=0000-01-01', 'codeSourceId=%27', 'from=2026-03-02&to=2026-03-01']) {
      const response = await http().get(`/scm/actions/usage?${query}`).set(tenant.auth).expect(400);
      expect(JSON.stringify(response.body)).toMatch(/from|to|codeSourceId/);
    }
  });

  it('answers 503 quickly when Redis cannot take the job, instead of hanging', async () => {
    const { tenant } = await tenantWithRepos('usage-redis', [{ runs: 5 }]);
    const base = usageConfig(emulator);
    const proxy = await TcpProxy.start(base.redisUrl);
    const faulty = await createTestApp({}, (builder) =>
      builder.overrideProvider(APP_CONFIG).useValue({ ...base, redisUrl: proxy.rewrite(base.redisUrl), redisCommandTimeoutMs: 500 }),
    );
    try {
      proxy.pause();
      const started = Date.now();
      const response = await request(faulty.getHttpServer()).post('/scm/actions/usage/import').set(tenant.auth);
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBeDefined();
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await proxy.resume();
      await faulty.close();
      await proxy.close();
    }
  }, 60_000);
});
