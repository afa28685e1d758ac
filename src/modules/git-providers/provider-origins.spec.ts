import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@/common/config/app-config';
import { ProviderFailure } from './git-provider.port';
import { GitProviders } from './git-providers.service';

/** A plain HTTP server on loopback answering every request with `answer`; counts what it was asked. */
async function server(
  answer: (url: string) => { status?: number; headers?: Record<string, string>; body: unknown },
): Promise<{ url: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const http: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const { status = 200, headers = {}, body } = answer(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, hits, close: () => new Promise((resolve) => http.close(() => resolve())) };
}

const config = loadConfig({
  DATABASE_URL: 'postgresql://localhost/x',
  REDIS_URL: 'redis://localhost',
  NODE_ENV: 'test',
  GIT_SERVER_ALLOW_HTTP: 'true',
  GIT_SERVER_ALLOW_PRIVATE_HOSTS: 'true',
  GIT_PROVIDER_TIMEOUT_MS: '2000',
});

describe('URLs a provider hands back (Link pagination) stay on the provider origin', () => {
  it('refuses a Link "next" page on another origin, with private hosts allowed: the token never leaves for it', async () => {
    const elsewhere = await server(() => ({ body: { total_count: 2, installations: [{ id: 2 }] } }));
    const provider = await server(() => ({
      headers: { link: `<${elsewhere.url}/api/v3/user/installations?page=2>; rel="next", <${elsewhere.url}/api/v3/user/installations?page=2>; rel="last"` },
      body: { total_count: 2, installations: [{ id: 1 }] },
    }));
    try {
      const client = new GitProviders(config).client({ provider: 'GITHUB_ENTERPRISE', hostUrl: provider.url }, 'ghp_secret');
      const failure = await client.userInstallationIds().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ProviderFailure);
      expect(failure).toMatchObject({ kind: 'refused' });
      expect(provider.hits).toHaveLength(1);
      expect(elsewhere.hits).toEqual([]);
    } finally {
      await Promise.all([provider.close(), elsewhere.close()]);
    }
  });

  it('follows a Link on the same origin', async () => {
    const provider = await server((url) =>
      url.includes('page=2')
        ? { body: { total_count: 2, installations: [{ id: 2 }] } }
        : { headers: { link: `<${provider.url}/api/v3/user/installations?page=2>; rel="next"` }, body: { total_count: 2, installations: [{ id: 1 }] } },
    );
    try {
      const client = new GitProviders(config).client({ provider: 'GITHUB_ENTERPRISE', hostUrl: provider.url }, 'ghp_secret');
      expect(await client.userInstallationIds()).toEqual(['1', '2']);
    } finally {
      await provider.close();
    }
  });

  it('refuses a Link to a metadata address even on a plain-IP origin', async () => {
    const provider = await server(() => ({
      headers: { link: '<http://[fd00:ec2::254]/latest/meta-data/?page=2>; rel="next"' },
      body: { total_count: 2, installations: [{ id: 1 }] },
    }));
    try {
      const client = new GitProviders(config).client({ provider: 'GITHUB_ENTERPRISE', hostUrl: provider.url }, 'ghp_secret');
      await expect(client.userInstallationIds()).rejects.toMatchObject({ kind: 'refused' });
    } finally {
      await provider.close();
    }
  });
});
