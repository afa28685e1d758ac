import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import type { GitProviderEmulator } from '../support/git';
import { commit, git, readFile } from '../support/git-repos';
import type { MergeQueueClient, MqQueue } from '../support/merge-queue-client';
import { until } from '../support/processes';
import { appInstallationIntegration, type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';

const TEST_TIMEOUT_MS = 90_000;

type Json = Record<string, any>;

/** GitHub's own example deliveries (`@octokit/webhooks-examples`, api.github.com), by event. */
const EXAMPLES = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'node_modules', '@octokit', 'webhooks-examples', 'api.github.com', 'index.json'), 'utf8'),
) as {
  name: string;
  examples: Json[];
}[];

/** A deep copy of GitHub's first example of `event` (with `action`, when given) that `where` accepts. */
function example(event: string, action?: string, where: (x: Json) => boolean = () => true): Json {
  const found = EXAMPLES.find((e) => e.name === event)?.examples.find((x) => (action === undefined || x.action === action) && where(x));
  if (!found) throw new Error(`no example ${event} ${action ?? ''}`);
  return structuredClone(found);
}

/**
 * The example pointed at the test's repository, rewritten only in its identifiers: the repository's
 * `full_name`, `name`, `id` and owner `login`, and the installation id. Everything else is GitHub's.
 */
function pointedAt(payload: Json, repository: { fullName: string; id: number }): Json {
  const [owner, name] = repository.fullName.split('/');
  if (payload.repository) {
    payload.repository.full_name = repository.fullName;
    payload.repository.name = name;
    payload.repository.id = repository.id;
    if (payload.repository.owner) payload.repository.owner.login = owner;
  }
  return payload;
}

/**
 * The example made today's: its own timestamp (the one docs/webhooks.md says a delivery is dated by;
 * GitHub's examples are years old, and a delivery that old is refused as a replay) set to now.
 */
function fresh(event: string, payload: Json): Json {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (event === 'pull_request') payload.pull_request.updated_at = now;
  if (event === 'check_run') payload.check_run.completed_at = now;
  if (event === 'check_suite') payload.check_suite.updated_at = now;
  if (event === 'status') payload.updated_at = now;
  if (event === 'push') payload.repository.pushed_at = Math.floor(Date.now() / 1000);
  if (event === 'installation') {
    payload.installation.updated_at = now;
    if (payload.installation.suspended_at) payload.installation.suspended_at = now;
  }
  return payload;
}

/**
 * Real GitHub deliveries drive the queue: GitHub's example payloads, rewritten only in their
 * identifiers (repository, shas, PR number, installation id) and dated today (`fresh`), signed with the integration's secret and posted to
 * POST /webhooks/github; the queue does what docs/webhooks.md says each event means.
 */
describe('GitHub webhooks from GitHub’s own example payloads (POST /webhooks/github, in-process worker)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let prisma: PrismaService;
  let mq: MergeQueueClient;

  beforeAll(async () => {
    suite = await githubQueueSuite('webhook_examples', { listen: true });
    ({ emulator, prisma, mq } = suite);
    const { port } = suite.app.getHttpServer().address() as AddressInfo;
    // Only the examples are sent: the emulator adds nothing (no installation id) and signs with the integration's secret.
    emulator.webhook = { url: `http://127.0.0.1:${port}/webhooks/github`, secret: suite.github.webhookSecret };
  }, 60_000);

  afterAll(async () => {
    if (suite) suite.emulator.webhook = undefined;
    await suite?.close();
  });

  const applied = (deliveryId: string) =>
    until(`delivery ${deliveryId} applied`, async () =>
      (await prisma.webhookDelivery.findMany({ where: { integrationId: suite.github.integrationId, deliveryId } })).find((d) => d.processedAt !== null),
    );
  const testingBatch = (queueId: string) =>
    until(`a batch of ${queueId} testing`, async () => (await mq.get(queueId)).batches.find((b) => b.status === 'testing' && b.headSha));
  const repositoryOf = (fullName: string) => ({ fullName, id: emulator.repos.get(fullName.toLowerCase())?.id ?? 0 });

  /** Sends `payload` as GitHub would (event header, signature) and waits until the worker applied it. */
  async function send(event: string, payload: Json) {
    const delivery = await emulator.deliver(event, fresh(event, payload));
    expect(delivery.status).toBe(202);
    return applied(delivery.id);
  }

  it(
    'check_run completed (GitHub’s example, its check name required) lands the candidate it names',
    async () => {
      const check = example('check_run', 'completed', (x) => x.check_run.conclusion === 'success');
      const { repository, path, main, queue } = await suite.newQueue({ settings: { requiredChecks: [check.check_run.name] } });
      await mq.enqueue(queue.id, 1, commit(path, main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      const batch = await testingBatch(queue.id);
      const payload = pointedAt(check, repositoryOf(repository));
      payload.check_run.head_sha = batch.headSha;
      expect(payload.check_run.conclusion).toBe('success');
      await send('check_run', payload);
      await until('#1 merged', async () => ((await mq.get(queue.id)).entries[0]?.status === 'merged' ? true : undefined));
      expect(readFile(path, git(path, 'rev-parse', 'main'), 'pr-1.txt')).toBe('one\n');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'status (GitHub’s example, its context required from commit statuses) is recorded on the candidate as the example’s state says',
    async () => {
      const status = example('status');
      const { repository, path, main, queue } = await suite.newQueue({ settings: { requiredChecks: [status.context] } });
      // A CI that reports by commit status says so (`source: status`, docs/webhooks.md); a plain name counts check runs only.
      await request(suite.app.getHttpServer())
        .patch(`/merge-queues/${queue.id}/settings`)
        .set(suite.owner.auth)
        .send({ data: { requiredChecks: [{ name: status.context, source: 'status' }] } })
        .expect(200);
      await mq.enqueue(queue.id, 2, commit(path, main, { 'pr-2.txt': 'two\n' }, 'PR 2'));
      const batch = await testingBatch(queue.id);
      const payload = pointedAt(status, repositoryOf(repository));
      payload.sha = batch.headSha;
      payload.commit.sha = batch.headSha;
      const row = await send('status', payload);
      // The example's state decides: success lands, failure or error fails the batch, pending is no result.
      const expected: Record<string, string> = { success: 'merged', failure: 'failed', error: 'failed' };
      if (status.state === 'pending') expect(row.outcome).toMatch(/pending/);
      else await until(`#2 ${expected[status.state]}`, async () => ((await mq.get(queue.id)).entries[0]?.status === expected[status.state] ? true : undefined));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'check_suite completed (GitHub’s example) is read as the docs say: named by its app’s slug',
    async () => {
      const suiteExample = example('check_suite', 'completed');
      const { repository, path, main, queue } = await suite.newQueue({ settings: { requiredChecks: ['ci', 'other'] } });
      await mq.enqueue(queue.id, 3, commit(path, main, { 'pr-3.txt': 'three\n' }, 'PR 3'));
      const batch = await testingBatch(queue.id);
      const payload = pointedAt(suiteExample, repositoryOf(repository));
      payload.check_suite.head_sha = batch.headSha;
      await send('check_suite', payload);
      // The example's app is no required check here: it changes nothing, and the batch still waits.
      const q: MqQueue = await mq.get(queue.id);
      expect(q.batches.find((b) => b.id === batch.id)?.status).toBe('testing');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'pull_request synchronize (GitHub’s example) for a queued PR: its old head is never landed',
    async () => {
      const sync = example('pull_request', 'synchronize');
      const { repository, path, main, queue } = await suite.newQueue();
      const oldHead = commit(path, main, { 'pr-4.txt': 'first\n' }, 'PR 4');
      await mq.enqueue(queue.id, 4, oldHead);
      const batch = await testingBatch(queue.id);
      const newHead = commit(path, main, { 'pr-4.txt': 'second\n' }, 'PR 4 again');
      const payload = pointedAt(sync, repositoryOf(repository));
      payload.number = 4;
      payload.pull_request.number = 4;
      payload.pull_request.head.sha = newHead;
      payload.pull_request.base.ref = 'main';
      payload.before = oldHead;
      payload.after = newHead;
      await send('pull_request', payload);
      await until('the old candidate withdrawn', async () => (await mq.get(queue.id)).batches.find((b) => b.id === batch.id && b.status === 'withdrawn'));
      const entry = (await mq.get(queue.id)).entries.find((e) => e.number === 4);
      // Re-queued with the new head, or removed (a queue that removes on a push): never the old head.
      expect(entry?.status === 'removed' || entry?.headSha === newHead).toBe(true);
      expect(git(path, 'rev-parse', 'main')).toBe(main);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'pull_request closed (GitHub’s example) removes the PR from the queue',
    async () => {
      const closed = example('pull_request', 'closed');
      const { repository, path, main, queue } = await suite.newQueue();
      const head = commit(path, main, { 'pr-5.txt': 'five\n' }, 'PR 5');
      await mq.enqueue(queue.id, 5, head);
      const payload = pointedAt(closed, repositoryOf(repository));
      payload.number = 5;
      payload.pull_request.number = 5;
      payload.pull_request.head.sha = head;
      payload.pull_request.base.ref = 'main';
      await send('pull_request', payload);
      await until('#5 removed', async () => (await mq.get(queue.id)).entries.find((e) => e.number === 5 && e.status === 'removed'));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'push (GitHub’s example) to the base from outside re-plans the queue',
    async () => {
      // GitHub's example of a branch push: a branch created (before is zeros) with one commit.
      const push = example('push', undefined, (x) => String(x.ref).startsWith('refs/heads/') && !x.deleted);
      const { repository, path, main, queue } = await suite.newQueue();
      await mq.enqueue(queue.id, 6, commit(path, main, { 'pr-6.txt': 'six\n' }, 'PR 6'));
      const batch = await testingBatch(queue.id);
      const outside = commit(path, main, { 'hotfix.txt': 'hotfix\n' }, 'hotfix');
      git(path, 'update-ref', 'refs/heads/main', outside, main);
      const payload = pointedAt(push, repositoryOf(repository));
      payload.ref = 'refs/heads/main';
      payload.after = outside;
      if (payload.head_commit) payload.head_commit.id = outside;
      const row = await send('push', payload);
      expect(row.outcome).toMatch(/applied \(the base moved to/);
      await until('the stale batch withdrawn', async () => (await mq.get(queue.id)).batches.find((b) => b.id === batch.id && b.status === 'withdrawn'));
    },
    TEST_TIMEOUT_MS,
  );

  /** An APP_INSTALLATION integration of the tenant as the install callback leaves it, with its webhook secret. */
  async function appIntegration() {
    const login = suite.github.login;
    const { installation, ...row } = await appInstallationIntegration(suite.app, emulator, suite.owner, login);
    const secret = (await request(suite.app.getHttpServer()).post(`/integrations/${row.id}/webhook-secret`).set(suite.owner.auth).expect(200)).body.data
      .webhookSecret as string;
    return { id: row.id, installationId: installation.id, secret };
  }

  it.each([
    ['deleted', 'REVOKED'],
    ['suspend', 'NEEDS_ATTENTION'],
  ])(
    'installation %s (GitHub’s example, its installation id rewritten) leaves the integration %s',
    async (action, status) => {
      const integration = await appIntegration();
      const payload = example('installation', action);
      payload.installation.id = integration.installationId;
      const previous = emulator.webhook!;
      emulator.webhook = { url: previous.url, secret: integration.secret };
      try {
        const delivery = await emulator.deliver('installation', fresh('installation', payload));
        expect(delivery.status).toBe(202);
      } finally {
        emulator.webhook = previous;
      }
      await until(`the integration ${status}`, async () =>
        (await prisma.integration.findUniqueOrThrow({ where: { id: integration.id } })).status === status ? true : undefined,
      );
    },
    TEST_TIMEOUT_MS,
  );
});
