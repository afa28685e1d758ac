import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { IntegrationCredentials } from '@/modules/integrations/integration-credentials';
import { WebhooksProcessor } from '@/modules/webhooks/webhooks.processor';
import { signature256 } from '@tools/git-emulator/emulator';
import { createTenant, type TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, git } from '../support/git-repos';
import { appInstallationIntegration, type GithubQueueSuite, githubIntegration, githubQueueSuite } from '../support/github-queues';
import { MergeQueueClient, type MqQueue } from '../support/merge-queue-client';
import { until } from '../support/processes';

const TEST_TIMEOUT_MS = 120_000;
/** The GitHub App's one webhook secret, and the one it replaces during a rotation (GITHUB_APP_WEBHOOK_SECRET, ..._PREVIOUS). */
const APP_SECRET = 'app-webhook-secret-new-0123456789';
const APP_SECRET_PREVIOUS = 'app-webhook-secret-old-0123456789';
/** The suite's per-organization budgets (WEBHOOK_ORG_DELIVERIES_PER_MINUTE, WEBHOOK_ORG_PENDING_MAX). */
const RATE = 40;
const PENDING = 30;

/**
 * The intake of GitHub deliveries as GitHub sends them (issue 38 points 5 and 6, issue 41 point 4):
 * one App serving several organizations, deliveries of GitHub's real sizes, a renamed repository,
 * a replay after the ledger row is gone, and one organization flooding its own deliveries. The
 * emulator sends every delivery to the API listening on a port; an in-process worker applies them.
 */
describe('GitHub webhook intake (one App for many organizations, real sizes, renames, replays, budgets)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let worker: INestApplicationContext;
  let prisma: PrismaService;
  let hookUrl: string;
  let secret: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    suite = await githubQueueSuite('webhook_intake', {
      listen: true,
      config: (base) => ({
        ...base,
        webhooks: { ...base.webhooks, appSecrets: [APP_SECRET, APP_SECRET_PREVIOUS], orgDeliveriesPerMinute: RATE, orgPendingMax: PENDING },
      }),
    });
    ({ emulator, app, worker, prisma } = suite);
    secret = suite.github.webhookSecret;
    hookUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/webhooks/github`;
    emulator.webhook = { url: hookUrl, secret };
  }, 60_000);

  afterAll(async () => {
    if (suite) suite.emulator.webhook = undefined;
    await suite?.close();
  });

  const applied = (integrationId: string, deliveryId: string) =>
    until(`delivery ${deliveryId} applied`, async () => prisma.webhookDelivery.findFirst({ where: { integrationId, deliveryId, processedAt: { not: null } } }));

  /** suite.newQueue, with GitHub's id of the repository (its code source's foreignId). */
  async function newQueue() {
    const made = await suite.newQueue();
    const { foreignId } = await prisma.codeSource.findUniqueOrThrow({ where: { id: made.source.id } });
    return { ...made, repositoryId: Number(foreignId) };
  }

  /** A queue on main of a new repository of `login`, connected through `integrationId` as `tenant`. */
  async function queueOf(tenant: TestTenant, integrationId: string, login: string) {
    const name = `repo-${randomUUID().slice(0, 8)}`;
    const { path, id } = emulator.addRepository(login, name);
    const main = commit(path, git(path, 'rev-parse', 'main'), { 'README.md': 'hello\n' }, 'initial');
    git(path, 'update-ref', 'refs/heads/main', main);
    const source = await http()
      .post('/code-sources')
      .set(tenant.auth)
      .send({ data: { integrationId, repository: `${login}/${name}` } })
      .expect(201);
    const queue = await http()
      .post('/merge-queues')
      .set(tenant.auth)
      .send({ data: { codeSourceId: source.body.data.id, baseRef: 'main', requiredChecks: ['ci'], checkTimeoutSeconds: 600 } })
      .expect(201);
    await http().post(`/merge-queues/${queue.body.data.id}/pause`).set(tenant.auth).expect(200);
    return { name, repository: `${login}/${name}`, repositoryId: id, path, main, sourceId: source.body.data.id as string, queue: queue.body.data as MqQueue };
  }

  /** An organization that installed the App on its GitHub account: an APP_INSTALLATION integration as the install callback leaves it. */
  async function appOrganization(label: string) {
    const tenant = await createTenant(app, label);
    const login = `${label}-${randomUUID().slice(0, 8)}`;
    emulator.addUser(login);
    const { installation, ...row } = await appInstallationIntegration(app, emulator, tenant, login);
    const queue = await queueOf(tenant, row.id, login);
    const mq = new MergeQueueClient(() => app.getHttpServer(), tenant.auth, prisma);
    return { tenant, login, installationId: installation.id, integrationId: row.id, mq, ...queue };
  }

  it(
    "two organizations on one GitHub App both receive their deliveries, signed with the App's one secret (the previous one too during a rotation)",
    async () => {
      const [one, two] = [await appOrganization('app-one'), await appOrganization('app-two')];
      for (const org of [one, two]) await org.mq.enqueue(org.queue.id, 1, commit(org.path, org.main, { 'pr.txt': org.login }, 'PR 1'));
      // The App's webhook: every installation's deliveries carry its id and are signed with the App's secret.
      emulator.webhook = { url: hookUrl, secret, appSecret: APP_SECRET };
      try {
        const first = await emulator.pullRequest(one.repository, 'closed', { number: 1, headSha: one.main, baseRef: 'main' });
        expect({ status: first.status, body: (JSON.parse(first.body) as { installation?: { id?: number } }).installation?.id === one.installationId }).toEqual({
          status: 202,
          body: true,
        });
        // During a rotation GitHub may still sign with the previous secret.
        emulator.webhook = { url: hookUrl, secret, appSecret: APP_SECRET_PREVIOUS };
        const second = await emulator.pullRequest(two.repository, 'closed', { number: 1, headSha: two.main, baseRef: 'main' });
        expect(second.status).toBe(202);
        for (const org of [one, two])
          await until(`#1 removed from ${org.queue.id}`, async () =>
            (await org.mq.get(org.queue.id)).entries.find((e) => e.number === 1 && e.status === 'removed'),
          );
        // Each organization stored its own delivery, for its own integration only.
        expect(await prisma.webhookDelivery.count({ where: { deliveryId: first.id } })).toBe(1);
        expect((await applied(one.integrationId, first.id)).organizationId).toBe(one.tenant.organizationId);
        expect((await applied(two.integrationId, second.id)).organizationId).toBe(two.tenant.organizationId);
        // Any other secret is refused, and nothing is stored.
        emulator.webhook = { url: hookUrl, secret, appSecret: 'not-the-app-secret-0123456789' };
        const forged = await emulator.pullRequest(two.repository, 'closed', { number: 1, headSha: two.main, baseRef: 'main' });
        expect(forged.status).toBe(401);
        expect(JSON.parse(forged.response).code).toBe('dpa:Webhook:SIGNATURE_INVALID');
        expect(await prisma.webhookDelivery.count({ where: { deliveryId: forged.id } })).toBe(0);
      } finally {
        emulator.webhook = { url: hookUrl, secret };
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "forged installations cannot crowd out a repository's own integration: every candidate is compared, and the integration URL verifies one",
    async () => {
      const { repository, repositoryId, path, main, queue } = await newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(suite.owner.auth).expect(200);
      await suite.mq.enqueue(queue.id, 3, commit(path, main, { 'pr-3.txt': 'three\n' }, 'PR 3'));
      // 25 other organizations' integrations claim the same installation id and the same repository (created before the victim's would sort first).
      const forgedInstallation = 987_654_321;
      for (let i = 0; i < 25; i++) {
        const other = await createTenant(app, `crowd-${i}`);
        const integration = await prisma.integration.create({
          data: {
            organizationId: other.organizationId,
            givenId: `crowd-${i}`,
            name: 'crowd',
            provider: 'GITHUB',
            authMethod: 'API_TOKEN',
            status: 'ACTIVE',
            externalAccountId: '1',
            installationId: String(forgedInstallation),
            createdAt: new Date(Date.now() - 86_400_000),
          },
        });
        const { encryptedWebhookSecret } = app.get(IntegrationCredentials, { strict: false }).newWebhookSecret(integration.id);
        await prisma.integration.update({ where: { id: integration.id }, data: { encryptedWebhookSecret } });
        await prisma.codeSource.create({
          data: {
            organizationId: other.organizationId,
            provider: 'GITHUB',
            integrationId: integration.id,
            foreignId: String(repositoryId),
            nameWithOwner: repository,
            url: 'https://x',
          },
        });
      }
      emulator.webhook = { url: hookUrl, secret, installationId: forgedInstallation };
      try {
        const closed = await emulator.pullRequest(repository, 'closed', { number: 3, headSha: main, baseRef: 'main' });
        expect(closed.status).toBe(202);
        await until('#3 removed', async () => (await suite.mq.get(queue.id)).entries.find((e) => e.number === 3 && e.status === 'removed'));
      } finally {
        emulator.webhook = { url: hookUrl, secret };
      }
      // The integration's own URL compares its secret alone; another integration's id there is a 401.
      emulator.webhook = { url: `${hookUrl}?integration=${suite.github.integrationId}`, secret };
      try {
        const ping = await emulator.deliver('ping', { zen: 'Design for failure.', repository: { id: repositoryId, full_name: repository } });
        expect(ping.status).toBe(202);
        emulator.webhook = { url: `${hookUrl}?integration=${randomUUID()}`, secret };
        expect((await emulator.deliver('ping', { zen: 'x', repository: { id: repositoryId, full_name: repository } })).status).toBe(401);
      } finally {
        emulator.webhook = { url: hookUrl, secret };
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 2,000-commit push of realistic size is accepted and re-plans the queue; only what the queue reads is stored, and dropped once applied',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      const head = commit(path, main, { 'pr-8.txt': 'eight\n' }, 'PR 8');
      await suite.mq.enqueue(queue.id, 8, head);
      const first = await until('a batch testing', async () => (await suite.mq.get(queue.id)).batches.find((b) => b.status === 'testing' && b.headSha));
      // Someone pushes 2,000 commits to main directly (not through the API).
      const outside = commit(path, main, { 'hotfix.txt': 'hotfix\n' }, 'pushed by a person');
      git(path, 'update-ref', 'refs/heads/main', outside);
      // A repository webhook delivers to its integration's URL (larger than 1 MB, it would not be verified on the shared one).
      emulator.webhook = { url: `${hookUrl}?integration=${suite.github.integrationId}`, secret };
      let push;
      const sent = performance.now();
      try {
        push = await emulator.push(repository, 'refs/heads/main', main, outside, 'someone', { commits: 2_000 });
      } finally {
        emulator.webhook = { url: hookUrl, secret };
      }
      const payload = JSON.parse(push.body) as { commits: unknown[] };
      expect(payload.commits).toHaveLength(2_000);
      expect(push.body.length).toBeGreaterThan(1_048_576);
      expect({ status: push.status, response: push.status === 202 ? '' : push.response }).toEqual({ status: 202, response: '' });
      const answeredMs = performance.now() - sent;
      const stored = await prisma.webhookDelivery.findFirstOrThrow({ where: { deliveryId: push.id } });
      expect(JSON.stringify(stored.payload ?? {}).length).toBeLessThan(4_096);
      console.log(
        `push of 2,000 commits: ${push.body.length} bytes, answered 202 in ${answeredMs.toFixed(0)} ms (signed, sent and stored); stored ${JSON.stringify(stored.payload).length} bytes of it until applied`,
      );
      const row = await applied(suite.github.integrationId, push.id);
      expect(row.outcome).toMatch(/applied \(the base moved to/);
      expect(row.payload).toBeNull();
      await until('the stale candidate withdrawn', async () =>
        (await suite.mq.get(queue.id)).batches.find((b) => b.id === first.id && b.status === 'withdrawn'),
      );
      expect(await prisma.mergeQueueEvent.count({ where: { queueId: queue.id, type: 'baseMoved' } })).toBe(1);
      // Not signed with the App's secret, the same delivery on the shared URL is not read past 1 MB.
      const shared = await emulator.redeliver(push.id);
      expect(shared.status).toBe(401);
      expect(JSON.parse(shared.response).code).toBe('dpa:Webhook:INTEGRATION_URL_REQUIRED');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a renamed repository still reaches its queue, and its code source takes the new name',
    async () => {
      const { repository, name, path, main, queue, source } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(suite.owner.auth).expect(200);
      await suite.mq.enqueue(queue.id, 4, commit(path, main, { 'pr-4.txt': 'four\n' }, 'PR 4'));
      const login = repository.split('/')[0];
      const renamed = `${login}/${name}-renamed`;
      emulator.renameRepository(login, name, `${name}-renamed`);
      const closed = await emulator.pullRequest(renamed, 'closed', { number: 4, headSha: main, baseRef: 'main' });
      expect(closed.status).toBe(202);
      await until('#4 removed', async () => (await suite.mq.get(queue.id)).entries.find((e) => e.number === 4 && e.status === 'removed'));
      const got = await http().get(`/code-sources/${source.id}`).set(suite.owner.auth).expect(200);
      expect(got.body.data.repository).toBe(renamed);
      // Later provider calls use the new name (the emulator no longer knows the old one).
      const info = await http().get(`/code-source/${source.id}/repository`).set(suite.owner.auth).expect(200);
      expect(info.body.data.nameWithOwner).toBe(renamed);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a captured delivery replayed after its row was purged is refused: its own timestamp is older than GitHub redelivers',
    async () => {
      const { repository, repositoryId, path, main, queue } = await newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(suite.owner.auth).expect(200);
      const head = commit(path, main, { 'pr-5.txt': 'five\n' }, 'PR 5');
      await suite.mq.enqueue(queue.id, 5, head);
      const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);
      // A PR closed 31 days ago: GitHub delivered it then, and someone kept the signed bytes.
      const payload = (updatedAt: Date) => ({
        action: 'closed',
        number: 5,
        pull_request: { number: 5, state: 'closed', merged: false, updated_at: updatedAt.toISOString(), head: { sha: head }, base: { ref: 'main' } },
        repository: { id: repositoryId, full_name: repository },
      });
      const captured = await emulator.deliver('pull_request', payload(daysAgo(31)));
      // Its ledger row, stored then and applied, is purged by the sweep once past retention.
      const row = await prisma.webhookDelivery.create({
        data: {
          organizationId: suite.owner.organizationId,
          integrationId: suite.github.integrationId,
          deliveryId: randomUUID(),
          event: 'pull_request',
          payload: {},
          processedAt: daysAgo(31),
          createdAt: daysAgo(31),
        },
      });
      await worker.get(WebhooksProcessor).sweep();
      expect(await prisma.webhookDelivery.findUnique({ where: { id: row.id } })).toBeNull();
      const replay = await emulator.redeliver(captured.id);
      for (const answer of [captured, replay]) {
        expect(answer.status).toBe(422);
        const body = JSON.parse(answer.response);
        expect(body.code).toBe('dpa:Webhook:DELIVERY_EXPIRED');
        expect(typeof body.requestId).toBe('string');
      }
      expect(await prisma.webhookDelivery.count({ where: { deliveryId: captured.id } })).toBe(0);
      // One within GitHub's 3 days is applied; redelivered, it is found in the ledger and not applied again.
      const recent = await emulator.deliver('pull_request', payload(daysAgo(2)));
      expect(recent.status).toBe(202);
      await until('#5 removed', async () => (await suite.mq.get(queue.id)).entries.find((e) => e.number === 5 && e.status === 'removed'));
      const again = await emulator.redeliver(recent.id);
      expect({ status: again.status, duplicate: JSON.parse(again.response).data.duplicate }).toEqual({ status: 202, duplicate: true });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a flooding organization gets 429s with Retry-After while another organization's deliveries are accepted and applied",
    async () => {
      const flooder = await createTenant(app, 'flood');
      const flood = await githubIntegration(app, emulator, flooder.auth, 'flood');
      const floodRepo = await queueOf(flooder, flood.integrationId, flood.login);
      const victim = await createTenant(app, 'victim');
      const calm = await githubIntegration(app, emulator, victim.auth, 'victim');
      const calmRepo = await queueOf(victim, calm.integrationId, calm.login);
      const victimMq = new MergeQueueClient(() => app.getHttpServer(), victim.auth, prisma);
      await victimMq.enqueue(calmRepo.queue.id, 9, commit(calmRepo.path, calmRepo.main, { 'pr-9.txt': 'nine\n' }, 'PR 9'));
      // The flooder signs its own deliveries (it holds its integration's secret), as fast as it can.
      const floodHook = { url: `${hookUrl}?integration=${flood.integrationId}`, secret: flood.webhookSecret };
      const victimHook = { url: `${hookUrl}?integration=${calm.integrationId}`, secret: calm.webhookSecret };
      const answers: number[] = [];
      let victimDelivery;
      let refused;
      for (let i = 0; i < RATE + 20; i++) {
        emulator.webhook = floodHook;
        const d = await emulator.pullRequest(floodRepo.repository, 'closed', { number: 1000 + i, headSha: floodRepo.main, baseRef: 'main' });
        answers.push(d.status);
        if (d.status === 429) refused ??= d;
        if (i === RATE + 5) {
          emulator.webhook = victimHook;
          victimDelivery = await emulator.pullRequest(calmRepo.repository, 'closed', { number: 9, headSha: calmRepo.main, baseRef: 'main' });
        }
      }
      emulator.webhook = { url: hookUrl, secret };
      expect(answers.filter((s) => s === 202).length).toBe(RATE);
      expect(answers.filter((s) => s === 429).length).toBe(20);
      expect(refused?.response && JSON.parse(refused.response).code).toBe('dpa:Webhook:BUDGET_EXCEEDED');
      // Still over it: the answer says when to redeliver.
      const body = JSON.stringify({
        action: 'closed',
        number: 1,
        pull_request: { number: 1, base: { ref: 'main' } },
        repository: { id: floodRepo.repositoryId },
      });
      const over = await http()
        .post(`/webhooks/github?integration=${flood.integrationId}`)
        .set({
          'content-type': 'application/json',
          'x-github-event': 'pull_request',
          'x-github-delivery': randomUUID(),
          'x-hub-signature-256': signature256(body, flood.webhookSecret),
        })
        .send(body);
      expect(over.status).toBe(429);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      // The victim's delivery, sent in the middle of the flood, was accepted and applied.
      expect(victimDelivery?.status).toBe(202);
      await until('#9 removed', async () => (await victimMq.get(calmRepo.queue.id)).entries.find((e) => e.number === 9 && e.status === 'removed'));
      expect(await prisma.webhookDelivery.count({ where: { organizationId: flooder.organizationId } })).toBe(RATE);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an organization with as many deliveries stored and not yet applied as its budget gets 429 until the worker catches up',
    async () => {
      const tenant = await createTenant(app, 'backlog');
      const gh = await githubIntegration(app, emulator, tenant.auth, 'backlog');
      const repo = await queueOf(tenant, gh.integrationId, gh.login);
      const backlog = await prisma.webhookDelivery.createManyAndReturn({
        data: Array.from({ length: PENDING }, () => ({
          organizationId: tenant.organizationId,
          integrationId: gh.integrationId,
          deliveryId: randomUUID(),
          event: 'ping',
          payload: {},
        })),
        select: { id: true },
      });
      emulator.webhook = { url: `${hookUrl}?integration=${gh.integrationId}`, secret: gh.webhookSecret };
      try {
        const refused = await emulator.pullRequest(repo.repository, 'closed', { number: 1, headSha: repo.main, baseRef: 'main' });
        expect(refused.status).toBe(429);
        expect(JSON.parse(refused.response)).toMatchObject({ code: 'dpa:Webhook:BUDGET_EXCEEDED', metadata: { retryAfterSeconds: 60 } });
        await prisma.webhookDelivery.updateMany({ where: { id: { in: backlog.map((b) => b.id) } }, data: { processedAt: new Date(), payload: {} } });
        expect((await emulator.redeliver(refused.id)).status).toBe(202);
      } finally {
        emulator.webhook = { url: hookUrl, secret };
      }
    },
    TEST_TIMEOUT_MS,
  );
});
