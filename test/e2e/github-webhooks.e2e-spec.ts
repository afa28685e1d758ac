import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { AppConfig } from '@/common/config/app-config';
import { RedisService } from '@/common/redis/redis.module';
import { CommitStatusBusy } from '@/modules/merge-queues/commit-statuses/commit-status-ledger';
import { CommitStatusesProcessor } from '@/modules/merge-queues/commit-statuses.processor';
import { MergeQueuesRepository } from '@/modules/merge-queues/merge-queues.repository';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { WebhooksProcessor } from '@/modules/webhooks/webhooks.processor';
import { signature256 } from '@tools/git-emulator/emulator';
import { createTenant, type TestTenant } from '../support/factories';
import { createTestWorker } from '../support/app';
import type { GitProviderEmulator } from '../support/git';
import { commit, git, readFile } from '../support/git-repos';
import { finalEntries, type MergeQueueClient, type MqQueue } from '../support/merge-queue-client';
import { until } from '../support/processes';
import { appInstallationIntegration, type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';

/** Each case drives GitHub (the emulator), its webhooks and the worker through a few CI rounds. */
const TEST_TIMEOUT_MS = 90_000;

/**
 * A merge queue driven by GitHub webhooks: the emulator sends signed deliveries to the API's
 * POST /webhooks/github (listening on a port), an in-process worker applies them, and CI reports
 * only through `check_run` webhooks. Nothing here calls the check API.
 */
describe('GitHub webhooks (the provider emulator, POST /webhooks/github, in-process worker)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let worker: INestApplicationContext;
  let prisma: PrismaService;
  let owner: TestTenant;
  let login: string;
  let integrationId: string;
  let secret: string;
  let mq: MergeQueueClient;
  const http = () => request(app.getHttpServer());
  let config: AppConfig;
  // The GitHub App APP_INSTALLATION integrations act as (GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY).
  const appKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const APP_ID = '4242';

  beforeAll(async () => {
    // Its own database and queue prefix: its worker runs with the app's settings (see own-database.ts).
    // The API listens on a port: the emulator delivers its webhooks there.
    suite = await githubQueueSuite('webhooks', {
      listen: true,
      config: (base, started) => {
        started.app = { appId: APP_ID, publicKey: appKeys.publicKey };
        const privateKey = appKeys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
        return { ...base, git: { ...base.git, github: { ...base.git.github, app: { appId: APP_ID, privateKey } } } };
      },
    });
    ({ emulator, app, worker, prisma, owner, mq, config } = suite);
    ({ login, integrationId, webhookSecret: secret } = suite.github);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const { port } = app.getHttpServer().address() as AddressInfo;
    emulator.webhook = { url: `http://127.0.0.1:${port}/webhooks/github`, secret };
  }, 60_000);

  afterAll(async () => {
    if (suite) suite.emulator.webhook = undefined;
    await suite?.close();
  });

  /**
   * CI that reports only through GitHub: every candidate under test gets a `check_run` completed
   * webhook named `ci` (failure when the candidate holds `bad.txt`), until `done` holds.
   */
  async function ciByWebhooks(
    queueId: string,
    repository: string,
    path: string,
    done: (q: MqQueue) => boolean,
    report: (sha: string) => boolean = () => true,
  ): Promise<MqQueue> {
    const reported = new Set<string>();
    return until(`queue ${queueId} to settle`, async () => {
      const q = await mq.get(queueId);
      if (done(q)) return q;
      for (const b of q.batches) {
        // By batch, not by commit: a PR retried alone after a failure may be rebuilt as the very same
        // commit (same parents, tree and second), and its new CI run reports again.
        if (b.status !== 'testing' || !b.headSha || reported.has(b.id) || !report(b.headSha)) continue;
        reported.add(b.id);
        const delivery = await emulator.checkRunCompleted(repository, b.headSha, 'ci', readFile(path, b.headSha, 'bad.txt') === null ? 'success' : 'failure');
        expect(delivery.status).toBe(202);
      }
      return undefined;
    });
  }

  const testingBatch = (queueId: string) =>
    until(`a batch of ${queueId} testing`, async () => (await mq.get(queueId)).batches.find((b) => b.status === 'testing' && b.headSha));
  /** The merge queue's commit statuses GitHub received for `sha`, in order, as `state: description`. */
  const statusesOn = (sha: string) =>
    emulator.statuses.filter((x) => x.sha === sha && x.context === 'merge-queue/main').map((x) => `${x.state}: ${x.description}`);
  /** Waits until the last status on `sha` matches `last`, and returns them all. */
  const statusesUntil = (sha: string, last: RegExp) =>
    until(`a status on ${sha} matching ${last}`, async () => {
      const seen = statusesOn(sha);
      return seen.length > 0 && last.test(seen[seen.length - 1]) ? seen : undefined;
    });
  const isAncestor = (repo: string, a: string, b: string) => git(repo, 'rev-list', '--count', `${b}..${a}`) === '0';
  const deliveryRows = (deliveryId: string) => prisma.webhookDelivery.findMany({ where: { integrationId, deliveryId } });
  const applied = (deliveryId: string) =>
    until(`delivery ${deliveryId} applied`, async () => (await deliveryRows(deliveryId)).find((d) => d.processedAt !== null));
  /** A queue that re-queues a pushed PR (onHeadPush requeueIfApproved, issue 38), and an approval of PR `number`'s `heads` by the repository's owner. */
  const requeueApproved = async (queueId: string, repository: string, number: number, heads: string[]) => {
    await http()
      .patch(`/merge-queues/${queueId}/settings`)
      .set(owner.auth)
      .send({ data: { onHeadPush: 'requeueIfApproved' } })
      .expect(200);
    for (const head of heads) emulator.review(repository, number, login, 'APPROVED', head);
  };

  it(
    'lands PRs whose CI reports only through check_run webhooks, and ignores the push events of its own lands',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      const heads: string[] = [];
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      for (const n of [1, 2, 3]) {
        heads.push(commit(path, main, { [`pr-${n}.txt`]: `change ${n}\n` }, `PR ${n}`));
        await mq.enqueue(queue.id, n, heads[n - 1]);
      }
      // While paused, each PR head shows its place in the queue.
      for (const [i, sha] of heads.entries()) await statusesUntil(sha, new RegExp(`^pending: Queued: position ${i + 1}(,|$)`));
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      const q = await ciByWebhooks(queue.id, repository, path, (x) => x.entries.length === 3 && x.entries.every((e) => e.status === 'merged'));
      const head = git(path, 'rev-parse', 'main');
      expect(git(path, 'ls-tree', '--name-only', head).split('\n').sort()).toEqual(['README.md', 'pr-1.txt', 'pr-2.txt', 'pr-3.txt']);
      expect(q.batches.filter((b) => b.status === 'landed').every((b) => b.requiredChecks.every((c) => c.state === 'success'))).toBe(true);
      // The checks URL of a landed batch is the check run's details_url.
      expect(q.batches.filter((b) => b.status === 'landed').every((b) => (b as { checksUrl?: string }).checksUrl?.startsWith('https://ci.example.test/'))).toBe(
        true,
      );
      // GitHub announced every land as a push to main; each was recognised as the queue's own.
      const ownPushes = emulator.deliveries.filter(
        (d) => d.event === 'push' && d.body.includes(`"full_name":"${repository}"`) && d.body.includes('"ref":"refs/heads/main"'),
      );
      expect(ownPushes.length).toBeGreaterThan(0);
      for (const push of ownPushes)
        expect((await applied(push.id)).outcome).toMatch(
          /unchanged \((the base the queue already knows|.* is a candidate of the queue \(its own land\)|a land is in flight.*)\)/,
        );
      const events = await prisma.mergeQueueEvent.findMany({ where: { queueId: queue.id, type: 'baseMoved' } });
      expect(events).toEqual([]);
      // Each PR head went queued -> testing (linking the CI run once CI reported) -> merged, posted with the integration's token.
      for (const sha of heads) {
        const seen = await statusesUntil(sha, /^success: Merged by the merge queue$/);
        const firstTesting = seen.findIndex((x) => x.startsWith('pending: Testing'));
        expect(seen[0]).toMatch(/^pending: Queued: position \d(,|$)/);
        expect(firstTesting).toBeGreaterThan(0);
        expect(seen.slice(firstTesting + 1).every((x) => !x.startsWith('pending: Queued'))).toBe(true);
        expect(emulator.statuses.filter((x) => x.sha === sha).every((x) => x.by === login)).toBe(true);
      }
      const merged = emulator.statuses.filter((x) => heads.includes(x.sha) && x.state === 'success');
      expect(merged.every((x) => x.targetUrl?.startsWith(`http://api.test/view/merge-queues/${queue.id}/dpqv_`))).toBe(true);
      // Every landed candidate shows it landed.
      for (const b of q.batches.filter((x) => x.status === 'landed')) await statusesUntil(b.headSha as string, /^success: Landed #/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a failing check_run fails the PR; a check_run for a commit that is no candidate changes nothing',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      const head = commit(path, main, { 'bad.txt': 'breaks\n' }, 'PR 4');
      await mq.enqueue(queue.id, 4, head);
      const stray = await emulator.checkRunCompleted(repository, head, 'ci', 'success');
      expect(stray.status).toBe(202);
      expect((await applied(stray.id)).outcome).toMatch(/is no live candidate/);
      const q = await ciByWebhooks(queue.id, repository, path, (x) => finalEntries(x) && x.entries.length === 1);
      expect(q.entries[0].status).toBe('failed');
      expect(git(path, 'rev-parse', 'main')).toBe(main);
      // The PR shows why, linking the queue's page at the PR, which links the CI run that failed.
      const seen = await statusesUntil(head, /^failure: Failed: /);
      expect(seen[seen.length - 1]).toMatch(/ci/);
      const link = new URL(emulator.statuses.filter((x) => x.sha === head && x.state === 'failure').at(-1)?.targetUrl ?? '');
      expect(link.search).toBe('?pr=4');
      const page = await http().get(`${link.pathname}${link.search}`).expect(200);
      expect(page.text).toMatch(/<dt>CI run<\/dt><dd><a href="https:&#47;&#47;ci.example.test&#47;/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'synchronize during testing withdraws the batch; the new head is tested and lands, the old head never',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      const oldHead = commit(path, main, { 'pr-5.txt': 'first push\n' }, 'PR 5 first push');
      await mq.enqueue(queue.id, 5, oldHead);
      const first = await testingBatch(queue.id);
      expect(isAncestor(path, oldHead, first.headSha as string)).toBe(true);
      const newHead = commit(path, main, { 'pr-5.txt': 'second push\n' }, 'PR 5 second push');
      await requeueApproved(queue.id, repository, 5, [newHead]);
      const sync = await emulator.pullRequest(repository, 'synchronize', { number: 5, headSha: newHead, baseRef: 'main' });
      expect(sync.status).toBe(202);
      await until('the first batch withdrawn', async () => (await mq.get(queue.id)).batches.find((b) => b.id === first.id && b.status === 'withdrawn'));
      // The old candidate's CI passes late: it is no live candidate any more and lands nothing.
      const late = await emulator.checkRunCompleted(repository, first.headSha as string, 'ci', 'success');
      expect((await applied(late.id)).outcome).toMatch(/is no live candidate/);
      const q = await ciByWebhooks(queue.id, repository, path, (x) => x.entries[0]?.status === 'merged');
      expect(q.entries[0].headSha).toBe(newHead);
      const landed = git(path, 'rev-parse', 'main');
      expect(readFile(path, landed, 'pr-5.txt')).toBe('second push\n');
      expect(isAncestor(path, newHead, landed)).toBe(true);
      expect(isAncestor(path, oldHead, landed)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a closed PR leaves the queue; the others land',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      await mq.enqueue(queue.id, 6, commit(path, main, { 'pr-6.txt': 'six\n' }, 'PR 6'));
      const seven = commit(path, main, { 'pr-7.txt': 'seven\n' }, 'PR 7');
      await mq.enqueue(queue.id, 7, seven);
      const closed = await emulator.pullRequest(repository, 'closed', { number: 7, headSha: seven, baseRef: 'main' });
      expect(closed.status).toBe(202);
      await until('#7 removed', async () => (await mq.get(queue.id)).entries.find((e) => e.number === 7 && e.status === 'removed'));
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      const q = await ciByWebhooks(queue.id, repository, path, (x) => x.entries.length === 2 && finalEntries(x));
      expect(Object.fromEntries(q.entries.map((e) => [e.number, e.status]))).toEqual({ 6: 'merged', 7: 'removed' });
      expect(readFile(path, git(path, 'rev-parse', 'main'), 'pr-7.txt')).toBeNull();
      await statusesUntil(seven, /^error: Removed from the merge queue$/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "synchronize on a queue with path groups asks the new head's changed paths: the entry moves to the lanes of what it now changes",
    async () => {
      const groups = [
        { name: 'api', paths: ['api-*'] },
        { name: 'web', paths: ['web-*'] },
      ];
      const { repository, path, main, queue } = await suite.newQueue({
        files: { 'api-main.ts': 'api\n', 'web-main.ts': 'web\n' },
        settings: { pathGroups: groups },
      });
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const entry = await mq.enqueue(queue.id, 12, commit(path, main, { 'api-main.ts': 'api 12\n' }, 'PR 12'));
      expect((await mq.details(queue.id, entry.id)).lanes).toEqual(['api']);
      const moved = commit(path, main, { 'web-main.ts': 'web 12\n' }, 'PR 12, pushed again');
      await requeueApproved(queue.id, repository, 12, [moved]);
      const sync = await emulator.pullRequest(repository, 'synchronize', { number: 12, headSha: moved, baseRef: 'main' });
      expect(sync.status).toBe(202);
      await applied(sync.id);
      const row = await prisma.mergeQueueEntry.findUniqueOrThrow({ where: { id: entry.id }, select: { headSha: true, changedPaths: true, lanes: true } });
      expect(row).toEqual({ headSha: moved, changedPaths: ['web-main.ts'], lanes: ['web'] });
      expect((await mq.details(queue.id, entry.id)).lanes).toEqual(['web']);
      // The planner state too: the pushed head's lanes came with the push (what blame reads).
      const state = await app.get(MergeQueuesRepository, { strict: false }).plannerState(owner.organizationId, queue.id);
      expect(state!.entries.find((e) => e.id === entry.id)).toMatchObject({ headSha: moved, lanes: ['web'] });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a push to the base from outside the queue re-plans: the stale candidate is withdrawn and the PR lands on the new base',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      await mq.enqueue(queue.id, 8, commit(path, main, { 'pr-8.txt': 'eight\n' }, 'PR 8'));
      const first = await testingBatch(queue.id);
      // Someone pushes to main directly (not through the API, so GitHub's push webhook is sent by hand).
      const outside = commit(path, main, { 'hotfix.txt': 'hotfix\n' }, 'hotfix pushed by a person');
      git(path, 'update-ref', 'refs/heads/main', outside, main);
      const push = await emulator.push(repository, 'refs/heads/main', main, outside, 'a-person');
      expect(push.status).toBe(202);
      expect((await applied(push.id)).outcome).toMatch(/applied \(the base moved to/);
      await until('the stale batch withdrawn', async () => (await mq.get(queue.id)).batches.find((b) => b.id === first.id && b.status === 'withdrawn'));
      const q = await ciByWebhooks(
        queue.id,
        repository,
        path,
        (x) => x.entries[0]?.status === 'merged',
        (sha) => sha !== first.headSha,
      );
      const landed = git(path, 'rev-parse', 'main');
      expect(readFile(path, landed, 'hotfix.txt')).toBe('hotfix\n');
      expect(readFile(path, landed, 'pr-8.txt')).toBe('eight\n');
      expect(isAncestor(path, outside, landed)).toBe(true);
      expect(q.batches.find((b) => b.id === first.id)?.status).toBe('withdrawn');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a redelivered webhook is applied once',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      await mq.enqueue(queue.id, 9, commit(path, main, { 'pr-9.txt': 'one\n' }, 'PR 9'));
      const second = commit(path, main, { 'pr-9.txt': 'two\n' }, 'PR 9 again');
      const third = commit(path, main, { 'pr-9.txt': 'three\n' }, 'PR 9 once more');
      await requeueApproved(queue.id, repository, 9, [second, third]);
      const toSecond = await emulator.pullRequest(repository, 'synchronize', { number: 9, headSha: second, baseRef: 'main' });
      await applied(toSecond.id);
      const toThird = await emulator.pullRequest(repository, 'synchronize', { number: 9, headSha: third, baseRef: 'main' });
      await applied(toThird.id);
      // GitHub's "Redeliver" of the first: same id, same bytes. Applied again it would set the head back.
      const again = await emulator.redeliver(toSecond.id);
      expect(again.status).toBe(202);
      expect(JSON.parse(again.response)).toEqual({ data: { deliveryId: toSecond.id, event: 'pull_request', duplicate: true } });
      expect(JSON.parse(toSecond.response).data.duplicate).toBe(false);
      expect(await deliveryRows(toSecond.id)).toHaveLength(1);
      const q = await mq.get(queue.id);
      expect(q.entries[0].headSha).toBe(third);
      // In the order applied: each head update raised the queue's revision.
      const trail = await prisma.mergeQueueEvent.findMany({
        where: { queueId: queue.id, type: 'headUpdated' },
        orderBy: [{ revision: 'asc' }, { createdAt: 'asc' }],
      });
      expect(trail.map((e) => (e.detail as { deliveryId?: string }).deliveryId)).toEqual([toSecond.id, toThird.id]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an unsigned, wrongly signed or unknown delivery is a 401 with the error body and changes nothing',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const head = commit(path, main, { 'pr-10.txt': 'ten\n' }, 'PR 10');
      await mq.enqueue(queue.id, 10, head);
      const before = await mq.get(queue.id);
      // One signed delivery (closes #10), so the queue shows what a verified one changes.
      expect((await emulator.pullRequest(repository, 'closed', { number: 10, headSha: head, baseRef: 'main' })).status).toBe(202);
      const eleven = commit(path, main, { 'pr-11.txt': 'eleven\n' }, 'PR 11');
      await mq.enqueue(queue.id, 11, eleven);
      const payload = {
        action: 'closed',
        number: 11,
        pull_request: { number: 11, head: { sha: eleven }, base: { ref: 'main' } },
        repository: { full_name: repository },
      };
      const goodHex = signature256(JSON.stringify(payload), secret).slice(7);
      const attempts = [
        { signature: null },
        { secret: 'not-the-secret' },
        { signature: `sha256=${goodHex.slice(0, 62)}` },
        { signature: `sha256=${goodHex.slice(0, 62)}zz` },
        { signature: `sha1=${goodHex.slice(0, 40)}` },
      ];
      for (const options of attempts) {
        const delivery = await emulator.deliver('pull_request', payload, options);
        expect(delivery.status).toBe(401);
        const body = JSON.parse(delivery.response);
        expect(body.code).toBe('dpa:Webhook:SIGNATURE_INVALID');
        expect(typeof body.requestId).toBe('string');
        expect(await deliveryRows(delivery.id)).toEqual([]);
      }
      // Signed with the right secret but for a repository no integration of ours knows.
      const unknown = await emulator.deliver('pull_request', { ...payload, repository: { full_name: `${login}/nobody-connected-this` } });
      expect(unknown.status).toBe(401);
      // A body changed after signing (one byte) is refused too.
      const tampered = await emulator.deliver('pull_request', payload, { signature: signature256(JSON.stringify({ ...payload, number: 12 }), secret) });
      expect(tampered.status).toBe(401);
      await until('#10 removed by the signed delivery', async () => (await mq.get(queue.id)).entries.find((e) => e.number === 10 && e.status === 'removed'));
      const after = await mq.get(queue.id);
      expect(after.entries.find((e) => e.number === 11)?.status).toBe('queued');
      expect(BigInt(after.revision)).toBeGreaterThan(BigInt(before.revision));
      const eventsFor11 = await prisma.mergeQueueEvent.findMany({ where: { queueId: queue.id, type: 'remove' } });
      expect(eventsFor11).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'rotating the webhook secret: the new one verifies, the old one is refused; the secret is never returned again',
    async () => {
      const { repository, path, main, queue, source } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const head = commit(path, main, { 'pr-12.txt': 'twelve\n' }, 'PR 12');
      await mq.enqueue(queue.id, 12, head);
      const rotated = await http().post(`/integrations/${integrationId}/webhook-secret`).set(owner.auth).expect(200);
      const fresh = rotated.body.data.webhookSecret as string;
      expect(fresh).not.toBe(secret);
      const got = await http().get(`/integrations/${integrationId}`).set(owner.auth).expect(200);
      expect(JSON.stringify(got.body)).not.toContain(fresh);
      const stored = await prisma.integration.findUniqueOrThrow({ where: { id: integrationId } });
      expect(Buffer.from(stored.encryptedWebhookSecret as Uint8Array).includes(Buffer.from(fresh))).toBe(false);
      const old = await emulator.pullRequest(repository, 'closed', { number: 12, headSha: head, baseRef: 'main' });
      expect(old.status).toBe(401);
      emulator.webhook = { ...(emulator.webhook as { url: string; secret: string }), secret: fresh };
      secret = fresh;
      const now = await emulator.pullRequest(repository, 'closed', { number: 12, headSha: head, baseRef: 'main' });
      expect(now.status).toBe(202);
      await until('#12 removed', async () => (await mq.get(queue.id)).entries.find((e) => e.number === 12 && e.status === 'removed'));
      // Another organization cannot rotate it (404), and unknown events are accepted and ignored.
      const other = await createTenant(app, 'gh-webhooks-other');
      await http().post(`/integrations/${integrationId}/webhook-secret`).set(other.auth).expect(404);
      // Routed by GitHub's id of the repository (the code source's foreignId), as GitHub sends it.
      const { foreignId } = await prisma.codeSource.findUniqueOrThrow({ where: { id: source.id } });
      const ping = await emulator.deliver('ping', { zen: 'Keep it logically awesome.', repository: { id: Number(foreignId), full_name: repository } });
      expect(ping.status).toBe(202);
      expect((await applied(ping.id)).outcome).toBe('ignored: event ping is not acted on');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an app installation lands as the GitHub App: an installation token for a JWT the emulator verified moves the base, and posts the statuses',
    async () => {
      // An APP_INSTALLATION integration as the install callback leaves it (the installer's user token sealed, the installation id).
      const { installation, ...row } = await appInstallationIntegration(app, emulator, owner, login);
      const appSecret = (await http().post(`/integrations/${row.id}/webhook-secret`).set(owner.auth).expect(200)).body.data.webhookSecret as string;
      const name = `repo-${randomUUID().slice(0, 8)}`;
      const { path } = emulator.addRepository(login, name);
      const repository = `${login}/${name}`;
      const main = commit(path, git(path, 'rev-parse', 'main'), { 'README.md': 'hello\n' }, 'initial');
      git(path, 'update-ref', 'refs/heads/main', main);
      const source = await http()
        .post('/code-sources')
        .set(owner.auth)
        .send({ data: { integrationId: row.id, repository } })
        .expect(201);
      const created = await http()
        .post('/merge-queues')
        .set(owner.auth)
        .send({ data: { codeSourceId: source.body.data.id, baseRef: 'main', requiredChecks: ['ci'], checkTimeoutSeconds: 600 } });
      expect({
        status: created.status,
        body: created.status === 201 ? undefined : created.body,
        requests: created.status === 201 ? undefined : emulator.requests.slice(-3),
      }).toEqual({ status: 201 });
      const queue = created.body.data as MqQueue;
      const previous = emulator.webhook;
      // The app's webhook: its deliveries carry the installation id, signed with this integration's secret.
      emulator.webhook = { url: (previous as { url: string }).url, secret: appSecret, installationId: installation.id };
      try {
        const head = commit(path, main, { 'pr-20.txt': 'twenty\n' }, 'PR 20');
        await mq.enqueue(queue.id, 20, head);
        const q = await ciByWebhooks(queue.id, repository, path, (x) => x.entries[0]?.status === 'merged');
        expect(q.entries[0].status).toBe('merged');
        const landed = git(path, 'rev-parse', 'main');
        expect(readFile(path, landed, 'pr-20.txt')).toBe('twenty\n');
        // The emulator recorded the credential of every ref the queue moved: the app's bot, never the person.
        const moves = emulator.refMoves.filter((m) => m.repository === repository);
        expect(moves.find((m) => m.ref === 'refs/heads/main' && m.sha === landed)?.by).toBe(emulator.botLogin);
        expect(moves.every((m) => m.by === emulator.botLogin)).toBe(true);
        expect(git(path, 'log', '-1', '--format=%an', landed)).toBe(emulator.botLogin);
        const seen = await statusesUntil(head, /^success: Merged by the merge queue$/);
        expect(seen.length).toBeGreaterThan(1);
        expect(emulator.statuses.filter((x) => x.sha === head).every((x) => x.by === emulator.botLogin)).toBe(true);
        // One exchange per process (the API read the base when the queue was created; the worker built,
        // landed and posted), each cached for every later call; the tokens are stored nowhere.
        const tokens = emulator.installationTokens.filter((t) => t.installationId === installation.id);
        expect(tokens).toHaveLength(2);
        const stored = await prisma.integration.findUniqueOrThrow({ where: { id: row.id } });
        for (const { token } of tokens) expect(Buffer.from(stored.encryptedCredentials as Uint8Array).includes(Buffer.from(token))).toBe(false);
        const deliveries = await prisma.webhookDelivery.findMany({ where: { integrationId: row.id } });
        expect(deliveries.length).toBeGreaterThan(0);
        for (const { token } of tokens) expect(JSON.stringify(deliveries)).not.toContain(token);
        // A JWT signed with another key gets no token.
        const forged = generateKeyPairSync('rsa', { modulusLength: 2048 });
        const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url');
        const now = Math.floor(Date.now() / 1000);
        const claims = Buffer.from(JSON.stringify({ iss: APP_ID, iat: now - 30, exp: now + 540 })).toString('base64url');
        const jwt = `${header}.${claims}.${sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), forged.privateKey).toString('base64url')}`;
        const refused = await fetch(`${emulator.url}/app/installations/${installation.id}/access_tokens`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${jwt}` },
        });
        expect(refused.status).toBe(401);
        // The installation deleted on GitHub: the integration needs to be connected again.
        const gone = await emulator.deliver('installation', { action: 'deleted' });
        expect(gone.status).toBe(202);
        await until('the integration revoked', async () => (await prisma.integration.findUniqueOrThrow({ where: { id: row.id } })).status === 'REVOKED');
      } finally {
        emulator.webhook = previous;
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the sweep applies a stored delivery whose job was lost, and deletes applied ones past retention',
    async () => {
      const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
      const lost = await prisma.webhookDelivery.create({
        data: {
          organizationId: owner.organizationId,
          integrationId,
          deliveryId: randomUUID(),
          event: 'ping',
          payload: { zen: 'lost' },
          createdAt: minutesAgo(2),
        },
      });
      const fresh = await prisma.webhookDelivery.create({
        data: { organizationId: owner.organizationId, integrationId, deliveryId: randomUUID(), event: 'ping', payload: { zen: 'just stored' } },
      });
      const old = await prisma.webhookDelivery.create({
        data: {
          organizationId: owner.organizationId,
          integrationId,
          deliveryId: randomUUID(),
          event: 'ping',
          payload: {},
          outcome: 'ignored',
          processedAt: minutesAgo(31 * 24 * 60),
          createdAt: minutesAgo(31 * 24 * 60),
        },
      });
      const result = await worker.get(WebhooksProcessor).sweep();
      expect(result.requeued).toBeGreaterThanOrEqual(1);
      expect(result.purged).toBeGreaterThanOrEqual(1);
      expect((await applied(lost.deliveryId)).outcome).toBe('ignored: event ping is not acted on');
      expect(await prisma.webhookDelivery.findUnique({ where: { id: old.id } })).toBeNull();
      // One stored a moment ago is still the API's own job to hand over: the sweep leaves it.
      expect((await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: fresh.id } })).processedAt).toBeNull();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'two worker processes agree on the newest status of a commit: an older revision is never posted after a newer one',
    async () => {
      const { path, main, queue } = await suite.newQueue();
      const sha = commit(path, main, { 'pr-9.txt': 'nine\n' }, 'PR 9');
      // A second worker process on the same Postgres and Redis (the first is `worker`).
      const second = await createTestWorker(config);
      try {
        const [one, two] = [worker, second].map((w) => w.get(CommitStatusesProcessor, { strict: false }));
        const post = (p: CommitStatusesProcessor, revision: number, description: string) =>
          p.post({ queueId: queue.id, revision, status: { sha, state: 'pending', description, subject: { kind: 'entry', number: 9 } } });
        expect(await post(one, 7, 'seven')).toBe('pending: seven');
        // A late retry in the other process, decided at an older revision, is skipped.
        expect(await post(two, 5, 'five')).toBe('superseded');
        expect(statusesOn(sha)).toEqual(['pending: seven']);
        // Two at once: they take turns, and whatever the order the newer is the last GitHub shows.
        const results = await Promise.all([post(two, 9, 'nine'), post(one, 8, 'eight')]);
        expect(results[0]).toBe('pending: nine');
        expect(['pending: eight', 'superseded']).toContain(results[1]);
        expect(statusesOn(sha).at(-1)).toBe('pending: nine');
        // A turn held by a process that stopped answering: the post gives up after its wait, and BullMQ retries it.
        const turn = `${config.queuePrefix}:mq-status:{${queue.id}:${sha}:entry}:turn`;
        await worker.get(RedisService, { strict: false }).client.set(turn, 'someone-else', 'PX', 60_000);
        await expect(post(one, 10, 'ten')).rejects.toBeInstanceOf(CommitStatusBusy);
        expect(statusesOn(sha).at(-1)).toBe('pending: nine');
      } finally {
        await second.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
