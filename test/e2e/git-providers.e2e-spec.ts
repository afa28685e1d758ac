import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import request from 'supertest';
import { createTenant, type TestTenant } from '../support/factories';
import { createGitTestApp, GitProviderEmulator } from '../support/git';
import { OPEN_REDIRECT_PROBES } from '../support/open-redirect-probes';

describe('Git providers: integrations, OAuth callback, code sources (against the emulator)', () => {
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let tenant: TestTenant;
  let octocat: { token: string };
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    emulator = await new GitProviderEmulator().start();
    octocat = emulator.addUser('octocat');
    emulator.addUser('hubot');
    emulator.addRepository('octocat', 'hello-world', { description: 'My first repository', collaborators: ['octocat', 'hubot', 'monalisa'] });
    emulator.addRepository('acme', 'private-thing', { private: true, collaborators: ['acme'] });
    emulator.browserUser = 'octocat';
    app = await createGitTestApp(emulator, { timeoutMs: 1000 });
    tenant = await createTenant(app, 'git');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await emulator?.stop();
  });

  afterEach(() => Object.assign(emulator.knobs, { down: false, delayMs: 0, rateLimited: false }));

  const tokenIntegration = (token: string, name = `gh ${Date.now()}-${Math.random()}`) => http().post('/integrations').set(tenant.auth).send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name, token } });

  describe('API_TOKEN integrations', () => {
    it('validates the token with the provider, stores it encrypted and never returns it', async () => {
      const created = await tokenIntegration(octocat.token).expect(201);
      expect(created.body.data).toMatchObject({ provider: 'GITHUB', authMethod: 'API_TOKEN', status: 'ACTIVE', externalAccountName: 'octocat' });
      expect(created.body.data.externalAccountId).toMatch(/^\d+$/);
      expect(created.body.data.lastValidatedAt).toBeDefined();
      expect(JSON.stringify(created.body)).not.toContain(octocat.token);
      const got = await http().get(`/integrations/${created.body.data.id}`).set(tenant.auth).expect(200);
      expect(JSON.stringify(got.body)).not.toContain(octocat.token);
      const db = new Client({ connectionString: process.env.DATABASE_URL });
      await db.connect();
      try {
        const row = (await db.query('SELECT * FROM "Integration" WHERE id = $1', [created.body.data.id])).rows[0];
        expect(row.encryptedCredentials).toBeInstanceOf(Buffer);
        expect(JSON.stringify(row)).not.toContain(octocat.token);
        expect(row.encryptedCredentials.toString('latin1')).not.toContain(octocat.token);
        expect(row.encryptedCredentials.toString('latin1')).not.toContain(octocat.token.slice(4, 20));
      } finally {
        await db.end();
      }
    });

    it('refuses a bad token with the provider reason (422) and stores nothing', async () => {
      const name = `bad ${Date.now()}`;
      const response = await tokenIntegration('ghp_not_a_real_token', name).expect(422);
      expect(response.body.code).toBe('dpa:GitProvider:CREDENTIALS_REJECTED');
      expect(response.body.message).toContain('Bad credentials');
      const list = await http().get('/integrations?limit=100').set(tenant.auth).expect(200);
      expect(list.body.data.map((i: { name: string }) => i.name)).not.toContain(name);
    });

    it('answers 502 when the provider is down, and 502 when it is slower than the timeout; nothing stored', async () => {
      const before = (await http().get('/integrations').set(tenant.auth).expect(200)).body.meta.totalCount;
      emulator.knobs.down = true;
      expect((await tokenIntegration(octocat.token).expect(502)).body.code).toBe('dpa:GitProvider:UNAVAILABLE');
      emulator.knobs.down = false;
      emulator.knobs.delayMs = 2500;
      expect((await tokenIntegration(octocat.token).expect(502)).body.code).toBe('dpa:GitProvider:TIMEOUT');
      expect((await http().get('/integrations').set(tenant.auth).expect(200)).body.meta.totalCount).toBe(before);
    });

    it('answers 503 with Retry-After when the provider rate-limits', async () => {
      emulator.knobs.rateLimited = true;
      const response = await tokenIntegration(octocat.token).expect(503);
      expect(response.body.code).toBe('dpa:GitProvider:RATE_LIMITED');
      expect(response.headers['retry-after']).toBe('42');
    });

    it('validates again: NEEDS_ATTENTION when the token is revoked, ACTIVE again when it works', async () => {
      const user = emulator.addUser(`val-${Date.now()}`);
      const created = await tokenIntegration(user.token).expect(201);
      const id = created.body.data.id;
      emulator.revokeToken(user.token);
      const refused = await http().post(`/integrations/${id}/validate`).set(tenant.auth).expect(200);
      expect(refused.body.data).toMatchObject({ status: 'NEEDS_ATTENTION', lastError: 'Bad credentials' });
      emulator.knobs.down = true;
      await http().post(`/integrations/${id}/validate`).set(tenant.auth).expect(502);
    });
  });

  describe('code sources and the repository object', () => {
    let integrationId: string;

    beforeAll(async () => {
      integrationId = (await tokenIntegration(octocat.token).expect(201)).body.data.id;
    });

    it('connects a GitHub repository and maps the Repository object field by field', async () => {
      const source = await http().post('/code-sources').set(tenant.auth).send({ data: { integrationId, repository: 'octocat/hello-world' } }).expect(201);
      expect(source.body.data).toMatchObject({ provider: 'GITHUB', integrationId, repository: 'octocat/hello-world' });
      const repo = await http().get(`/code-source/${source.body.data.id}/repository`).set(tenant.auth).expect(200);
      expect(repo.body.data).toEqual({
        collaborators: { totalCount: 3 },
        defaultBranch: { name: 'main' },
        defaultBranchRef: { name: 'main' },
        description: 'My first repository',
        foreignId: expect.stringMatching(/^\d+$/),
        isInNamespace: true,
        isPrivate: false,
        name: 'hello-world',
        nameWithOwner: 'octocat/hello-world',
        owner: { login: 'octocat' },
        pushedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        url: `${emulator.url}/octocat/hello-world`,
      });
      // Deleting the integration is refused while the code source uses it.
      const inUse = await http().delete(`/integrations/${integrationId}`).set(tenant.auth).expect(409);
      expect(inUse.body.code).toBe('dpa:Integration:IN_USE');
      expect(inUse.body.details[0].items[0]).toContain(source.body.data.id);
    });

    it('maps a provider 404 to our 404 and an invisible private repository likewise', async () => {
      expect((await http().post('/code-sources').set(tenant.auth).send({ data: { integrationId, repository: 'octocat/nope' } }).expect(404)).body.code).toBe('dpa:GitProvider:REPOSITORY_NOT_FOUND');
      await http().post('/code-sources').set(tenant.auth).send({ data: { integrationId, repository: 'acme/private-thing' } }).expect(404);
    });

    it('turns a refused token into a 424 and the integration into NEEDS_ATTENTION; rate limits into 503', async () => {
      const user = emulator.addUser(`rot-${Date.now()}`);
      emulator.addRepository(user.user.login, 'repo');
      const id = (await tokenIntegration(user.token).expect(201)).body.data.id;
      const source = await http().post('/code-sources').set(tenant.auth).send({ data: { integrationId: id, repository: `${user.user.login}/repo` } }).expect(201);
      emulator.knobs.rateLimited = true;
      const limited = await http().get(`/code-source/${source.body.data.id}/repository`).set(tenant.auth).expect(503);
      expect(limited.headers['retry-after']).toBe('42');
      emulator.knobs.rateLimited = false;
      emulator.revokeToken(user.token);
      const refused = await http().get(`/code-source/${source.body.data.id}/repository`).set(tenant.auth).expect(424);
      expect(refused.body.code).toBe('dpa:GitProvider:INTEGRATION_NEEDS_ATTENTION');
      expect((await http().get(`/integrations/${id}`).set(tenant.auth).expect(200)).body.data.status).toBe('NEEDS_ATTENTION');
    });

    it('LOCAL_GIT: connects a bare repository by path and maps what git knows', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'local-git-'));
      try {
        const path = join(dir, 'demo.git');
        execFileSync('git', ['init', '--bare', '--quiet', path]);
        execFileSync('git', ['--git-dir', path, 'symbolic-ref', 'HEAD', 'refs/heads/trunk']);
        const env = { ...process.env, GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };
        const tree = execFileSync('git', ['--git-dir', path, 'mktree'], { input: '' }).toString().trim();
        const commit = execFileSync('git', ['--git-dir', path, 'commit-tree', tree, '-m', 'x'], { env }).toString().trim();
        execFileSync('git', ['--git-dir', path, 'update-ref', 'refs/heads/trunk', commit]);
        const source = await http().post('/code-sources').set(tenant.auth).send({ data: { provider: 'LOCAL_GIT', repository: path } }).expect(201);
        expect(source.body.data).toMatchObject({ provider: 'LOCAL_GIT', repository: path });
        const repo = await http().get(`/code-source/${source.body.data.id}/repository`).set(tenant.auth).expect(200);
        expect(repo.body.data).toMatchObject({ name: 'demo', nameWithOwner: 'local/demo', owner: { login: 'local' }, defaultBranch: { name: 'trunk' }, defaultBranchRef: { name: 'trunk' }, isPrivate: true, isInNamespace: true, collaborators: { totalCount: 1 }, url: `file://${path}` });
        await http().post('/code-sources').set(tenant.auth).send({ data: { provider: 'LOCAL_GIT', repository: join(dir, 'missing.git') } }).expect(404);
        await http().post('/code-sources').set(tenant.auth).send({ data: { provider: 'LOCAL_GIT', repository: 'relative/path' } }).expect(422);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('OAuth / app installation flow and GET /scm/callback', () => {
    const start = async (authMethod: 'OAUTH' | 'APP_INSTALLATION', redirectUrl = '/settings/git') => {
      const response = await http().post('/integrations').set(tenant.auth).send({ data: { provider: 'GITHUB', authMethod, name: `oauth ${Date.now()}-${Math.random()}`, redirectUrl } }).expect(201);
      const url = new URL(response.body.data.authorizeUrl);
      return { id: response.body.data.id as string, state: url.searchParams.get('state') as string, url, body: response.body.data };
    };
    const callback = (query: Record<string, string>) => request(app.getHttpServer()).get(`/scm/callback?${new URLSearchParams(query)}`);

    it('runs the whole OAuth flow: start, callback, integration ACTIVE, state single use', async () => {
      const flow = await start('OAUTH');
      expect(flow.body.status).toBe('INITIATED');
      expect(flow.url.pathname).toBe('/login/oauth/authorize');
      expect(flow.url.searchParams.get('redirect_uri')).toBe('http://api.test/scm/callback');
      const code = emulator.issueCode('octocat');
      const done = await callback({ code, state: flow.state }).expect(302);
      expect(done.headers.location).toBe('/settings/git');
      const integration = await http().get(`/integrations/${flow.id}`).set(tenant.auth).expect(200);
      expect(integration.body.data).toMatchObject({ status: 'ACTIVE', externalAccountName: 'octocat' });
      // Replayed state: 400, no redirect, no token exchange.
      const exchanges = emulator.requests.filter((r) => r.path === '/login/oauth/access_token').length;
      const replay = await callback({ code: emulator.issueCode('octocat'), state: flow.state }).expect(400);
      expect(replay.body.code).toBe('dpa:OAuth:INVALID_STATE');
      expect(replay.headers.location).toBeUndefined();
      expect(emulator.requests.filter((r) => r.path === '/login/oauth/access_token').length).toBe(exchanges);
    });

    it('runs the app installation flow and confirms the installation through the provider', async () => {
      const installation = emulator.addInstallation('octocat', ['octocat']);
      const flow = await start('APP_INSTALLATION');
      expect(flow.url.pathname).toBe(`/apps/${emulator.appSlug}/installations/new`);
      await callback({ code: emulator.issueCode('octocat'), state: flow.state, installation_id: String(installation.id), setup_action: 'install' }).expect(302);
      expect((await http().get(`/integrations/${flow.id}`).set(tenant.auth).expect(200)).body.data.status).toBe('ACTIVE');
    });

    it('refuses an installation the authorizing user cannot access', async () => {
      const theirs = emulator.addInstallation('hubot', ['hubot']);
      const flow = await start('APP_INSTALLATION');
      const done = await callback({ code: emulator.issueCode('octocat'), state: flow.state, installation_id: String(theirs.id), setup_action: 'install' }).expect(302);
      expect(done.headers.location).toBe('/settings/git?integration_error=installation_not_accessible');
      const integration = (await http().get(`/integrations/${flow.id}`).set(tenant.auth).expect(200)).body.data;
      expect(integration.status).toBe('FAILED');
      expect(integration.lastError).toContain('installation_not_accessible');
    });

    it('records a failed token exchange and a provider error, redirecting with a flag', async () => {
      const bad = await start('OAUTH');
      expect((await callback({ code: 'not-a-code', state: bad.state }).expect(302)).headers.location).toBe('/settings/git?integration_error=token_exchange_failed');
      expect((await http().get(`/integrations/${bad.id}`).set(tenant.auth).expect(200)).body.data.status).toBe('FAILED');
      const denied = await start('OAUTH', 'https://app.example.com/back');
      const location = (await callback({ error: 'access_denied', error_description: 'The user has denied your application access.', state: denied.state }).expect(302)).headers.location;
      expect(location).toBe('https://app.example.com/back?integration_error=access_denied');
      expect((await http().get(`/integrations/${denied.id}`).set(tenant.auth).expect(200)).body.data).toMatchObject({ status: 'FAILED', lastError: expect.stringContaining('access_denied') });
    });

    it('answers 400 without redirecting for missing, unknown, expired and replayed state', async () => {
      const exchanges = () => emulator.requests.filter((r) => r.path === '/login/oauth/access_token').length;
      const before = exchanges();
      const expired = await start('OAUTH');
      const db = new Client({ connectionString: process.env.DATABASE_URL });
      await db.connect();
      await db.query(`UPDATE "OAuthState" SET "expiresAt" = now() - interval '1 second' WHERE "integrationId" = $1`, [expired.id]);
      await db.end();
      for (const query of [{ code: "x" }, { code: "x", state: "unknown-state" }, { code: "x", state: "" }, { code: emulator.issueCode("octocat"), state: expired.state }] as Record<string, string>[]) {
        const response = await callback(query).expect(400);
        expect(response.body.code).toBe('dpa:OAuth:INVALID_STATE');
        expect(response.headers.location).toBeUndefined();
      }
      expect(exchanges()).toBe(before);
    });

    it(`refuses every open-redirect probe (${OPEN_REDIRECT_PROBES.length}) when the flow starts, and the callback accepts no target of its own`, async () => {
      const accepted: string[] = [];
      for (const probe of OPEN_REDIRECT_PROBES) {
        const response = await http().post('/integrations').set(tenant.auth).send({ data: { provider: 'GITHUB', authMethod: 'OAUTH', name: `probe ${Math.random()}`, redirectUrl: probe } });
        if (response.status !== 422 && response.status !== 400) accepted.push(`${JSON.stringify(probe)} -> ${response.status}`);
      }
      process.stdout.write(`open-redirect probes: ${OPEN_REDIRECT_PROBES.length} sent, ${accepted.length} accepted\n`);
      expect(accepted).toEqual([]);
      const flow = await start('OAUTH');
      for (const name of ['redirect', 'redirect_uri', 'next', 'return_to']) {
        await callback({ code: 'x', state: flow.state, [name]: '//evil.example' }).expect(400);
      }
    });
  });
});
