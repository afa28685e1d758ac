import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { getQueueToken } from '@nestjs/bullmq';
import { Controller, Get } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ApiOkResponse, ApiServiceUnavailableResponse } from '@nestjs/swagger';
import { Public } from '@/common/auth/auth.decorators';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { loadConfig, type AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { applyServerTimeouts } from '@/common/http/server-timeouts';
import { READINESS_CACHE_MS } from '@/common/lifecycle/readiness';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RedisService } from '@/common/redis/redis.module';
import { createTestApp, createTestWorker } from '../support/app';
import { eventuallyPasses } from '../support/eventually';
import { createTenant, type TestTenant } from '../support/factories';
import { TcpProxy } from '../support/tcp-proxy';
import { MaintenanceJob, QueueName } from '@/common/queues/queue-names';

/** Routes that need exactly one dependency each, as a job enqueue or a transaction would. */
@Public()
@Controller('fault-probe')
class FaultProbeController {
  constructor(
    private readonly redis: RedisService,
    private readonly prisma: PrismaService,
  ) {}

  @Get('redis')
  @ApiOkResponse({ schema: { type: 'object', properties: { data: { type: 'object', properties: { value: { type: 'integer' } } } } } })
  @ApiServiceUnavailableResponse({ type: ErrorBodyDto })
  async redisProbe() {
    return { data: { value: await this.redis.client.incr('dpa-test:fault-probe') } };
  }

  @Get('transaction')
  @ApiOkResponse({ schema: { type: 'object', properties: { data: { type: 'object', properties: { organizations: { type: 'integer' } } } } } })
  @ApiServiceUnavailableResponse({ type: ErrorBodyDto })
  async transactionProbe() {
    return { data: await this.prisma.$transaction(async (tx) => ({ organizations: await tx.organization.count() })) };
  }
}

const base = loadConfig();
const TIMEOUTS = {
  databasePoolSize: 3,
  databaseConnectTimeoutMs: 1_000,
  databaseQueryTimeoutMs: 1_000,
  databaseTransactionTimeoutMs: 2_000,
  redisConnectTimeoutMs: 1_000,
  redisCommandTimeoutMs: 500,
};
// The slowest path to an answer: a statement on a connection that stops answering (query timeout
// plus the client's grace), or an acquire that waits for the pool then connects (connect timeout).
const DB_BOUND_MS = TIMEOUTS.databaseQueryTimeoutMs + 500 + 1_500;
const REDIS_BOUND_MS = TIMEOUTS.redisCommandTimeoutMs + 1_000;
const timings: string[] = [];

async function timed(label: string, send: () => request.Test): Promise<{ response: request.Response; ms: number }> {
  const started = Date.now();
  const response = await send();
  const ms = Date.now() - started;
  timings.push(`${label}: ${response.status} in ${ms} ms`);
  return { response, ms };
}

function expectUnavailable(response: request.Response, dependency: string): void {
  expect(response.status).toBe(503);
  expect(response.body).toMatchObject({ code: 'dpa:Server:SERVICE_UNAVAILABLE', metadata: { dependency } });
  expect(typeof response.body.message).toBe('string');
  expect(response.body.requestId).toBeDefined();
  expect(response.headers['retry-after']).toMatch(/^\d+$/);
}

/** Polls until `check` passes: recovery is asynchronous (reconnects), but must come without a restart. */
async function recovered(label: string, check: () => Promise<void>, withinMs = 10_000): Promise<void> {
  timings.push(`${label}: recovered after ${await eventuallyPasses(label, check, { timeoutMs: withinMs })} ms`);
}

/** GET /health/ready reuses one answer per READINESS_CACHE_MS in a process: an outage shows once it has passed. */
const pastReadinessCache = () => new Promise((resolve) => setTimeout(resolve, READINESS_CACHE_MS + 50));

describe('Faults: Postgres and Redis behind a proxy that black-holes, refuses and resumes', () => {
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let app: NestExpressApplication;
  let tenant: TestTenant;
  let http: () => ReturnType<typeof request>;

  beforeAll(async () => {
    pgProxy = await TcpProxy.start(base.databaseUrl);
    redisProxy = await TcpProxy.start(base.redisUrl);
    const config: AppConfig = { ...base, ...TIMEOUTS, databaseUrl: pgProxy.rewrite(base.databaseUrl), redisUrl: redisProxy.rewrite(base.redisUrl) };
    app = await createTestApp({ controllers: [FaultProbeController] }, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
    tenant = await createTenant(app, 'faults');
    const server = app.getHttpServer();
    http = () => request(server);
    await recovered('initial readiness', async () => {
      await http().get('/health/ready').expect(200);
    });
  });

  afterAll(async () => {
    await pgProxy.resume();
    await redisProxy.resume();
    await app?.close();
    await pgProxy.close();
    await redisProxy.close();
    console.log(
      `Fault timings (query timeout ${TIMEOUTS.databaseQueryTimeoutMs} ms, connect ${TIMEOUTS.databaseConnectTimeoutMs} ms, Redis command ${TIMEOUTS.redisCommandTimeoutMs} ms):\n  ${timings.join('\n  ')}`,
    );
  });

  afterEach(async () => {
    await pgProxy.resume();
    await redisProxy.resume();
  });

  const listProjects = () => http().get('/projects').set(tenant.auth);

  it('Postgres black-holed: requests answer 503 within the timeout, even more than the pool holds, and recover after resume', async () => {
    await listProjects().expect(200);
    pgProxy.pause();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => timed(`postgres paused: GET /projects #${i + 1}`, listProjects)));
    for (const { response, ms } of results) {
      expectUnavailable(response, 'postgres');
      expect(ms).toBeLessThanOrEqual(DB_BOUND_MS);
    }
    const tx = await timed('postgres paused: transaction', () => http().get('/fault-probe/transaction'));
    expectUnavailable(tx.response, 'postgres');
    expect(tx.ms).toBeLessThanOrEqual(DB_BOUND_MS);
    await pastReadinessCache();
    const ready = await timed('postgres paused: GET /health/ready', () => http().get('/health/ready'));
    expect(ready.response.status).toBe(503);
    expect(ready.response.headers['retry-after']).toMatch(/^\d+$/);

    await pgProxy.resume();
    await recovered('postgres resumed: GET /projects', async () => {
      await listProjects().expect(200);
    });
    await http().get('/fault-probe/transaction').expect(200);
    await recovered('postgres resumed: GET /health/ready', async () => {
      await http().get('/health/ready').expect(200);
    });
  });

  it('Postgres refusing connections: 503 with Retry-After, not 500, then recovery', async () => {
    await listProjects().expect(200);
    await pgProxy.refuse();
    for (let i = 1; i <= 3; i++) {
      const { response, ms } = await timed(`postgres refused: GET /projects #${i}`, listProjects);
      expectUnavailable(response, 'postgres');
      expect(ms).toBeLessThanOrEqual(DB_BOUND_MS);
    }
    const tx = await timed('postgres refused: transaction', () => http().get('/fault-probe/transaction'));
    expectUnavailable(tx.response, 'postgres');

    await pgProxy.resume();
    await recovered('postgres re-accepting: GET /projects', async () => {
      await listProjects().expect(200);
    });
    await http().get('/fault-probe/transaction').expect(200);
  });

  for (const mode of ['paused', 'refused'] as const) {
    it(`Redis ${mode}: Redis work answers 503, reads go on, a revocation answers 204 and holds; recovery after resume`, async () => {
      const victim = await createTenant(app, 'faults-victim');
      await http().get('/projects').set(victim.auth).expect(200);
      await http().get('/fault-probe/redis').expect(200);

      const consoleErrors = jest.spyOn(console, 'error');
      if (mode === 'paused') redisProxy.pause();
      else await redisProxy.refuse();

      const probe = await timed(`redis ${mode}: Redis command`, () => http().get('/fault-probe/redis'));
      expectUnavailable(probe.response, 'redis');
      expect(probe.ms).toBeLessThanOrEqual(REDIS_BOUND_MS);

      const read = await timed(`redis ${mode}: GET /projects`, listProjects);
      expect(read.response.status).toBe(200);

      const revoke = await timed(`redis ${mode}: DELETE /api-keys/{id}`, () => http().delete(`/api-keys/${victim.apiKeyId}`).set(victim.auth));
      expect(revoke.response.status).toBe(204);
      expect(revoke.ms).toBeLessThanOrEqual(REDIS_BOUND_MS);
      const refused = await http().get('/projects').set(victim.auth);
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('dpa:Auth:TOKEN_REVOKED');

      await pastReadinessCache();
      const ready = await timed(`redis ${mode}: GET /health/ready`, () => http().get('/health/ready'));
      expect(ready.response.status).toBe(503);

      // Outages are logged once per state change (structured, through the logger), not printed per retry.
      expect(consoleErrors.mock.calls.filter((args) => /ECONNREFUSED|ECONNRESET|Socket timeout|Command timed out/.test(args.map(String).join(' ')))).toEqual(
        [],
      );
      consoleErrors.mockRestore();

      await redisProxy.resume();
      await recovered(`redis ${mode} then resumed: Redis command`, async () => {
        await http().get('/fault-probe/redis').expect(200);
      });
      await recovered(`redis ${mode} then resumed: GET /health/ready`, async () => {
        await http().get('/health/ready').expect(200);
      });
      await listProjects().expect(200);
      await http().get('/projects').set(victim.auth).expect(401);
    });
  }
});

describe('Slow clients', () => {
  it('closes connections that never finish their headers after HTTP_HEADERS_TIMEOUT_MS', async () => {
    const config = { ...base, httpHeadersTimeoutMs: 1_000, httpRequestTimeoutMs: 2_000 };
    const app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
    const server = app.getHttpServer();
    applyServerTimeouts(server, config);
    await app.listen(0, '127.0.0.1');
    const { port } = server.address() as net.AddressInfo;
    const count = 200;
    const started = Date.now();
    try {
      const closedAfter = await Promise.all(
        Array.from(
          { length: count },
          () =>
            new Promise<{ ms: number; status: string }>((resolve) => {
              let first = '';
              const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n'));
              socket.on('data', (chunk) => (first ||= String(chunk).split('\r\n')[0]));
              socket.on('error', () => undefined);
              socket.on('close', () => resolve({ ms: Date.now() - started, status: first }));
            }),
        ),
      );
      const slowest = Math.max(...closedAfter.map((c) => c.ms));
      timings.push(
        `slow clients: ${count} half-open requests all closed after ${slowest} ms (headersTimeout ${config.httpHeadersTimeoutMs} ms), answered ${closedAfter[0].status}`,
      );
      console.log(timings.at(-1));
      expect(slowest).toBeLessThanOrEqual(config.httpHeadersTimeoutMs + 1_500);
      expect(closedAfter.every((c) => c.status === '' || c.status.startsWith('HTTP/1.1 408'))).toBe(true);
      // A complete request on the same server is still served.
      await request(server).get('/health/live').expect(200);
    } finally {
      await app.close();
    }
  });
});

describe('Worker: Redis loses its data', () => {
  it('re-creates the maintenance job scheduler when its connection is ready again, without a restart', async () => {
    const redisProxy = await TcpProxy.start(base.redisUrl);
    // A prefix of its own: deleting this test's keys stands in for a Redis that restarted empty.
    const config: AppConfig = { ...base, ...TIMEOUTS, queuePrefix: `dpa-fault-${randomUUID().slice(0, 8)}`, redisUrl: redisProxy.rewrite(base.redisUrl) };
    const worker = await createTestWorker(config);
    const queue = worker.get<Queue>(getQueueToken(QueueName.Maintenance));
    const direct = worker.get(RedisService).client.duplicate({ host: new URL(base.redisUrl).hostname, port: Number(new URL(base.redisUrl).port) });
    try {
      expect(await queue.getJobScheduler(MaintenanceJob.PurgeExpiredOAuthStates)).toBeDefined();
      await redisProxy.refuse();
      const keys = await direct.keys(`${config.queuePrefix}:*`);
      expect(keys.length).toBeGreaterThan(0);
      await direct.del(...keys);
      await redisProxy.resume();
      const started = Date.now();
      await recovered('worker: scheduler re-created after Redis lost its data', async () => {
        expect(await queue.getJobScheduler(MaintenanceJob.PurgeExpiredOAuthStates)).toBeDefined();
      });
      console.log(`worker: scheduler re-created ${Date.now() - started} ms after Redis came back`);
    } finally {
      await worker.close();
      const left = await direct.keys(`${config.queuePrefix}:*`);
      if (left.length > 0) await direct.del(...left);
      direct.disconnect();
      await redisProxy.close();
    }
  });
});
