import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { QueueName } from '@/common/queues/queue-names';
import { buildIfStale } from '@tools/workspace/build';
import { GitProviderEmulator } from '../support/git';
import { eventually, sleep } from '../support/eventually';
import { bootstrapTenant, type BuiltProcess, startApi, startWorker } from '../support/processes';

// A prefix of this suite's own, so other suites' workers never take its jobs (and the other way round).
const PREFIX = `dpa-obs-${randomUUID().slice(0, 8)}`;

/** The port a process logged in its start line (`metricsPort` for the API, `healthPort` for the worker). */
function loggedPort(proc: BuiltProcess, field: 'metricsPort' | 'healthPort'): number {
  const match = new RegExp(`"${field}":(\\d+)`).exec(proc.output);
  if (!match) throw new Error(`no ${field} in:\n${proc.output}`);
  return Number(match[1]);
}

/** The samples of one metric family in a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string, family: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(family)) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** Opens a request and sends only part of its body: the server holds it in flight until `finish`. */
async function halfSentRequest(base: string): Promise<{ socket: Socket; finish: () => void; response: Promise<string> }> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const body = JSON.stringify({ data: { name: 'in flight' } });
  let received = '';
  const response = new Promise<string>((resolve) => {
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('close', () => resolve(received));
    socket.on('error', () => resolve(received));
  });
  socket.write(
    `POST /projects HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  return { socket, finish: () => socket.write(body.slice(5)), response };
}

describe('Observability and lifecycle of the built processes', () => {
  let emulator: GitProviderEmulator;
  const env = () => ({ QUEUE_PREFIX: PREFIX, GITHUB_API_URL: emulator.url, GITHUB_WEB_URL: emulator.url });

  beforeAll(async () => {
    buildIfStale();
    emulator = await new GitProviderEmulator().start();
  }, 180_000);

  afterAll(async () => {
    await emulator?.stop();
  });

  describe('the API', () => {
    let api: BuiltProcess & { base: string };
    let metricsUrl: string;

    beforeAll(async () => {
      api = await startApi(env());
      metricsUrl = `http://127.0.0.1:${loggedPort(api, 'metricsPort')}/metrics`;
    }, 120_000);

    afterAll(async () => {
      await api?.stop();
    });

    it('serves Prometheus metrics on METRICS_PORT: process, HTTP by route template, queues, merge queues, usage imports, provider calls', async () => {
      const token = (await bootstrapTenant('obs')).token;
      const auth = { Authorization: `Bearer ${token}` };
      const missing = randomUUID();
      expect((await fetch(`${api.base}/projects/${missing}`, { headers: auth })).status).toBe(404);
      expect((await fetch(`${api.base}/projects`, { headers: auth })).status).toBe(200);
      const user = emulator.addUser(`obs-${randomUUID().slice(0, 8)}`);
      const created = await fetch(`${api.base}/integrations`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name: 'obs', token: user.token } }),
      });
      expect(created.status).toBe(201);

      const response = await fetch(metricsUrl);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      for (const family of [
        'process_cpu_seconds_total counter',
        'process_resident_memory_bytes gauge',
        'nodejs_eventloop_lag_seconds gauge',
        'nodejs_heap_size_used_bytes gauge',
        'dpa_http_request_duration_seconds histogram',
        'dpa_bullmq_jobs gauge',
        'dpa_merge_queues gauge',
        'dpa_merge_queue_entries gauge',
        'dpa_merge_queue_batches gauge',
        'dpa_merge_queue_entries_queued_max gauge',
        'dpa_merge_queue_entries_paths_pending gauge',
        'dpa_merge_queue_land_latency_seconds histogram',
        'dpa_merge_queue_ci_runs_per_landed_pr histogram',
        'dpa_merge_queue_prs_landed_total counter',
        'dpa_merge_queue_bisections_total counter',
        'dpa_usage_import_pages_total counter',
        'dpa_usage_import_records_total counter',
        'dpa_usage_imports gauge',
        'dpa_domain_claims_expired_total counter',
        'dpa_provider_calls_total counter',
        'dpa_provider_rate_limit_remaining gauge',
        'dpa_metrics_source_errors_total counter',
      ]) {
        expect(text).toContain(`# TYPE ${family}`);
      }
      const http = samples(text, 'dpa_http_request_duration_seconds_count');
      expect(http.get('dpa_http_request_duration_seconds_count{method="GET",route="/projects/:id",status="404"}')).toBe(1);
      expect(http.get('dpa_http_request_duration_seconds_count{method="GET",route="/projects",status="200"}')).toBe(1);
      expect(http.get('dpa_http_request_duration_seconds_count{method="POST",route="/integrations",status="201"}')).toBe(1);
      // Route templates, never raw paths: no id reaches a label.
      expect(text).not.toContain(missing);
      expect(samples(text, 'dpa_bullmq_jobs').get('dpa_bullmq_jobs{queue="merge-queues",state="waiting"}')).toBeGreaterThanOrEqual(0);
      // Every queue, in four states.
      expect([...samples(text, 'dpa_bullmq_jobs').keys()]).toHaveLength(Object.values(QueueName).length * 4);
      expect(samples(text, 'dpa_merge_queues').has('dpa_merge_queues{status="active"}')).toBe(true);
      expect(samples(text, 'dpa_merge_queue_entries').has('dpa_merge_queue_entries{status="queued"}')).toBe(true);
      expect(samples(text, 'dpa_usage_import_records_total').has('dpa_usage_import_records_total{kind="jobs"}')).toBe(true);
      expect(samples(text, 'dpa_provider_calls_total').get('dpa_provider_calls_total{provider="GITHUB",outcome="ok"}')).toBeGreaterThanOrEqual(1);
      expect(samples(text, 'dpa_provider_rate_limit_remaining').get('dpa_provider_rate_limit_remaining{provider="GITHUB"}')).toBe(4999);
      expect(samples(text, 'dpa_metrics_source_errors_total').size).toBe(0);
    }, 150_000);

    it('listens on loopback only by default (METRICS_HOST): another local address is refused', async () => {
      expect(api.output).toContain('"metricsHost":"127.0.0.1"');
      const port = loggedPort(api, 'metricsPort');
      await expect(fetch(`http://127.0.0.2:${port}/metrics`)).rejects.toThrow();
    });

    it('has no /metrics on the public port: the 404 error body', async () => {
      const response = await fetch(`${api.base}/metrics`);
      expect(response.status).toBe(404);
      const body = await response.json();
      expect(body).toMatchObject({ code: 'dpa:Request:ROUTE_NOT_FOUND', requestId: expect.any(String) });
    });

    it('the metrics listener answers nothing else: 404 and 405 with the error body', async () => {
      const base = metricsUrl.replace(/\/metrics$/, '');
      const notFound = await fetch(`${base}/projects`);
      expect(notFound.status).toBe(404);
      expect(await notFound.json()).toMatchObject({ code: 'dpa:Request:ROUTE_NOT_FOUND', requestId: expect.any(String) });
      const post = await fetch(`${base}/metrics`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(await post.json()).toMatchObject({ code: 'dpa:Request:METHOD_NOT_ALLOWED' });
    });
  });

  describe('the worker', () => {
    let worker: BuiltProcess;
    let base: string;

    beforeAll(async () => {
      worker = await startWorker(env());
      base = `http://127.0.0.1:${loggedPort(worker, 'healthPort')}`;
    }, 120_000);

    afterAll(async () => {
      await worker?.stop();
    });

    it('answers /health/live and /health/ready (Postgres and Redis) on WORKER_HEALTH_PORT', async () => {
      const live = await fetch(`${base}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ data: { status: 'ok' } });
      const ready = await fetch(`${base}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ data: { status: 'ok', checks: { database: { status: 'up' }, redis: { status: 'up' } } } });
    });

    it('serves its metrics there: process, BullMQ queues, merge queues, usage imports', async () => {
      const response = await fetch(`${base}/metrics`);
      expect(response.status).toBe(200);
      const text = await response.text();
      for (const family of [
        'process_cpu_seconds_total counter',
        'nodejs_eventloop_lag_seconds gauge',
        'dpa_bullmq_jobs gauge',
        'dpa_merge_queue_entries gauge',
        'dpa_merge_queue_land_latency_seconds histogram',
        'dpa_usage_import_pages_total counter',
        'dpa_provider_calls_total counter',
      ]) {
        expect(text).toContain(`# TYPE ${family}`);
      }
      expect(samples(text, 'dpa_bullmq_jobs').has('dpa_bullmq_jobs{queue="usage-imports",state="failed"}')).toBe(true);
      // The worker serves no API: no HTTP request histogram samples.
      expect(samples(text, 'dpa_http_request_duration_seconds_count').size).toBe(0);
    });

    it('listens on loopback only by default (WORKER_HEALTH_HOST): another local address is refused', async () => {
      expect(worker.output).toContain('"healthHost":"127.0.0.1"');
      await expect(fetch(`http://127.0.0.2:${loggedPort(worker, 'healthPort')}/health/live`)).rejects.toThrow();
    });

    it('answers anything else with the error body', async () => {
      const response = await fetch(`${base}/projects`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'dpa:Request:ROUTE_NOT_FOUND', requestId: expect.any(String) });
    });
  });

  describe('SIGTERM', () => {
    it('the API stops accepting, answers the request in flight, then exits 0', async () => {
      const api = await startApi({ ...env(), SHUTDOWN_GRACE_MS: '20000' });
      try {
        const inFlight = await halfSentRequest(api.base);
        await sleep(200);
        api.child.kill('SIGTERM');
        await sleep(700);
        expect(api.running).toBe(true);
        await expect(fetch(`${api.base}/health/live`)).rejects.toThrow();
        inFlight.finish();
        expect(await inFlight.response).toMatch(/^HTTP\/1\.1 401 /);
        expect(await api.exited()).toEqual({ code: 0, signal: null });
        expect(api.output).toContain('"msg":"api stopped"');
      } finally {
        await api.stop('SIGKILL');
      }
    }, 150_000);

    it('the API exits 1 once SHUTDOWN_GRACE_MS has passed with a request still in flight', async () => {
      const api = await startApi({ ...env(), SHUTDOWN_GRACE_MS: '1000' });
      try {
        const inFlight = await halfSentRequest(api.base);
        const signalledAt = Date.now();
        api.child.kill('SIGTERM');
        expect(await api.exited()).toEqual({ code: 1, signal: null });
        expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(900);
        expect(api.output).toContain('did not stop within the grace period');
        inFlight.socket.destroy();
      } finally {
        await api.stop('SIGKILL');
      }
    }, 150_000);

    it('the worker finishes the job in flight (a usage import on a slow provider), answering 503 to readiness meanwhile, then exits 0', async () => {
      const api = await startApi(env());
      const worker = await startWorker({ ...env(), SHUTDOWN_GRACE_MS: '30000' });
      const health = `http://127.0.0.1:${loggedPort(worker, 'healthPort')}`;
      try {
        const auth = { Authorization: `Bearer ${(await bootstrapTenant('obs')).token}`, 'Content-Type': 'application/json' };
        const post = async (path: string, data: unknown) => {
          const response = await fetch(`${api.base}${path}`, { method: 'POST', headers: auth, body: JSON.stringify({ data }) });
          return { status: response.status, body: (await response.json()) as { data: { id: string } } };
        };
        const login = `obs-${randomUUID().slice(0, 8)}`;
        const user = emulator.addUser(login);
        emulator.addRepository(login, 'slow');
        emulator.addWorkflowRuns(login, 'slow', { count: 4, jobsPerRun: 1, seed: 3 });
        const integration = await post('/integrations', { provider: 'GITHUB', authMethod: 'API_TOKEN', name: 'slow', token: user.token });
        expect(integration.status).toBe(201);
        const source = await post('/code-sources', { integrationId: integration.body.data.id, repository: `${login}/slow` });
        expect(source.status).toBe(201);
        // Each provider request now takes 700 ms: the import (a page of runs, then each run's jobs) runs for seconds.
        emulator.knobs.delayMs = 700;
        expect((await fetch(`${api.base}/scm/actions/usage/import`, { method: 'POST', headers: { Authorization: auth.Authorization } })).status).toBe(202);
        const importRow = async () => {
          const response = await fetch(`${api.base}/scm/actions/usage/imports?limit=10`, { headers: auth });
          return ((await response.json()) as { data: { status: string; runsImported: number }[] }).data[0];
        };
        await eventually('the import running', async () => (await importRow())?.status === 'RUNNING', { timeoutMs: 10_000, everyMs: 50 });
        worker.child.kill('SIGTERM');
        await sleep(300);
        const ready = await fetch(`${health}/health/ready`);
        expect(ready.status).toBe(503);
        expect(await ready.json()).toMatchObject({ code: 'dpa:Server:SERVICE_UNAVAILABLE', message: 'Not ready: the worker is shutting down.' });
        expect(await worker.exited()).toEqual({ code: 0, signal: null });
        expect(worker.output).toContain('"msg":"worker stopped"');
        // Finished, not abandoned: the import that was running when the signal came succeeded.
        expect(await importRow()).toMatchObject({ status: 'SUCCEEDED', runsImported: 4 });
      } finally {
        emulator.knobs.delayMs = 0;
        await worker.stop('SIGKILL');
        await api.stop();
      }
    }, 240_000);
  });
});
