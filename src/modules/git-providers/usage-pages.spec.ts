import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@/common/config/app-config';
import { PageRefusedFailure, ProviderFailure } from './git-provider.port';
import { GitProviders } from './git-providers.service';
import { jsonValueCount } from './usage-pages';

/** A provider a tenant controls: a plain HTTP server on loopback, `handle` answering every request. */
async function server(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const http: Server = createServer(handle);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

const TIMEOUT_MS = 1_000;
const config = loadConfig({
  DATABASE_URL: 'postgresql://localhost/x',
  REDIS_URL: 'redis://localhost',
  NODE_ENV: 'test',
  GIT_SERVER_ALLOW_HTTP: 'true',
  GIT_SERVER_ALLOW_PRIVATE_HOSTS: 'true',
  GIT_PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
});
const PAGE_LIMITS = { maxResponseBytes: 64 * 1024, maxJsonValues: 1_000 };
const reader = (hostUrl: string) => {
  const usage = new GitProviders(config).client({ provider: 'GITHUB_ENTERPRISE', hostUrl }, 'ghp_token', PAGE_LIMITS).ciUsage;
  if (!usage) throw new Error('GitHub Enterprise clients read CI usage');
  return usage;
};
const failureOf = (work: Promise<unknown>) =>
  work.then(
    () => undefined,
    (error: unknown) => error,
  );
const jobsPage = (jobs: unknown[]) => JSON.stringify({ total_count: jobs.length, jobs });
const job = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  run_id: 7,
  name: 'build',
  labels: ['ubuntu-latest'],
  runner_group_name: null,
  conclusion: 'success',
  started_at: '2026-03-01T10:00:00Z',
  completed_at: '2026-03-01T10:02:00Z',
  ...extra,
});

describe('CI usage pages from a provider a tenant controls', () => {
  it('drops an answer that dribbles in at GIT_PROVIDER_TIMEOUT_MS, connection to last byte, and says it timed out', async () => {
    let closedAfterMs = -1;
    const provider = await server((req, res) => {
      const started = Date.now();
      // Headers at once, then one byte of a never-ending body every 100 ms: never idle, never done.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"total_count":1,"jobs":[');
      const drip = setInterval(() => res.write(' '), 100);
      res.on('close', () => {
        clearInterval(drip);
        closedAfterMs = Date.now() - started;
      });
    });
    try {
      const started = Date.now();
      const failure = await failureOf(reader(provider.url).workflowRunJobsPage('acme/app', '7', 1, 100));
      const tookMs = Date.now() - started;
      expect(failure).toBeInstanceOf(ProviderFailure);
      expect(failure).toMatchObject({ kind: 'timeout' });
      expect((failure as ProviderFailure).reason).toContain(`within ${TIMEOUT_MS} ms`);
      expect(tookMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(tookMs).toBeLessThan(TIMEOUT_MS + 1_000);
      // The connection itself is gone too (the provider sees it closed), not only the promise.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(closedAfterMs).toBeLessThan(TIMEOUT_MS + 1_000);
    } finally {
      await provider.close();
    }
  }, 10_000);

  it('drops a request when its signal aborts (an import past its deadline), even one already aborted', async () => {
    const provider = await server(() => undefined); // never answers
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 150);
      const started = Date.now();
      const failure = await failureOf(reader(provider.url).workflowRunsPage('acme/app', 1, 100, { signal: controller.signal }));
      expect(failure).toBeInstanceOf(ProviderFailure);
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
      const again = Date.now();
      expect(await failureOf(reader(provider.url).workflowRunsPage('acme/app', 1, 100, { signal: controller.signal }))).toBeInstanceOf(ProviderFailure);
      expect(Date.now() - again).toBeLessThan(TIMEOUT_MS / 2);
    } finally {
      await provider.close();
    }
  });

  it('refuses a page larger than the import accepts, before parsing it, as a PageRefusedFailure', async () => {
    const provider = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(jobsPage([job(1, { padding: 'x'.repeat(PAGE_LIMITS.maxResponseBytes) })]));
    });
    try {
      const usage = reader(provider.url);
      const failure = await failureOf(usage.workflowRunJobsPage('acme/app', '7', 1, 100));
      expect(failure).toBeInstanceOf(PageRefusedFailure);
      expect((failure as PageRefusedFailure).reason).toContain(`larger than ${PAGE_LIMITS.maxResponseBytes} bytes`);
      expect(usage.bytesRead).toBe(PAGE_LIMITS.maxResponseBytes);
    } finally {
      await provider.close();
    }
  });

  it('refuses a page of more JSON values than the import parses (a small text of many empty objects)', async () => {
    const provider = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(jobsPage([job(1, { steps: Array.from({ length: 2_000 }, () => ({})) })]));
    });
    try {
      const failure = await failureOf(reader(provider.url).workflowRunJobsPage('acme/app', '7', 1, 100));
      expect(failure).toBeInstanceOf(PageRefusedFailure);
      expect((failure as PageRefusedFailure).reason).toMatch(/page of \d+ JSON values, more than the 1000/);
    } finally {
      await provider.close();
    }
  });

  it('reads a page within the limits, counts its bytes, and cuts what a row keeps', async () => {
    const body = jobsPage([job(1, { name: 'n'.repeat(5_000), labels: Array.from({ length: 50 }, (_, i) => `label-${i}`) }), job(2)]);
    const provider = await server((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', link: `<${'http://' + req.headers.host}${req.url}&page=2>; rel="next"` });
      res.end(body);
    });
    try {
      const usage = reader(provider.url);
      const { jobs, hasMore } = await usage.workflowRunJobsPage('acme/app', '7', 1, 100);
      expect(hasMore).toBe(true);
      expect(jobs.map((j) => j.id)).toEqual(['1', '2']);
      expect(jobs[0].name).toHaveLength(200);
      expect(jobs[0].labels).toHaveLength(20);
      expect(usage.bytesRead).toBe(Buffer.byteLength(body));
    } finally {
      await provider.close();
    }
  });
});

describe('jsonValueCount', () => {
  it('counts objects, arrays and the members between commas, outside strings', () => {
    const count = (text: string) => jsonValueCount(Buffer.from(text));
    expect(count('{}')).toBe(1);
    expect(count('[{},{},[]]')).toBe(6);
    expect(count('{"a":1,"b":[1,2,3]}')).toBe(5);
    expect(count('{"a":"{[,,,]}","b":"\\\\","c":"\\"{,"}')).toBe(3);
    expect(count('"[,{"')).toBe(0);
  });
});
