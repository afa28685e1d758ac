import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@/common/config/app-config';
import { rateLimitDelaySeconds } from '@/modules/usage/usage-rules';
import { ProviderFailure } from './git-provider.port';
import { providerError } from './git-providers.errors';
import { GitProviders } from './git-providers.service';
import { retryAfterSeconds } from './provider-failures';

/** A provider a tenant controls: a plain HTTP server on loopback answering with `answer`. */
async function server(
  answer: (url: string, base: string) => { status?: number; headers?: Record<string, string>; body: string },
): Promise<{ url: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  let base = '';
  const http: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const { status = 200, headers = {}, body } = answer(req.url ?? '', base);
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return { url: base, hits, close: () => new Promise((resolve) => http.close(() => resolve())) };
}

const config = loadConfig({
  DATABASE_URL: 'postgresql://localhost/x',
  REDIS_URL: 'redis://localhost',
  NODE_ENV: 'test',
  GIT_SERVER_ALLOW_HTTP: 'true',
  GIT_SERVER_ALLOW_PRIVATE_HOSTS: 'true',
  GIT_PROVIDER_TIMEOUT_MS: '5000',
  GIT_PROVIDER_MAX_RESPONSE_BYTES: '1048576',
  GIT_PROVIDER_MAX_PAGES: '5',
});
const client = (hostUrl: string) => new GitProviders(config).client({ provider: 'GITHUB_ENTERPRISE', hostUrl }, 'ghp_token');

describe('A provider a tenant controls cannot exhaust the API', () => {
  it('caps a response body at GIT_PROVIDER_MAX_RESPONSE_BYTES', async () => {
    const provider = await server(() => ({ body: JSON.stringify({ id: 1, login: 'big', padding: 'x'.repeat(3 * 1024 * 1024) }) }));
    try {
      const failure = await client(provider.url)
        .currentAccount()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(ProviderFailure);
      expect(failure).toMatchObject({ kind: 'unavailable' });
      expect((failure as ProviderFailure).reason).toContain('1048576 bytes');
    } finally {
      await provider.close();
    }
  });

  it('stops following pagination after GIT_PROVIDER_MAX_PAGES pages', async () => {
    const provider = await server((url, base) => {
      const page = Number(new URL(url, base).searchParams.get('page') ?? '1');
      return {
        headers: { link: `<${base}/api/v3/user/installations?per_page=100&page=${page + 1}>; rel="next"` },
        body: JSON.stringify({ total_count: 1_000_000, installations: [{ id: page }] }),
      };
    });
    try {
      const failure = await client(provider.url)
        .userInstallationIds()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toMatchObject({ kind: 'unavailable' });
      expect((failure as ProviderFailure).reason).toContain('5 pages');
      expect(provider.hits.length).toBeLessThanOrEqual(6);
    } finally {
      await provider.close();
    }
  }, 15_000);

  it('echoes no more than a short, printable reason of a provider error', async () => {
    const provider = await server(() => ({ status: 422, body: JSON.stringify({ message: `bad \u001b[31mthing\u0007 ${'<script>'.repeat(2000)}` }) }));
    try {
      const failure = (await client(provider.url)
        .currentAccount()
        .then(
          () => undefined,
          (error: unknown) => error,
        )) as ProviderFailure;
      expect(failure.reason.length).toBeLessThanOrEqual(200);
      expect(failure.reason).not.toMatch(/[\u0000-\u001f\u007f]/);
      const answer = providerError(failure, 'checking');
      expect(answer.message.length).toBeLessThanOrEqual(300);
      expect(answer.message).not.toMatch(/[\u0000-\u001f\u007f]/);
    } finally {
      await provider.close();
    }
  });

  it('never reads Retry-After: 0 as "at once", and backs off on a rate-limit loop', () => {
    expect(retryAfterSeconds({ 'retry-after': '0' })).toBeGreaterThanOrEqual(1);
    expect(retryAfterSeconds({ 'retry-after': '-5' })).toBeGreaterThanOrEqual(1);
    const delays = Array.from({ length: 12 }, (_, hits) => rateLimitDelaySeconds(0, hits));
    expect(delays[0]).toBeGreaterThanOrEqual(5);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]);
    expect(delays[11]).toBe(3600);
    expect(rateLimitDelaySeconds(120, 0)).toBe(120);
  });
});
