import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { MergeQueueGits } from '@/modules/merge-queues/engine/gits';
import { createMember, createTenant, type TestTenant } from '../support/factories';
import { APP_CONFIG } from '@/common/config/config.module';
import { createTestApp } from '../support/app';
import { createGitTestApp, GitProviderEmulator, gitTestConfig } from '../support/git';
import { commit, createBareRepo, createLocalCodeSource } from '../support/git-repos';

/**
 * Issue 21's security findings, each probed the way an attacking tenant would (the LOCAL_GIT,
 * SSRF and provider findings have suites of their own: local-git-tenancy, provider-abuse).
 */
describe('Security findings: what a tenant must not be able to do', () => {
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  let member: TestTenant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    emulator = await new GitProviderEmulator().start();
    emulator.addUser('octocat');
    emulator.addRepository('octocat', 'hello-world');
    app = await createGitTestApp(emulator, { timeoutMs: 2000 });
    prisma = app.get(PrismaService, { strict: false });
    owner = await createTenant(app, 'attacks');
    member = await createMember(app, owner, 'MEMBER');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await emulator?.stop();
  });

  async function localQueue() {
    const repo = createBareRepo();
    const source = await createLocalCodeSource(prisma, owner.organizationId, repo.path);
    const queue = (
      await http()
        .post('/merge-queues')
        .set(owner.auth)
        .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'] } })
        .expect(201)
    ).body.data as { id: string };
    return { repo, source, queue };
  }

  describe('finding 1: LOCAL_GIT is a shared disk', () => {
    let local: NestExpressApplication;
    let disabled: NestExpressApplication;
    let parent: string;
    let root: string;
    let first: TestTenant;
    let second: TestTenant;
    const api = () => request(local.getHttpServer());
    const connect = (tenant: TestTenant, repository: string) =>
      api()
        .post('/code-sources')
        .set(tenant.auth)
        .send({ data: { provider: 'LOCAL_GIT', repository } });

    beforeAll(async () => {
      parent = realpathSync(mkdtempSync(join(tmpdir(), 'local-git-root-')));
      root = join(parent, 'root');
      mkdirSync(root);
      const base = gitTestConfig(emulator);
      local = await createTestApp({}, (builder) =>
        builder.overrideProvider(APP_CONFIG).useValue({ ...base, git: { ...base.git, localEnabled: true, localRoot: root } }),
      );
      disabled = await createTestApp({}, (builder) =>
        builder.overrideProvider(APP_CONFIG).useValue({ ...base, git: { ...base.git, localEnabled: false, localRoot: root } }),
      );
      first = await createTenant(local, 'local-first');
      second = await createTenant(local, 'local-second');
    }, 60_000);

    afterAll(async () => {
      await Promise.all([local?.close(), disabled?.close()]);
      rmSync(parent, { recursive: true, force: true });
    });

    /** A bare repository at `path` whose main holds `files`. */
    function bareAt(path: string, files: Record<string, string>): string {
      execFileSync('git', ['init', '--bare', '-q', '-b', 'main', path]);
      const main = commit(path, null, files, 'initial');
      execFileSync('git', ['--git-dir', path, 'update-ref', 'refs/heads/main', main]);
      return main;
    }

    it('refuses a repository outside GIT_LOCAL_ROOT, also through a symlink under the root (422)', async () => {
      const outside = join(parent, 'outside.git');
      bareAt(outside, { 'secret.txt': 'another tenant\n' });
      expect((await connect(first, outside).expect(422)).body.code).toBe('dpa:CodeSource:INVALID_REPOSITORY');
      symlinkSync(outside, join(root, 'link.git'));
      const viaLink = await connect(first, join(root, 'link.git'));
      expect([viaLink.status, viaLink.body.code]).toEqual([422, 'dpa:CodeSource:INVALID_REPOSITORY']);
      expect(
        await prisma.codeSource.count({ where: { organizationId: first.organizationId, provider: 'LOCAL_GIT', nameWithOwner: { startsWith: parent } } }),
      ).toBe(0);
    });

    it('lets one organization at a time attach a path: another organization gets a 409 naming no one', async () => {
      const path = join(root, 'shared.git');
      bareAt(path, { 'a.txt': 'a\n' });
      const created = (await connect(first, path).expect(201)).body.data;
      expect(created.repository).toBe(path);
      const taken = await connect(second, path).expect(409);
      expect(taken.body.code).toBe('dpa:CodeSource:LOCAL_PATH_TAKEN');
      expect(JSON.stringify(taken.body)).not.toContain(first.organizationId);
      // The same repository by another spelling is the same path.
      await connect(second, `${root}/sub/../shared.git`).expect(422);
      mkdirSync(join(root, 'alias'));
      symlinkSync(path, join(root, 'alias', 'shared.git'));
      expect((await connect(second, join(root, 'alias', 'shared.git')).expect(409)).body.code).toBe('dpa:CodeSource:LOCAL_PATH_TAKEN');
      // At once: exactly one of two organizations gets a fresh path.
      const fresh = join(root, 'fresh.git');
      bareAt(fresh, { 'f.txt': 'f\n' });
      const answers = await Promise.all([connect(first, fresh), connect(second, fresh)]);
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    });

    it('uses the path it checked: a percent-encoded path is not decoded into another repository by the queue', async () => {
      // A directory literally named `%2e%2e` under the root holds a decoy; decoded, the path names the victim outside the root.
      mkdirSync(join(root, '%2e%2e'));
      const decoyMain = bareAt(join(root, '%2e%2e', 'victim.git'), { 'decoy.txt': 'decoy\n' });
      const victimMain = bareAt(join(parent, 'victim.git'), { 'victim.txt': 'victim\n' });
      const source = (await connect(first, join(root, '%2e%2e', 'victim.git')).expect(201)).body.data;
      const queue = (
        await api()
          .post('/merge-queues')
          .set(first.auth)
          .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'] } })
          .expect(201)
      ).body.data;
      const chain = (await api().get(`/merge-queues/${queue.id}/chain`).set(first.auth).expect(200)).body.data;
      expect(chain.baseSha).toBe(decoyMain);
      expect(chain.baseSha).not.toBe(victimMain);
    });

    it("honours GIT_LOCAL_ENABLED=false everywhere: creation, the queue routes and the executor's git", async () => {
      const path = join(root, 'later-disabled.git');
      bareAt(path, { 'a.txt': 'a\n' });
      const tenant = await createTenant(disabled, 'local-disabled');
      const source = await createLocalCodeSource(prisma, tenant.organizationId, path);
      const off = () => request(disabled.getHttpServer());
      expect(
        (
          await off()
            .post('/code-sources')
            .set(tenant.auth)
            .send({ data: { provider: 'LOCAL_GIT', repository: join(root, 'x.git') } })
            .expect(422)
        ).body.code,
      ).toBe('dpa:GitProvider:LOCAL_GIT_DISABLED');
      expect(
        (
          await off()
            .post('/merge-queues')
            .set(tenant.auth)
            .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'] } })
            .expect(422)
        ).body.code,
      ).toBe('dpa:GitProvider:LOCAL_GIT_DISABLED');
      expect((await off().get(`/code-source/${source.id}/repository`).set(tenant.auth).expect(422)).body.code).toBe('dpa:GitProvider:LOCAL_GIT_DISABLED');
      // The executor gets its git from MergeQueueGits: refused too, so a queue made while enabled stops writing.
      const row = await prisma.codeSource.findUniqueOrThrow({ where: { id: source.id } });
      await expect(disabled.get(MergeQueueGits, { strict: false }).forSource(row)).rejects.toMatchObject({
        entry: { code: 'dpa:GitProvider:LOCAL_GIT_DISABLED' },
      });
    });
  });

  describe('finding 4: a MEMBER cannot delete ADMIN-managed merge queues through their code source', () => {
    it('answers 409 naming the queue to a MEMBER and keeps both; an ADMIN (mergeQueues:operate) disconnects it with its queues', async () => {
      const { source, queue } = await localQueue();
      const refused = await http().delete(`/code-sources/${source.id}`).set(member.auth).expect(409);
      expect(refused.body).toMatchObject({ code: 'dpa:CodeSource:HAS_MERGE_QUEUES', metadata: { id: source.id, mergeQueueIds: [queue.id] } });
      expect(refused.body.message).toContain(queue.id);
      await http().get(`/merge-queues/${queue.id}`).set(owner.auth).expect(200);
      await http().get(`/code-sources/${source.id}`).set(owner.auth).expect(200);

      // A code source without a queue is still the MEMBER's to disconnect.
      const bare = await createLocalCodeSource(prisma, owner.organizationId, createBareRepo().path);
      await http().delete(`/code-sources/${bare.id}`).set(member.auth).expect(204);

      await http().delete(`/code-sources/${source.id}`).set(owner.auth).expect(204);
      await http().get(`/merge-queues/${queue.id}`).set(owner.auth).expect(404);
    });

    it("checks the key's scopes too: a key scoped to codeSources:write gets the 409 even though its owner is an ADMIN", async () => {
      const { source, queue } = await localQueue();
      const admin = await createMember(app, owner, 'ADMIN');
      const scoped = async (scopes: string[]) =>
        (
          await http()
            .post('/api-keys')
            .set(admin.auth)
            .send({ data: { name: `scoped ${scopes.join(' ')}`, ownerId: admin.memberId, scopes } })
            .expect(201)
        ).body.data.token as string;
      const sourcesOnly = { Authorization: `Bearer ${await scoped(['codeSources:read', 'codeSources:write'])}` };
      const refused = await http().delete(`/code-sources/${source.id}`).set(sourcesOnly).expect(409);
      expect(refused.body).toMatchObject({ code: 'dpa:CodeSource:HAS_MERGE_QUEUES', metadata: { id: source.id, mergeQueueIds: [queue.id] } });
      expect(refused.body.message).toContain('scoped key');
      await http().get(`/merge-queues/${queue.id}`).set(owner.auth).expect(200);
      // Scoped to both: the queue goes with its code source.
      const both = { Authorization: `Bearer ${await scoped(['codeSources:write', 'mergeQueues:operate'])}` };
      await http().delete(`/code-sources/${source.id}`).set(both).expect(204);
      await http().get(`/merge-queues/${queue.id}`).set(owner.auth).expect(404);
    });
  });

  describe('bug: POST /integrations GITHUB when the provider does not resolve', () => {
    let unresolvable: NestExpressApplication;
    let tenant: TestTenant;

    beforeAll(async () => {
      const base = gitTestConfig(emulator);
      unresolvable = await createTestApp({}, (builder) =>
        builder.overrideProvider(APP_CONFIG).useValue({
          ...base,
          git: {
            ...base.git,
            timeoutMs: 3000,
            github: { ...base.git.github, apiUrl: 'https://api.github-nowhere.invalid', webUrl: 'https://github-nowhere.invalid' },
          },
        }),
      );
      tenant = await createTenant(unresolvable, 'unresolvable');
    }, 60_000);

    afterAll(async () => {
      await unresolvable?.close();
    });

    it('answers the provider-unreachable 502 (not a 500) and stores nothing', async () => {
      const name = `gh unresolvable ${Date.now()}`;
      const res = await request(unresolvable.getHttpServer())
        .post('/integrations')
        .set(tenant.auth)
        .send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name, token: 'ghp_whatever' } });
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({ code: 'dpa:GitProvider:UNAVAILABLE' });
      expect(res.body.requestId).toBeDefined();
      expect(await prisma.integration.count({ where: { organizationId: tenant.organizationId } })).toBe(0);
    });
  });

  describe("finding 7: caps on a queue's live entries and on a tenant's queues", () => {
    let capped: NestExpressApplication;
    let tenant: TestTenant;
    const api = () => request(capped.getHttpServer());

    beforeAll(async () => {
      const base = gitTestConfig(emulator);
      capped = await createTestApp({}, (builder) =>
        builder.overrideProvider(APP_CONFIG).useValue({ ...base, mergeQueues: { ...base.mergeQueues, maxLiveEntries: 3, maxPerOrganization: 2 } }),
      );
      tenant = await createTenant(capped, 'capped');
    }, 60_000);

    afterAll(async () => {
      await capped?.close();
    });

    it('refuses the entry past MERGE_QUEUE_MAX_LIVE_ENTRIES with a 422 naming the limit; a removed entry frees its place', async () => {
      const repo = createBareRepo();
      const source = await createLocalCodeSource(prisma, tenant.organizationId, repo.path);
      const queue = (
        await api()
          .post('/merge-queues')
          .set(tenant.auth)
          .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'] } })
          .expect(201)
      ).body.data as { id: string };
      const head = commit(repo.path, repo.main, { 'a.txt': 'a\n' }, 'PR');
      const enqueue = (number: number) =>
        api()
          .post(`/merge-queues/${queue.id}/entries`)
          .set(tenant.auth)
          .send({ data: { number, headSha: head, url: `https://example.test/pr/${number}` } });
      const first = (await enqueue(1).expect(201)).body.data as { id: string };
      await enqueue(2).expect(201);
      await enqueue(3).expect(201);
      const refused = await enqueue(4).expect(422);
      expect(refused.body).toMatchObject({ code: 'dpa:MergeQueue:ENTRY_LIMIT_REACHED', metadata: { limit: 3 } });
      expect(refused.body.message).toContain('3');
      await api().delete(`/merge-queues/${queue.id}/entries/${first.id}`).set(tenant.auth).expect(200);
      await enqueue(4).expect(201);
    });

    it('refuses the queue past MERGE_QUEUE_MAX_PER_ORGANIZATION with a 422 naming the limit, even when asked at once', async () => {
      const other = await createTenant(capped, 'capped-other');
      const repo = createBareRepo();
      for (const ref of ['b1', 'b2', 'b3', 'b4']) execFileSync('git', ['--git-dir', repo.path, 'update-ref', `refs/heads/${ref}`, repo.main]);
      const source = await createLocalCodeSource(prisma, other.organizationId, repo.path);
      const create = (baseRef: string) =>
        api()
          .post('/merge-queues')
          .set(other.auth)
          .send({ data: { codeSourceId: source.id, baseRef, requiredChecks: ['ci'] } });
      const answers = await Promise.all(['b1', 'b2', 'b3', 'b4'].map((ref) => create(ref)));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 422, 422]);
      for (const refused of answers.filter((a) => a.status === 422))
        expect(refused.body).toMatchObject({ code: 'dpa:MergeQueue:QUEUE_LIMIT_REACHED', metadata: { limit: 2 } });
      expect(await prisma.mergeQueue.count({ where: { organizationId: other.organizationId } })).toBe(2);
    });
  });

  describe('finding 9: small ones', () => {
    it('entry and check url fields accept http and https only', async () => {
      const { repo, queue } = await localQueue();
      const head = commit(repo.path, repo.main, { 'a.txt': 'a\n' }, 'PR 1');
      for (const url of [
        'javascript:alert(document.cookie)',
        'JavaScript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'file:///etc/passwd',
        'vbscript:msgbox(1)',
        'not a url',
      ]) {
        const res = await http()
          .post(`/merge-queues/${queue.id}/entries`)
          .set(member.auth)
          .send({ data: { number: 1, headSha: head, url, title: 'x' } })
          .expect(400);
        expect(res.body.code).toBe('dpa:Request:VALIDATION_FAILED');
        expect(JSON.stringify(res.body)).toContain('url');
        // Check reports need mergeQueues:reportChecks (ADMIN): the owner reports, naming a commit.
        const check = await http()
          .post(`/merge-queues/${queue.id}/batches/0195a3c2-0000-7000-8000-000000000001/checks`)
          .set(owner.auth)
          .send({ data: { name: 'ci', state: 'success', sha: head, url } })
          .expect(400);
        expect(JSON.stringify(check.body)).toContain('url');
      }
      await http()
        .post(`/merge-queues/${queue.id}/entries`)
        .set(member.auth)
        .send({ data: { number: 1, headSha: head, url: 'https://example.test/pr/1', title: 'x' } })
        .expect(201);
      // A valid url gets past validation to the batch lookup.
      await http()
        .post(`/merge-queues/${queue.id}/batches/0195a3c2-0000-7000-8000-000000000001/checks`)
        .set(owner.auth)
        .send({ data: { name: 'ci', state: 'success', sha: head, url: 'http://ci.example.test/run/1' } })
        .expect(404);
    });

    it('refuses . and .. as repository name segments (422) before asking the provider', async () => {
      const token = emulator.issueToken('octocat');
      const integrationId = (
        await http()
          .post('/integrations')
          .set(owner.auth)
          .send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name: `gh ${Date.now()}`, token } })
          .expect(201)
      ).body.data.id;
      for (const repository of ['octocat/..', '../octocat', 'octocat/.', './hello-world', 'octocat/../hello-world', 'group/./name']) {
        const res = await http().post('/code-sources').set(member.auth).send({ data: { integrationId, repository } }).expect(422);
        expect(res.body.code).toBe('dpa:CodeSource:INVALID_REPOSITORY');
      }
      await http()
        .post('/code-sources')
        .set(member.auth)
        .send({ data: { integrationId, repository: 'octocat/hello-world' } })
        .expect(201);
    });
  });
});
