import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import request from 'supertest';
import { Writable } from 'node:stream';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppLogger, createRootLogger } from '@/common/logging/request-logger';
import { PrismaService } from '@/common/prisma/prisma.service';
import { createTestApp } from '../support/app';
import { createMember, createTenant, type TestTenant } from '../support/factories';
import { createGitTestApp, gitTestConfig, GitProviderEmulator } from '../support/git';
import { OAuthTestBrowser } from '../support/oauth-browser';
import { OPEN_REDIRECT_PROBES } from '../support/open-redirect-probes';

describe('Git providers: integrations, OAuth callback, code sources (against the emulator)', () => {
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let tenant: TestTenant;
  let octocat: { token: string };
  const http = () => request(app.getHttpServer());
  const prisma = () => app.get(PrismaService, { strict: false });

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

  const tokenIntegration = (token: string, name = `gh ${Date.now()}-${Math.random()}`) =>
    http()
      .post('/integrations')
      .set(tenant.auth)
      .send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name, token } });

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

    it('issue 41: GitHub at a host that does not resolve is a 502 UNAVAILABLE with nothing stored, logged without the logger throwing', async () => {
      // The real logger (tests otherwise log nothing): logging the provider's failure threw in pino's error serializer, and the answer became a 500.
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      });
      const base = gitTestConfig(emulator);
      const offline = await createTestApp({}, (builder) =>
        builder
          .overrideProvider(APP_CONFIG)
          .useValue({
            ...base,
            git: { ...base.git, github: { ...base.git.github, apiUrl: 'http://nonexistent.invalid', webUrl: 'http://nonexistent.invalid' } },
          })
          .overrideProvider(AppLogger)
          .useValue(new AppLogger(createRootLogger('info', sink))),
      );
      try {
        const who = await createTenant(offline, 'offline');
        const name = `offline ${Date.now()}`;
        const response = await request(offline.getHttpServer())
          .post('/integrations')
          .set(who.auth)
          .send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name, token: 'ghp_offline' } });
        expect([response.status, response.body.code]).toEqual([502, 'dpa:GitProvider:UNAVAILABLE']);
        expect(response.body.metadata).toBeUndefined();
        const list = await request(offline.getHttpServer()).get('/integrations').set(who.auth).expect(200);
        expect(list.body.meta.totalCount).toBe(0);
        const failed = lines.find((line) => line.msg === 'request failed' && line.requestId === response.body.requestId);
        expect(failed).toMatchObject({ level: 50, code: 'dpa:GitProvider:UNAVAILABLE', err: { type: 'AppError' } });
        expect(JSON.stringify(lines)).not.toContain('not extensible');
        expect(JSON.stringify(lines)).not.toContain('ghp_offline');
      } finally {
        await offline.close();
      }
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
      const source = await http()
        .post('/code-sources')
        .set(tenant.auth)
        .send({ data: { integrationId, repository: 'octocat/hello-world' } })
        .expect(201);
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
      expect(
        (
          await http()
            .post('/code-sources')
            .set(tenant.auth)
            .send({ data: { integrationId, repository: 'octocat/nope' } })
            .expect(404)
        ).body.code,
      ).toBe('dpa:GitProvider:REPOSITORY_NOT_FOUND');
      await http()
        .post('/code-sources')
        .set(tenant.auth)
        .send({ data: { integrationId, repository: 'acme/private-thing' } })
        .expect(404);
    });

    it('turns a refused token into a 424 and the integration into NEEDS_ATTENTION; rate limits into 503', async () => {
      const user = emulator.addUser(`rot-${Date.now()}`);
      emulator.addRepository(user.user.login, 'repo');
      const id = (await tokenIntegration(user.token).expect(201)).body.data.id;
      const source = await http()
        .post('/code-sources')
        .set(tenant.auth)
        .send({ data: { integrationId: id, repository: `${user.user.login}/repo` } })
        .expect(201);
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
      // The organization's own directory under GIT_LOCAL_ROOT (the OS temporary directory here).
      const own = join(realpathSync(tmpdir()), tenant.organizationId);
      mkdirSync(own, { recursive: true });
      const dir = mkdtempSync(join(own, 'local-git-'));
      try {
        const path = join(dir, 'demo.git');
        execFileSync('git', ['init', '--bare', '--quiet', path]);
        execFileSync('git', ['--git-dir', path, 'symbolic-ref', 'HEAD', 'refs/heads/trunk']);
        const env = { ...process.env, GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };
        const tree = execFileSync('git', ['--git-dir', path, 'mktree'], { input: '' }).toString().trim();
        const commit = execFileSync('git', ['--git-dir', path, 'commit-tree', tree, '-m', 'x'], { env }).toString().trim();
        execFileSync('git', ['--git-dir', path, 'update-ref', 'refs/heads/trunk', commit]);
        const source = await http()
          .post('/code-sources')
          .set(tenant.auth)
          .send({ data: { provider: 'LOCAL_GIT', repository: path } })
          .expect(201);
        expect(source.body.data).toMatchObject({ provider: 'LOCAL_GIT', repository: path });
        const repo = await http().get(`/code-source/${source.body.data.id}/repository`).set(tenant.auth).expect(200);
        expect(repo.body.data).toMatchObject({
          name: 'demo',
          nameWithOwner: 'local/demo',
          owner: { login: 'local' },
          defaultBranch: { name: 'trunk' },
          defaultBranchRef: { name: 'trunk' },
          isPrivate: true,
          isInNamespace: true,
          collaborators: { totalCount: 1 },
          url: `file://${path}`,
        });
        await http()
          .post('/code-sources')
          .set(tenant.auth)
          .send({ data: { provider: 'LOCAL_GIT', repository: join(dir, 'missing.git') } })
          .expect(404);
        await http()
          .post('/code-sources')
          .set(tenant.auth)
          .send({ data: { provider: 'LOCAL_GIT', repository: 'relative/path' } })
          .expect(422);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("issue 41: LOCAL_GIT repositories belong to the organization whose directory holds them; another organization's is a 422, first or not", async () => {
      const root = realpathSync(tmpdir());
      const other = await createTenant(app, 'git-local-other');
      const theirs = join(root, other.organizationId, `r-${Date.now()}.git`);
      const mine = join(root, tenant.organizationId, `r-${Date.now()}.git`);
      const loose = join(mkdtempSync(join(root, 'local-git-loose-')), 'loose.git');
      for (const path of [theirs, mine, loose]) execFileSync('git', ['init', '--bare', '--quiet', path]);
      try {
        const attach = (who: TestTenant, repository: string) =>
          http()
            .post('/code-sources')
            .set(who.auth)
            .send({ data: { provider: 'LOCAL_GIT', repository } });
        // Nobody has attached it yet: still not ours to take.
        const taken = await attach(tenant, theirs).expect(422);
        expect(taken.body).toMatchObject({ code: 'dpa:CodeSource:INVALID_REPOSITORY' });
        expect(taken.body.details[0].items[0]).toContain(`data.repository: must be under this organization's directory ${join(root, tenant.organizationId)}`);
        // A repository directly under the shared root is nobody's.
        expect((await attach(tenant, loose).expect(422)).body.code).toBe('dpa:CodeSource:INVALID_REPOSITORY');
        // A symlink in our directory to theirs resolves into theirs: refused as well.
        const link = join(root, tenant.organizationId, `link-${Date.now()}.git`);
        symlinkSync(theirs, link);
        expect((await attach(tenant, link).expect(422)).body.code).toBe('dpa:CodeSource:INVALID_REPOSITORY');
        await attach(other, theirs).expect(201);
        await attach(tenant, mine).expect(201);
      } finally {
        for (const path of [theirs, mine, dirname(loose)]) rmSync(path, { recursive: true, force: true });
      }
    });

    it('issue 41: a MEMBER attaches only repositories of the integration account; one its token merely reaches needs integrations:write', async () => {
      emulator.addRepository('octocat', 'member-ok');
      emulator.addRepository('someorg', 'shared-with-octocat', { private: true, collaborators: ['someorg', 'octocat'] });
      const member = await createMember(app, tenant, 'MEMBER');
      const outside = await http()
        .post('/code-sources')
        .set(member.auth)
        .send({ data: { integrationId, repository: 'someorg/shared-with-octocat' } })
        .expect(403);
      expect(outside.body).toMatchObject({ code: 'dpa:CodeSource:REPOSITORY_OUTSIDE_ACCOUNT', metadata: { permission: 'integrations:write' } });
      expect(await prisma().codeSource.count({ where: { organizationId: tenant.organizationId, nameWithOwner: 'someorg/shared-with-octocat' } })).toBe(0);
      await http()
        .post('/code-sources')
        .set(member.auth)
        .send({ data: { integrationId, repository: 'octocat/member-ok' } })
        .expect(201);
      // The ADMIN who manages integrations decides to use the token there.
      await http()
        .post('/code-sources')
        .set(tenant.auth)
        .send({ data: { integrationId, repository: 'someorg/shared-with-octocat' } })
        .expect(201);
    });
  });

  describe('OAuth / app installation flow, GET /scm/authorize and GET /scm/callback', () => {
    const API = 'http://api.test';
    const onApi = (url: URL) => url.origin === API;
    const exchanges = () => emulator.requests.filter((r) => r.path === '/login/oauth/access_token').length;
    const integrationOf = async (id: string) => (await http().get(`/integrations/${id}`).set(tenant.auth).expect(200)).body.data;
    /** POST /integrations: the flow's start URL and state. */
    const create = async (authMethod: 'OAUTH' | 'APP_INSTALLATION', redirectUrl = '/settings/git') => {
      const response = await http()
        .post('/integrations')
        .set(tenant.auth)
        .send({ data: { provider: 'GITHUB', authMethod, name: `oauth ${Date.now()}-${Math.random()}`, redirectUrl } })
        .expect(201);
      const url = new URL(response.body.data.authorizeUrl);
      return { id: response.body.data.id as string, state: url.searchParams.get('state') as string, url, body: response.body.data };
    };
    /** The member starts a flow and opens its start URL in their browser, which stops at the provider's page. */
    const start = async (authMethod: 'OAUTH' | 'APP_INSTALLATION', redirectUrl = '/settings/git') => {
      const flow = await create(authMethod, redirectUrl);
      const browser = new OAuthTestBrowser(app);
      // (The provider's page itself when authorizeUrl is one: what the API answered before the start URL existed.)
      const { next } = onApi(flow.url) ? await browser.follow(flow.url, onApi) : { next: flow.url };
      return { ...flow, browser, providerUrl: next as URL };
    };
    /** The callback as `browser` calls it (with its cookies), not followed further. */
    const callback = (browser: OAuthTestBrowser, query: Record<string, string> | string) =>
      browser.get(`/scm/callback?${typeof query === 'string' ? query : new URLSearchParams(query)}`);
    /** `login` authorizes at the provider's page in `browser`; the API's answer to the callback. */
    const authorizeAs = async (login: string, browser: OAuthTestBrowser, providerUrl: URL) => {
      const previous = emulator.browserUser;
      emulator.browserUser = login;
      try {
        const { last, next } = await browser.follow(providerUrl, (url) => url.origin === emulator.url || url.pathname === '/scm/callback');
        expect(last.url.pathname).toBe('/scm/callback');
        return { ...last, location: next?.toString().replace(API, '') ?? (last.headers.location as string | undefined) };
      } finally {
        emulator.browserUser = previous;
      }
    };

    /** The one-time code the callback's page shows in the browser that authorized. */
    const codeOn = (page: string) => page.match(/Confirmation code: <code>([0-9A-Z-]+)<\/code>/)?.[1] as string;
    /** POST /integrations/{id}/confirm as `who` (the member who started the flows here, unless told). */
    const confirm = (id: string, data: Record<string, unknown>, who: TestTenant = tenant) =>
      http().post(`/integrations/${id}/confirm`).set(who.auth).send({ data });
    /** The member's browser authorizes as `login` and the member confirms with what the page shows: ACTIVE. */
    const authorizeAndConfirm = async (login: string, flow: { id: string; browser: OAuthTestBrowser; providerUrl: URL }) => {
      const done = await authorizeAs(login, flow.browser, flow.providerUrl);
      expect(done.status).toBe(200);
      await confirm(flow.id, { externalAccountName: login, confirmationCode: codeOn(done.text) }).expect(200);
      return done;
    };

    beforeAll(() => {
      emulator.callbackUrl = `${API}/scm/callback`;
      emulator.addUser('victim');
    });

    it('runs the whole OAuth flow in one browser: start URL sets the flow cookie, provider, callback page with the account and a code, ACTIVE once the member confirms', async () => {
      const flow = await create('OAUTH');
      expect(flow.body.status).toBe('INITIATED');
      expect(`${flow.url.origin}${flow.url.pathname}`).toBe(`${API}/scm/authorize`);
      const browser = new OAuthTestBrowser(app);
      const started = await browser.get(flow.url);
      expect(started.status).toBe(302);
      const provider = new URL(started.headers.location as string);
      expect(provider.pathname).toBe('/login/oauth/authorize');
      expect(provider.searchParams.get('redirect_uri')).toBe(`${API}/scm/callback`);
      expect(provider.searchParams.get('state')).toBe(flow.state);
      expect(started.headers['cache-control']).toBe('no-store');
      // The flow cookie: __Host- prefixed, Secure, HttpOnly, SameSite=Lax, Path=/, no Domain.
      const cookie = browser.setCookies[0];
      expect(cookie).toMatch(/^__Host-dpa-oauth-[0-9a-f-]+=[A-Za-z0-9_-]{43};/);
      expect(cookie).toMatch(/; Path=\/(;|$)/);
      expect(cookie).toMatch(/; HttpOnly(;|$)/);
      expect(cookie).toMatch(/; Secure(;|$)/);
      expect(cookie).toMatch(/; SameSite=Lax(;|$)/);
      expect(cookie).toMatch(/; Max-Age=(5\d\d|600)(;|$)/);
      expect(cookie).not.toMatch(/Domain=/i);
      const done = await authorizeAs('octocat', browser, provider);
      // Authorized, not connected: a page with the account, the organization and the one-time code, and what to do.
      expect(done.status).toBe(200);
      expect(done.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(done.headers['content-security-policy']).toContain("default-src 'none'");
      expect(done.headers['cache-control']).toBe('no-store');
      expect(done.text).toContain('<strong>octocat</strong>');
      expect(done.text).toContain(`POST http:&#47;&#47;api.test&#47;integrations&#47;${flow.id}&#47;confirm`);
      const code = codeOn(done.text);
      expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){7}$/);
      expect(done.text).toContain(`href="&#47;settings&#47;git#integration_confirmation&#61;${code}"`);
      expect(browser.cookies.size).toBe(0);
      expect(await integrationOf(flow.id)).toMatchObject({ status: 'PENDING_CONFIRMATION', externalAccountName: 'octocat' });
      const confirmed = await confirm(flow.id, { externalAccountName: 'OctoCat', confirmationCode: code.toLowerCase() }).expect(200);
      expect(confirmed.body.data).toMatchObject({ id: flow.id, status: 'ACTIVE', externalAccountName: 'octocat' });
      // Single use: once ACTIVE, nothing is waiting.
      expect((await confirm(flow.id, { externalAccountName: 'octocat', confirmationCode: code }).expect(409)).body.code).toBe(
        'dpa:Integration:NOT_PENDING_CONFIRMATION',
      );
      // Replayed state: back to the original URL with a flag; no token exchange, nothing changes.
      const before = exchanges();
      const replay = await callback(new OAuthTestBrowser(app), { code: emulator.issueCode('octocat'), state: flow.state });
      expect(replay.status).toBe(302);
      expect(replay.headers.location).toBe('/settings/git?integration_error=state_used');
      expect(exchanges()).toBe(before);
      expect(await integrationOf(flow.id)).toMatchObject({ status: 'ACTIVE', externalAccountName: 'octocat' });
    });

    it('the start URL works once: a second opening (another browser, or the same) is a 410, as a page for a browser', async () => {
      const flow = await start('OAUTH');
      const again = await new OAuthTestBrowser(app).get(flow.url);
      expect(again.status).toBe(410);
      expect(again.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(again.text).toContain('dpa:OAuth:LINK_USED');
      const json = await http().get(`${flow.url.pathname}${flow.url.search}`).expect(410);
      expect(json.body).toMatchObject({ code: 'dpa:OAuth:LINK_USED', requestId: expect.any(String) });
      await http().get('/scm/authorize?state=unknown').expect(400);
      await http().get('/scm/authorize').expect(400);
    });

    it('runs the app installation flow and confirms the installation through the provider', async () => {
      emulator.addInstallation('octocat', ['octocat']);
      const flow = await start('APP_INSTALLATION');
      expect(flow.providerUrl.pathname).toBe(`/apps/${emulator.appSlug}/installations/new`);
      await authorizeAndConfirm('octocat', flow);
      expect(await integrationOf(flow.id)).toMatchObject({ status: 'ACTIVE', externalAccountName: 'octocat' });
    });

    it('refuses an installation the authorizing user cannot access', async () => {
      const theirs = emulator.addInstallation('hubot', ['hubot']);
      const flow = await start('APP_INSTALLATION');
      const done = await callback(flow.browser, {
        code: emulator.issueCode('octocat'),
        state: flow.state,
        installation_id: String(theirs.id),
        setup_action: 'install',
      });
      expect(done.headers.location).toBe('/settings/git?integration_error=installation_not_accessible');
      const integration = await integrationOf(flow.id);
      expect(integration.status).toBe('FAILED');
      expect(integration.lastError).toContain('installation_not_accessible');
    });

    it('records a failed token exchange and a provider error, redirecting with a flag', async () => {
      const bad = await start('OAUTH');
      expect((await callback(bad.browser, { code: 'not-a-code', state: bad.state })).headers.location).toBe(
        '/settings/git?integration_error=token_exchange_failed',
      );
      expect((await integrationOf(bad.id)).status).toBe('FAILED');
      const denied = await start('OAUTH', 'https://app.example.com/back');
      const location = (
        await callback(denied.browser, { error: 'access_denied', error_description: 'The user has denied your application access.', state: denied.state })
      ).headers.location;
      expect(location).toBe('https://app.example.com/back?integration_error=access_denied');
      expect(await integrationOf(denied.id)).toMatchObject({ status: 'FAILED', lastError: expect.stringContaining('access_denied') });
    });

    describe('issue 21 finding 3: the flow is bound to the browser that started it', () => {
      it('a victim sent the provider link completes the authorization: nothing is connected to their account', async () => {
        // The member (here the attacker) starts the flow and stops at the provider's page; the victim gets that link.
        const flow = await start('OAUTH');
        const before = exchanges();
        const victim = new OAuthTestBrowser(app);
        const done = await authorizeAs('victim', victim, flow.providerUrl);
        expect(done.status).toBe(302);
        expect(done.location).toBe('/settings/git?integration_error=browser_mismatch');
        expect(exchanges()).toBe(before);
        const integration = await integrationOf(flow.id);
        expect(integration).toMatchObject({ status: 'FAILED', externalAccountId: '', lastError: expect.stringContaining('browser_mismatch') });
        expect(integration.externalAccountName).toBeUndefined();
        // The flow is closed: the member's own browser cannot finish it afterwards either.
        const late = await authorizeAs('octocat', flow.browser, flow.providerUrl);
        expect(late.location).toBe('/settings/git?integration_error=state_used');
        expect((await integrationOf(flow.id)).status).toBe('FAILED');
      });

      it('a victim sent the start URL after the member opened it gets a 410; one never opened fails at the callback without the cookie', async () => {
        const flow = await start('OAUTH');
        expect((await new OAuthTestBrowser(app).get(flow.url)).status).toBe(410);
        // The provider page reached without the start URL (its state guessed from the link): no cookie, nothing connected.
        const unopened = await create('OAUTH');
        const providerPage = new URL(
          `/login/oauth/authorize?${new URLSearchParams({ client_id: emulator.clientId, redirect_uri: `${API}/scm/callback`, state: unopened.state })}`,
          emulator.url,
        );
        const done = await authorizeAs('victim', new OAuthTestBrowser(app), providerPage);
        expect(done.location).toBe('/settings/git?integration_error=browser_mismatch');
        expect(await integrationOf(unopened.id)).toMatchObject({ status: 'FAILED', externalAccountId: '' });
      });

      it("another flow's cookie, a forged cookie or an empty one does not do", async () => {
        const mine = await start('OAUTH');
        const other = await start('OAUTH');
        const [[otherName, otherValue]] = [...other.browser.cookies];
        const [[myName, myValue]] = [...mine.browser.cookies];
        expect(otherName).not.toBe(myName);
        for (const cookie of [
          `${otherName}=${otherValue}`,
          `${myName}=${otherValue}`,
          `${myName}=${myValue.slice(0, -1)}A`,
          `${myName}=`,
          `${myName.replace('__Host-', '')}=${myValue}`,
        ]) {
          const flow = await start('OAUTH');
          const name = [...flow.browser.cookies.keys()][0];
          const forged = cookie.replace(myName, name);
          const res = await request(app.getHttpServer())
            .get(`/scm/callback?${new URLSearchParams({ code: emulator.issueCode('victim'), state: flow.state })}`)
            .set('Cookie', forged);
          expect(res.headers.location).toBe('/settings/git?integration_error=browser_mismatch');
          expect(await integrationOf(flow.id)).toMatchObject({ status: 'FAILED', externalAccountId: '' });
        }
        // Both browsers still finish their own flows.
        await authorizeAndConfirm('octocat', mine);
        await authorizeAndConfirm('octocat', other);
      });
    });

    describe('issue 41: the connection is confirmed by the member who started it, not by the browser that opened the link', () => {
      it('a forwarded start link opened by someone else does not make an ACTIVE integration', async () => {
        // The member forwards the link unopened; another person opens it first and authorizes as themselves.
        const flow = await create('OAUTH');
        const stranger = new OAuthTestBrowser(app);
        const { next } = await stranger.follow(flow.url, onApi);
        const done = await authorizeAs('victim', stranger, next as URL);
        expect(done.status).toBe(200);
        expect(done.text).toContain('<strong>victim</strong>');
        expect(done.text).toContain('If someone else sent you the link');
        const integration = await integrationOf(flow.id);
        expect(integration).toMatchObject({ status: 'PENDING_CONFIRMATION', externalAccountName: 'victim' });
        // Nothing uses it: no code source, and the member cannot make it ACTIVE without the code only that browser saw.
        const attach = await http()
          .post('/code-sources')
          .set(tenant.auth)
          .send({ data: { integrationId: flow.id, repository: 'octocat/hello-world' } });
        expect([attach.status, attach.body.code]).toEqual([422, 'dpa:CodeSource:INTEGRATION_NOT_ACTIVE']);
        const expected = await confirm(flow.id, { externalAccountName: 'octocat', confirmationCode: 'AAAA-BBBB-CCCC-DDDD' }).expect(422);
        expect(expected.body.code).toBe('dpa:Integration:CONFIRMATION_MISMATCH');
        expect(expected.body.details[0].items).toEqual([
          'data.externalAccountName: is not the account that authorized',
          'data.confirmationCode: does not match',
        ]);
        await confirm(flow.id, { externalAccountName: 'victim', confirmationCode: 'AAAA-BBBB-CCCC-DDDD' }).expect(422);
        // The code is right but the member expects their own account: still refused.
        expect((await confirm(flow.id, { externalAccountName: 'octocat', confirmationCode: codeOn(done.text) }).expect(422)).body.details[0].items).toEqual([
          'data.externalAccountName: is not the account that authorized',
        ]);
        expect((await integrationOf(flow.id)).status).toBe('PENDING_CONFIRMATION');
        const audit = await prisma().auditEvent.findMany({
          where: { organizationId: tenant.organizationId, targetId: flow.id },
          orderBy: { createdAt: 'asc' },
        });
        expect(audit.map((event) => event.action)).toEqual(['integration.created', 'integration.authorized']);
      });

      it('only the member who started it confirms, with their own credentials, within the hour', async () => {
        const flow = await start('OAUTH');
        const done = await authorizeAs('octocat', flow.browser, flow.providerUrl);
        const code = codeOn(done.text);
        const otherAdmin = await createMember(app, tenant, 'ADMIN');
        const notYours = await confirm(flow.id, { externalAccountName: 'octocat', confirmationCode: code }, otherAdmin).expect(403);
        expect(notYours.body.code).toBe('dpa:Integration:CONFIRMATION_NOT_YOURS');
        // Another organization does not see it at all.
        const stranger = await createTenant(app, 'git-confirm-other');
        await confirm(flow.id, { externalAccountName: 'octocat', confirmationCode: code }, stranger).expect(404);
        // Past the hour: 410, and it stays unconfirmed.
        await prisma().oAuthState.updateMany({ where: { integrationId: flow.id }, data: { authorizedAt: new Date(Date.now() - 61 * 60_000) } });
        expect((await confirm(flow.id, { externalAccountName: 'octocat', confirmationCode: code }).expect(410)).body.code).toBe(
          'dpa:Integration:CONFIRMATION_EXPIRED',
        );
        expect((await integrationOf(flow.id)).status).toBe('PENDING_CONFIRMATION');
        // An integration that never waited (API_TOKEN) is a 409.
        const token = (await tokenIntegration(octocat.token).expect(201)).body.data.id;
        expect((await confirm(token, { externalAccountName: 'octocat', confirmationCode: code }).expect(409)).body.code).toBe(
          'dpa:Integration:NOT_PENDING_CONFIRMATION',
        );
        await confirm(flow.id, { externalAccountName: 'octocat' }).expect(400);
      });
    });

    describe('issue 38 point 4: an installation is connected only when GitHub says the person administers it', () => {
      const installFlow = async (installationId: number, login = 'octocat') => {
        const flow = await start('APP_INSTALLATION');
        const done = await callback(flow.browser, {
          code: emulator.issueCode(login),
          state: flow.state,
          installation_id: String(installationId),
          setup_action: 'install',
        });
        return { flow, done };
      };

      beforeAll(() => {
        emulator.addRepository('readers-org', 'app', { collaborators: ['octocat'] });
        emulator.addRepository('admins-org', 'covered', { private: true, collaborators: ['octocat'] });
        emulator.addRepository('admins-org', 'outside', { private: true, collaborators: ['octocat'] });
        emulator.addOrgMember('readers-org', 'octocat', { role: 'member' });
        emulator.addOrgMember('admins-org', 'octocat', { role: 'admin' });
        emulator.addOrgMember('pending-org', 'octocat', { role: 'admin', state: 'pending' });
      });

      it('refuses an installation the person can only read: an organization they are a plain or pending member of, or not one at all', async () => {
        for (const org of ['readers-org', 'pending-org', 'no-member-org']) {
          const readable = emulator.addInstallation(org, ['octocat'], { type: 'Organization' });
          const { flow, done } = await installFlow(readable.id);
          expect(done.status).toBe(302);
          expect(done.headers.location).toBe('/settings/git?integration_error=installation_not_administered');
          const integration = await integrationOf(flow.id);
          expect(integration).toMatchObject({ status: 'FAILED', externalAccountId: '' });
          expect(integration.lastError).toContain(`on the organization ${org}`);
        }
        // Another user's own account, listed for octocat (a collaborator): not theirs to connect.
        const hubots = emulator.addInstallation('hubot', ['hubot', 'octocat'], { type: 'User' });
        const { done } = await installFlow(hubots.id);
        expect(done.headers.location).toBe('/settings/git?integration_error=installation_not_administered');
      });

      it('accepts one they administer, and its queue acts only on the repositories the installation covers', async () => {
        const administered = emulator.addInstallation('admins-org', ['octocat'], { type: 'Organization', repositories: ['admins-org/covered'] });
        const { flow, done } = await installFlow(administered.id);
        expect(done.status).toBe(200);
        await confirm(flow.id, { externalAccountName: 'octocat', confirmationCode: codeOn(done.text) }).expect(200);
        expect((await integrationOf(flow.id)).status).toBe('ACTIVE');
        // The token reaches admins-org/outside (octocat is a collaborator); the installation does not cover it.
        const outside = await http()
          .post('/code-sources')
          .set(tenant.auth)
          .send({ data: { integrationId: flow.id, repository: 'admins-org/outside' } })
          .expect(422);
        expect(outside.body).toMatchObject({ code: 'dpa:CodeSource:NOT_IN_INSTALLATION' });
        expect(outside.body.details[0].items[0]).toMatch(/^data\.repository: admins-org\/outside is not covered/);
        const covered = await http()
          .post('/code-sources')
          .set(tenant.auth)
          .send({ data: { integrationId: flow.id, repository: 'admins-org/covered' } })
          .expect(201);
        await http()
          .post('/merge-queues')
          .set(tenant.auth)
          .send({ data: { codeSourceId: covered.body.data.id, baseRef: 'main', requiredChecks: ['ci'] } })
          .expect(201);
        // The installation's selection changed on GitHub after the repository was attached: no new queue there.
        administered.repositories = [];
        const refused = await http()
          .post('/merge-queues')
          .set(tenant.auth)
          .send({ data: { codeSourceId: covered.body.data.id, baseRef: 'release', requiredChecks: ['ci'] } })
          .expect(422);
        expect(refused.body).toMatchObject({ code: 'dpa:CodeSource:NOT_IN_INSTALLATION' });
        expect(refused.body.details[0].items[0]).toMatch(/^data\.codeSourceId: /);
      });
    });

    describe('issue 24: once the state identifies the flow, every failure is a 302 back', () => {
      it('ignores query parameters it does not know (GitHub adds some)', async () => {
        const flow = await start('OAUTH');
        const done = await callback(flow.browser, {
          code: emulator.issueCode('octocat'),
          state: flow.state,
          foo: 'bar',
          installation_target_id: '1',
          'x[y]': 'z',
          redirect: '//evil.example',
          next: 'https://evil.example',
        });
        // Authorized (the page), nothing else read from the query.
        expect(done.status).toBe(200);
        expect(done.text).not.toContain('evil.example');
        expect((await integrationOf(flow.id)).status).toBe('PENDING_CONFIRMATION');
      });

      it('setup_action=request (a non-owner asked for the installation): installation_requested, the integration says why', async () => {
        const flow = await start('APP_INSTALLATION');
        const before = exchanges();
        const done = await callback(flow.browser, { code: emulator.issueCode('octocat'), state: flow.state, setup_action: 'request' });
        expect(done.status).toBe(302);
        expect(done.headers.location).toBe('/settings/git?integration_error=installation_requested');
        expect(exchanges()).toBe(before);
        expect(await integrationOf(flow.id)).toMatchObject({
          status: 'FAILED',
          lastError: expect.stringMatching(/^installation_requested: .*owner .* approve/),
        });
        const unknown = await start('APP_INSTALLATION');
        expect(
          (await callback(unknown.browser, { code: emulator.issueCode('octocat'), state: unknown.state, setup_action: 'uninstall' })).headers.location,
        ).toBe('/settings/git?integration_error=unsupported_setup_action');
      });

      it('neither code nor error: missing_code; a malformed known parameter: invalid_callback', async () => {
        const flow = await start('OAUTH');
        const done = await callback(flow.browser, { state: flow.state });
        expect(done.status).toBe(302);
        expect(done.headers.location).toBe('/settings/git?integration_error=missing_code');
        expect(await integrationOf(flow.id)).toMatchObject({ status: 'FAILED', lastError: expect.stringContaining('missing_code') });
        for (const query of [
          `code=a&code=b&state=STATE`,
          `code=x&installation_id=abc&state=STATE`,
          `code=${'x'.repeat(600)}&state=STATE`,
          `code=a%00b&state=STATE`,
        ]) {
          const malformed = await start('APP_INSTALLATION');
          const res = await callback(malformed.browser, query.replace('STATE', encodeURIComponent(malformed.state)));
          expect([res.status, res.headers.location]).toEqual([302, '/settings/git?integration_error=invalid_callback']);
          expect((await integrationOf(malformed.id)).status).toBe('FAILED');
        }
      });

      it('an expired state: state_expired (FAILED); an already used one: state_used (unchanged); no token exchange', async () => {
        const expired = await start('OAUTH');
        const db = new Client({ connectionString: process.env.DATABASE_URL });
        await db.connect();
        await db.query(`UPDATE "OAuthState" SET "expiresAt" = now() - interval '1 second' WHERE "integrationId" = $1`, [expired.id]);
        await db.end();
        const before = exchanges();
        expect((await callback(expired.browser, { code: emulator.issueCode('octocat'), state: expired.state })).headers.location).toBe(
          '/settings/git?integration_error=state_expired',
        );
        expect(await integrationOf(expired.id)).toMatchObject({ status: 'FAILED', lastError: expect.stringContaining('state_expired') });
        expect((await callback(expired.browser, { code: emulator.issueCode('octocat'), state: expired.state })).headers.location).toBe(
          '/settings/git?integration_error=state_used',
        );
        expect(exchanges()).toBe(before);
      });

      it('a state that identifies nothing: a plain HTML page for a browser (escaped, nothing reflected), the error body otherwise', async () => {
        const before = exchanges();
        const browser = new OAuthTestBrowser(app);
        const payload = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>';
        for (const query of [
          { code: 'x' },
          { code: payload, state: payload },
          { code: 'x', state: 'unknown-state' },
          { code: 'x', state: '' },
          { state: payload, setup_action: 'request', error: payload },
        ] as Record<string, string>[]) {
          const page = await callback(browser, query);
          expect(page.status).toBe(400);
          expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
          expect(page.headers['x-content-type-options']).toBe('nosniff');
          expect(page.headers['content-security-policy']).toContain("default-src 'none'");
          expect(page.headers['cache-control']).toBe('no-store');
          expect(page.headers.location).toBeUndefined();
          expect(page.text).toContain('dpa:OAuth:INVALID_STATE');
          expect(page.text).toMatch(/start the connection again/);
          expect(page.text).not.toMatch(/<script|<img|onerror|alert\(|unknown-state/);
          const json = await request(app.getHttpServer())
            .get(`/scm/callback?${new URLSearchParams(query)}`)
            .expect(400);
          expect(json.body).toMatchObject({ code: 'dpa:OAuth:INVALID_STATE', requestId: expect.any(String) });
        }
        // A malformed known parameter with no usable state is named.
        const named = await request(app.getHttpServer()).get('/scm/callback?state=a%00b').expect(400);
        expect(named.body).toMatchObject({ code: 'dpa:Request:VALIDATION_FAILED', message: expect.stringContaining('state:') });
        expect(exchanges()).toBe(before);
      });
    });

    describe('issue 21 finding 2: open redirect', () => {
      it(`refuses every open-redirect probe (${OPEN_REDIRECT_PROBES.length}) when the flow starts`, async () => {
        const accepted: string[] = [];
        for (const probe of OPEN_REDIRECT_PROBES) {
          const response = await http()
            .post('/integrations')
            .set(tenant.auth)
            .send({ data: { provider: 'GITHUB', authMethod: 'OAUTH', name: `probe ${Math.random()}`, redirectUrl: probe } });
          if (response.status !== 422 && response.status !== 400) accepted.push(`${JSON.stringify(probe)} -> ${response.status}`);
        }
        process.stdout.write(`open-redirect probes: ${OPEN_REDIRECT_PROBES.length} sent, ${accepted.length} accepted\n`);
        expect(accepted).toEqual([]);
      });

      it('stores the normalised target, and the failure path never answers a scheme-relative Location', async () => {
        const flow = await start('OAUTH', '/a/b/../../settings/./git');
        expect((await callback(flow.browser, { error: 'access_denied', state: flow.state })).headers.location).toBe(
          '/settings/git?integration_error=access_denied',
        );
        // A target stored before the fix (or written by anything else) is normalised and checked again at the callback.
        for (const stored of ['/..//evil.example', '/%2e%2e//evil.example', '/a/../..//evil.example']) {
          const old = await start('OAUTH');
          const db = new Client({ connectionString: process.env.DATABASE_URL });
          await db.connect();
          await db.query(`UPDATE "OAuthState" SET "redirectUrl" = $2 WHERE "integrationId" = $1`, [old.id, stored]);
          await db.end();
          const location = (await callback(old.browser, { error: 'access_denied', state: old.state })).headers.location as string;
          expect(location).toBe('/?integration_error=access_denied');
        }
      });
    });
  });
});
