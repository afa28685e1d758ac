import type { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import request from 'supertest';
import { loadConfig, type AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { READINESS_CACHE_MS } from '@/common/lifecycle/readiness';
import { MetricsService } from '@/common/metrics/metrics.service';
import { OpsServer } from '@/common/metrics/ops-server';
import { RedisService } from '@/common/redis/redis.module';
import { createTestApp } from '../support/app';
import { eventually, sleep } from '../support/eventually';
import { ownDatabase } from '../support/own-database';

/** Tables the merge-queue and usage-import gauges read at scrape time. */
const SCRAPED_TABLES = ['MergeQueue', 'MergeQueueEntry', 'MergeQueueBatch', 'UsageImport'];

/**
 * Scans of the scraped tables as Postgres counts them (pg_stat_user_tables): an observation of the
 * server, not of the application. A backend reports its counts when it exits, so the app is closed
 * (its pool's connections end) before reading, and the total is read until it stops moving.
 */
async function tableScans(databaseUrl: string): Promise<number> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const read = async () => {
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ n: string }>(
        'SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0) AS n FROM pg_stat_user_tables WHERE relname = ANY($1)',
        [SCRAPED_TABLES],
      );
      return Number(rows[0].n);
    };
    let last = await read();
    for (let stable = 0; stable < 3;) {
      await sleep(300);
      const now = await read();
      stable = now === last ? stable + 1 : 0;
      last = now;
    }
    return last;
  } finally {
    await client.end();
  }
}

describe('Operator ports: loopback by default, scrapes and readiness probes cannot reach Postgres per request', () => {
  const base = loadConfig();

  it('METRICS_HOST and WORKER_HEALTH_HOST default to loopback; a bad address stops the process with the variable named', () => {
    expect(loadConfig({ ...process.env, METRICS_HOST: undefined, WORKER_HEALTH_HOST: undefined })).toMatchObject({
      metricsHost: '127.0.0.1',
      workerHealthHost: '127.0.0.1',
    });
    expect(loadConfig({ ...process.env, METRICS_HOST: '0.0.0.0', WORKER_HEALTH_HOST: '::' })).toMatchObject({ metricsHost: '0.0.0.0', workerHealthHost: '::' });
    expect(() => loadConfig({ ...process.env, METRICS_HOST: 'metrics.example.com' })).toThrow(/METRICS_HOST/);
  });

  it.each([
    ['127.0.0.1', false],
    ['0.0.0.0', true],
  ])('an operations listener bound to %s is reachable from another local address: %s', async (host, reachable) => {
    const ops = await OpsServer.start(0, { '/metrics': async () => ({ status: 200, contentType: 'text/plain', body: 'ok' }) }, host);
    try {
      expect((await fetch(`http://127.0.0.1:${ops.port}/metrics`)).status).toBe(200);
      // 127.0.0.2 is this machine too, but not the address a loopback listener bound.
      const other = await fetch(`http://127.0.0.2:${ops.port}/metrics`).then(
        (r) => r.status,
        () => 'refused',
      );
      expect(other).toBe(reachable ? 200 : 'refused');
    } finally {
      await ops.close();
    }
  });

  it('a storm of concurrent scrapes costs one round of aggregate queries per process (counted by Postgres), and later scrapes within METRICS_SOURCE_CACHE_MS none', async () => {
    // A database of its own: Postgres counts every backend's scans, and the suite running beside this
    // one in the other Jest worker uses the shared database.
    const own = await ownDatabase('operator_ports');
    const config: AppConfig = { ...base, databaseUrl: own.databaseUrl, queuePrefix: own.queuePrefix, metricsSourceCacheMs: 60_000 };
    /** One app: `scrapes` scrapes `concurrency` at a time; the scans Postgres counted on the scraped tables. */
    const scansFor = async (waves: number[]): Promise<{ scans: number; texts: string[] }> => {
      const before = await tableScans(own.databaseUrl);
      const app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
      const texts: string[] = [];
      try {
        const metrics = app.get(MetricsService);
        for (const concurrency of waves) texts.push(...(await Promise.all(Array.from({ length: concurrency }, () => metrics.scrape()))));
      } finally {
        await app.close();
      }
      return { scans: (await tableScans(own.databaseUrl)) - before, texts };
    };
    let one: { scans: number; texts: string[] };
    let storm: { scans: number; texts: string[] };
    try {
      one = await scansFor([1]);
      storm = await scansFor([40, 40, 1]);
    } finally {
      await own.drop();
    }
    process.stdout.write(`scans of the scraped tables: 1 scrape ${one.scans}, 81 scrapes (40 at once, 40 more, 1) ${storm.scans}\n`);
    expect(one.scans).toBeGreaterThan(0);
    expect(storm.scans).toBe(one.scans);
    // Every scrape reports the shared gauges (from the one read).
    for (const text of storm.texts) expect(text).toMatch(/^dpa_merge_queues\{status="active"\} \d+$/m);
  }, 60_000);

  describe('GET /health/ready', () => {
    let app: NestExpressApplication;
    afterEach(async () => {
      await app?.close();
    });

    it('is checked once for a crowd of probes (Postgres and Redis asked once per second per process)', async () => {
      app = await createTestApp();
      await app.listen(0, '127.0.0.1');
      const server = app.getHttpServer();
      const ping = jest.spyOn(app.get(RedisService).client, 'ping');
      // A crowd shares one check when it all arrives within one period of the check settling. On a
      // loaded machine a crowd of 30 can spread past the period, and a second check is then right:
      // such a crowd proves nothing and is sent again after the period (at most 3 crowds).
      const crowds: string[] = [];
      let fitted = false;
      for (let attempt = 0; attempt < 3; attempt++) {
        await sleep(READINESS_CACHE_MS + 50); // the last answer has expired: the crowd's first probe checks
        const pingsBefore = ping.mock.calls.length;
        const started = Date.now();
        const responses = await Promise.all(Array.from({ length: 30 }, () => request(server).get('/health/ready')));
        const elapsed = Date.now() - started;
        const pings = ping.mock.calls.length - pingsBefore;
        expect(responses.map((r) => r.status)).toEqual(Array(30).fill(200));
        expect(responses[0].body.data.checks).toMatchObject({ database: { status: 'up' }, redis: { status: 'up' } });
        crowds.push(`${elapsed} ms, ${pings} checks`);
        if (elapsed < READINESS_CACHE_MS) {
          expect(pings).toBe(1);
          fitted = true;
          break;
        }
        expect(pings).toBeLessThanOrEqual(1 + Math.ceil(elapsed / READINESS_CACHE_MS));
      }
      expect(fitted ? 'a crowd fitted' : `no crowd fitted in one period: ${crowds.join('; ')}`).toBe('a crowd fitted');
      // After the period, the next probe checks again.
      const pingsNow = ping.mock.calls.length;
      await eventually(
        'a new check',
        async () => {
          await request(server).get('/health/ready').expect(200);
          return ping.mock.calls.length === pingsNow + 1;
        },
        { timeoutMs: 5_000, everyMs: 250 },
      );
    });

    it('has a per-address budget of its own (RATE_LIMIT_HEALTH_READY): 429 with the error body and Retry-After over it, the unauthenticated budget untouched', async () => {
      const prefix = `ready-${Date.now()}`;
      const config: AppConfig = { ...base, queuePrefix: prefix, rateLimits: { ...base.rateLimits, healthReady: 3, unauthenticatedPerAddress: 2 } };
      app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
      const statuses: number[] = [];
      let refused: request.Response | undefined;
      for (let i = 0; i < 5; i++) {
        const response = await request(app.getHttpServer()).get('/health/ready');
        statuses.push(response.status);
        if (response.status === 429) refused = response;
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(refused?.body).toMatchObject({ code: 'dpa:Request:RATE_LIMITED', metadata: { limit: 'healthReady' } });
      expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Liveness has no budget, and the probes spent none of the address's unauthenticated budget (2).
      for (let i = 0; i < 5; i++) await request(app.getHttpServer()).get('/health/live').expect(200);
      await request(app.getHttpServer()).get('/projects').expect(401);
      await request(app.getHttpServer()).get('/projects').expect(401);
    });
  });
});
