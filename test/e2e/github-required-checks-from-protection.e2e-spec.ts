import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import type { TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, git, readFile } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { MergeQueueClient, MqQueue } from '../support/merge-queue-client';
import { until } from '../support/processes';

const TEST_TIMEOUT_MS = 90_000;

/** The GitHub App GitHub expects `build` from, and another app installed on the repository. */
const CI_APP = { id: 4711, slug: 'ci-app' };
const OTHER_APP = { id: 666, slug: 'other-app' };

type Json = Record<string, any>;

/** GitHub's own example `branch_protection_rule` deliveries (`@octokit/webhooks-examples`). */
const PROTECTION_EXAMPLES = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'node_modules', '@octokit', 'webhooks-examples', 'api.github.com', 'index.json'), 'utf8')) as {
    name: string;
    examples: Json[];
  }[]
).find((e) => e.name === 'branch_protection_rule')!.examples;

/**
 * `requiredChecksFrom: branchProtection` (issue 39): a queue takes the checks GitHub requires on its
 * base branch, from the protection rule and the rulesets (names and the app expected for each), and
 * follows GitHub when they change (webhooks through POST /webhooks/github, applied by the
 * in-process worker) or when asked (POST .../settings/required-checks/refresh).
 */
describe('Required checks from GitHub branch protection and rulesets (emulator, webhooks, in-process worker)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  let login: string;
  let integrationId: string;
  let webhook: NonNullable<GitProviderEmulator['webhook']>;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    suite = await githubQueueSuite('required_checks_protection', { webhooks: true });
    ({ emulator, app, prisma, owner, mq } = suite);
    ({ login, integrationId } = suite.github);
    if (!suite.webhook) throw new Error('the suite delivers webhooks to the API');
    webhook = suite.webhook;
  }, 60_000);

  afterAll(() => suite?.close());

  /** A GitHub repository on the emulator, connected as a code source (no queue yet). */
  async function newRepository() {
    const name = `repo-${randomUUID().slice(0, 8)}`;
    const { path } = emulator.addRepository(login, name);
    const main = commit(path, git(path, 'rev-parse', 'main'), { 'README.md': 'hello\n' }, 'initial');
    git(path, 'update-ref', 'refs/heads/main', main);
    const source = await http()
      .post('/code-sources')
      .set(owner.auth)
      .send({ data: { integrationId, repository: `${login}/${name}` } })
      .expect(201);
    return { repository: `${login}/${name}`, path, main, codeSourceId: source.body.data.id as string };
  }
  const createQueue = (codeSourceId: string, extra: Record<string, unknown> = {}) =>
    http()
      .post('/merge-queues')
      .set(owner.auth)
      .send({ data: { codeSourceId, baseRef: 'main', checkTimeoutSeconds: 600, settings: { requiredChecksFrom: 'branchProtection' }, ...extra } });
  const settingsOf = async (queueId: string) => (await http().get(`/merge-queues/${queueId}/settings`).set(owner.auth).expect(200)).body.data;
  const names = async (queueId: string) => (await settingsOf(queueId)).requiredChecks.map((c: { name: string }) => c.name);
  const deliveryRow = (deliveryId: string) => prisma.webhookDelivery.findFirst({ where: { integrationId, deliveryId } });
  const applied = (deliveryId: string) =>
    until(`delivery ${deliveryId} applied`, async () => {
      const row = await deliveryRow(deliveryId);
      return row?.processedAt ? row : undefined;
    });
  const testingBatch = (queueId: string, not: string[] = []) =>
    until(`a batch of ${queueId} testing`, async () => (await mq.get(queueId)).batches.find((b) => b.status === 'testing' && b.headSha && !not.includes(b.id)));
  const configureEvents = (queueId: string) =>
    prisma.mergeQueueEvent.findMany({ where: { queueId, type: 'configure' }, orderBy: [{ revision: 'asc' }, { createdAt: 'asc' }] });
  /** Changes GitHub without telling the API (no webhook): only a read on demand can see it. */
  async function quietly<T>(change: () => Promise<T>): Promise<T> {
    emulator.webhook = undefined;
    try {
      return await change();
    } finally {
      emulator.webhook = webhook;
    }
  }

  it(
    'a queue created from branch protection requires what GitHub requires: names and apps, from the protection rule and from a ruleset; only the expected app’s runs count',
    async () => {
      const { repository, path, main, codeSourceId } = await newRepository();
      const rulesetId = await quietly(async () => {
        await emulator.setBranchProtection(repository, 'main', [{ context: 'build', appId: CI_APP.id }, { context: 'lint' }]);
        return (
          await emulator.setRuleset(repository, { name: 'main', include: ['~DEFAULT_BRANCH'], checks: [{ context: 'e2e', integrationId: OTHER_APP.id }] })
        ).ruleset.id;
      });
      await quietly(() => emulator.setRuleset(repository, { name: 'release', include: ['refs/heads/release/*'], checks: [{ context: 'docs' }] }));
      const created = await createQueue(codeSourceId).expect(201);
      const queue = created.body.data as MqQueue;
      const shown = await settingsOf(queue.id);
      expect(shown).toMatchObject({
        requiredChecksFrom: 'branchProtection',
        requiredChecks: [
          { name: 'build', source: 'checkRun', app: String(CI_APP.id), from: [{ kind: 'branchProtection' }] },
          { name: 'lint', source: 'checkRun', from: [{ kind: 'branchProtection' }] },
          { name: 'e2e', source: 'checkRun', app: String(OTHER_APP.id), from: [{ kind: 'ruleset', rulesetId, rulesetSource: repository }] },
        ],
        requiredChecksRead: { readAt: expect.any(String) },
      });
      // The ruleset on release/* does not apply to main; `lint` is bound to no app.
      expect(shown.requiredChecks[1].app).toBeUndefined();
      expect(Date.now() - Date.parse(shown.requiredChecksRead.readAt)).toBeLessThan(60_000);

      await mq.enqueue(queue.id, 1, commit(path, main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      const batch = await testingBatch(queue.id);
      // `build` from another app than the one GitHub expects does not count; from the expected app it does.
      const wrong = await emulator.checkRunCompleted(repository, batch.headSha!, 'build', 'success', undefined, OTHER_APP);
      expect((await applied(wrong.id))?.outcome).toMatch(/not counted.*only from app 4711/);
      await emulator.checkRunCompleted(repository, batch.headSha!, 'build', 'success', undefined, CI_APP);
      await emulator.checkRunCompleted(repository, batch.headSha!, 'lint', 'success', undefined, OTHER_APP);
      const last = await emulator.checkRunCompleted(repository, batch.headSha!, 'e2e', 'success', undefined, OTHER_APP);
      await applied(last.id);
      await until('#1 merged', async () => ((await mq.get(queue.id)).entries[0]?.status === 'merged' ? true : undefined));
      expect(readFile(path, git(path, 'rev-parse', 'main'), 'pr-1.txt')).toBe('one\n');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'follows a rule change delivered by webhook: a check GitHub adds is then required (the candidate waits for it), one it removes no longer is',
    async () => {
      const { repository, path, main, codeSourceId } = await newRepository();
      await quietly(() => emulator.setBranchProtection(repository, 'main', [{ context: 'ci' }]));
      const queue = (await createQueue(codeSourceId).expect(201)).body.data as MqQueue;
      expect(await names(queue.id)).toEqual(['ci']);
      await mq.enqueue(queue.id, 1, commit(path, main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      const first = await testingBatch(queue.id);

      // GitHub now requires `extra` too: the emulator sends branch_protection_rule edited.
      const added = await emulator.setBranchProtection(repository, 'main', [{ context: 'ci' }, { context: 'extra', appId: CI_APP.id }]);
      expect(added?.status).toBe(202);
      expect((await applied(added!.id))?.outcome).toMatch(
        /branch protection rule main edited: .*applied \(required checks read from GitHub: ci, extra \(app 4711\)\)/,
      );
      expect((await settingsOf(queue.id)).requiredChecks).toEqual([
        { name: 'ci', source: 'checkRun', from: [{ kind: 'branchProtection' }] },
        { name: 'extra', source: 'checkRun', app: String(CI_APP.id), from: [{ kind: 'branchProtection' }] },
      ]);
      const trail = (await configureEvents(queue.id)).at(-1)!;
      expect(trail.detail).toMatchObject({ requiredChecksFrom: 'branchProtection', read: 'ok', trigger: { kind: 'webhook', deliveryId: added!.id } });
      // The candidate planned for `ci` alone was withdrawn; the new one waits for `extra` as well.
      await until('the first candidate withdrawn', async () => (await mq.get(queue.id)).batches.find((b) => b.id === first.id && b.status === 'withdrawn'));
      const second = await testingBatch(queue.id, [first.id]);
      await applied((await emulator.checkRunCompleted(repository, second.headSha!, 'ci', 'success', undefined, CI_APP)).id);
      await new Promise((r) => setTimeout(r, 500));
      let q = await mq.get(queue.id);
      expect(q.entries[0].status).not.toBe('merged');
      expect(q.batches.find((b) => b.id === second.id)?.status).toBe('testing');

      // GitHub's own example delivery (branch_protection_rule edited) tells the API the rule changed again: `extra` is no longer required.
      await quietly(() => emulator.setBranchProtection(repository, 'main', [{ context: 'ci' }]));
      const example = structuredClone(PROTECTION_EXAMPLES.find((x) => x.action === 'edited')!);
      const repo = emulator.repos.get(repository.toLowerCase())!;
      Object.assign(example.repository, { id: repo.id, full_name: repository, name: repo.name });
      example.repository.owner.login = login;
      example.rule.updated_at = new Date().toISOString();
      const removed = await emulator.deliver('branch_protection_rule', example);
      expect(removed.status).toBe(202);
      await applied(removed.id);
      expect(await names(queue.id)).toEqual(['ci']);
      // Checks changed: the candidate is planned again and `ci` alone lands it.
      const third = await testingBatch(queue.id, [first.id, second.id]);
      await emulator.checkRunCompleted(repository, third.headSha!, 'ci', 'success', undefined, CI_APP);
      await until('#1 merged', async () => ((await mq.get(queue.id)).entries[0]?.status === 'merged' ? true : undefined));
      q = await mq.get(queue.id);
      expect(q.entries[0].status).toBe('merged');
      expect(readFile(path, git(path, 'rev-parse', 'main'), 'pr-1.txt')).toBe('one\n');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'reads GitHub again on demand (POST .../settings/required-checks/refresh); a read that fails keeps the last known checks and says why',
    async () => {
      const { repository, codeSourceId } = await newRepository();
      await quietly(() => emulator.setBranchProtection(repository, 'main', [{ context: 'ci' }]));
      const queue = (await createQueue(codeSourceId).expect(201)).body.data as MqQueue;
      const { ruleset } = await quietly(() => emulator.setRuleset(repository, { name: 'docs', include: ['refs/heads/main'], checks: [{ context: 'docs' }] }));
      // No webhook told the API: it still requires `ci` alone until asked.
      expect(await names(queue.id)).toEqual(['ci']);
      const refreshed = await http().post(`/merge-queues/${queue.id}/settings/required-checks/refresh`).set(owner.auth).expect(200);
      expect(refreshed.body.data.requiredChecks).toEqual([
        { name: 'ci', source: 'checkRun', from: [{ kind: 'branchProtection' }] },
        { name: 'docs', source: 'checkRun', from: [{ kind: 'ruleset', rulesetId: ruleset.id, rulesetSource: repository }] },
      ]);
      expect((await configureEvents(queue.id)).at(-1)?.detail).toMatchObject({ read: 'ok', trigger: { kind: 'api', actor: expect.any(String) } });

      // GitHub down: a 502, and the checks stay what they were, with the failure in the settings and the events.
      await quietly(() => emulator.deleteRuleset(repository, ruleset.id));
      emulator.knobs.down = true;
      try {
        const down = await http().post(`/merge-queues/${queue.id}/settings/required-checks/refresh`).set(owner.auth).expect(502);
        expect(down.body.code).toBe('dpa:GitProvider:UNAVAILABLE');
      } finally {
        emulator.knobs.down = false;
      }
      const kept = await settingsOf(queue.id);
      expect(kept.requiredChecks.map((c: { name: string }) => c.name)).toEqual(['ci', 'docs']);
      expect(kept.requiredChecksRead).toMatchObject({
        readAt: refreshed.body.data.requiredChecksRead.readAt,
        failed: { at: expect.any(String), reason: expect.stringMatching(/could not be read.*last known checks are kept/) },
      });
      expect((await configureEvents(queue.id)).at(-1)?.detail).toMatchObject({ read: 'failed', reason: expect.stringMatching(/could not be read/) });

      // GitHub requiring nothing at all is never taken: a 422, the last known checks kept.
      await quietly(() => emulator.removeBranchProtection(repository, 'main'));
      const none = await http().post(`/merge-queues/${queue.id}/settings/required-checks/refresh`).set(owner.auth).expect(422);
      expect(none.body.code).toBe('dpa:MergeQueue:NO_CHECKS_ON_GITHUB');
      expect(await names(queue.id)).toEqual(['ci', 'docs']);

      // A queue whose checks come from its settings has nothing to refresh.
      const other = await newRepository();
      const handSet = await mq.create(other.codeSourceId);
      const refused = await http().post(`/merge-queues/${handSet.id}/settings/required-checks/refresh`).set(owner.auth).expect(422);
      expect(refused.body.code).toBe('dpa:MergeQueue:CHECKS_NOT_FROM_GITHUB');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'refuses what cannot be (GitHub requiring no check, checks by hand beside branchProtection, requiredChecks missing otherwise); switching by PATCH settings and moving baseRef read GitHub’s checks',
    async () => {
      const { repository, path, main, codeSourceId } = await newRepository();
      const none = await createQueue(codeSourceId).expect(422);
      expect(none.body).toMatchObject({ code: 'dpa:MergeQueue:NO_CHECKS_ON_GITHUB', requestId: expect.any(String) });
      expect(JSON.stringify(none.body.details)).toContain('data.settings.requiredChecksFrom');
      const handSet = await createQueue(codeSourceId, { requiredChecks: ['ci'] }).expect(422);
      expect(handSet.body.code).toBe('dpa:MergeQueue:CHECKS_FROM_GITHUB');
      expect(JSON.stringify(handSet.body.details)).toContain('data.requiredChecks');
      const missing = await http()
        .post('/merge-queues')
        .set(owner.auth)
        .send({ data: { codeSourceId, baseRef: 'main' } })
        .expect(400);
      expect(JSON.stringify(missing.body.details)).toContain('requiredChecks');
      expect(await prisma.mergeQueue.count({ where: { repositoryId: codeSourceId } })).toBe(0);

      // A queue with its own checks switches to GitHub's with PATCH .../settings, which reads them at once.
      const queue = await mq.create(codeSourceId);
      const refusedSwitch = await http()
        .patch(`/merge-queues/${queue.id}/settings`)
        .set(owner.auth)
        .send({ data: { requiredChecksFrom: 'branchProtection' } })
        .expect(422);
      expect(refusedSwitch.body.code).toBe('dpa:MergeQueue:NO_CHECKS_ON_GITHUB');
      expect((await settingsOf(queue.id)).requiredChecksFrom).toBe('settings');
      await quietly(() => emulator.setBranchProtection(repository, 'main', [{ context: 'build', appId: CI_APP.id }]));
      const switched = await http()
        .patch(`/merge-queues/${queue.id}/settings`)
        .set(owner.auth)
        .send({ data: { requiredChecksFrom: 'branchProtection' } })
        .expect(200);
      expect(switched.body.data).toMatchObject({
        requiredChecksFrom: 'branchProtection',
        requiredChecks: [{ name: 'build', source: 'checkRun', app: String(CI_APP.id), from: [{ kind: 'branchProtection' }] }],
      });
      expect((await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } })).settings).toMatchObject({ requiredChecks: ['build'] });
      // While they come from GitHub, checks by hand are refused on both routes, naming the field.
      for (const [path, data] of [
        [`/merge-queues/${queue.id}/settings`, { requiredChecks: [{ name: 'ci' }] }],
        [`/merge-queues/${queue.id}`, { requiredChecks: ['ci'] }],
      ] as const) {
        const res = await http().patch(path).set(owner.auth).send({ data }).expect(422);
        expect(res.body.code).toBe('dpa:MergeQueue:CHECKS_FROM_GITHUB');
        expect(JSON.stringify(res.body.details)).toContain('data.requiredChecks');
      }
      // Moved to another branch (PATCH baseRef), it requires what GitHub requires there.
      git(path, 'update-ref', 'refs/heads/next', main);
      await quietly(() => emulator.setBranchProtection(repository, 'next', [{ context: 'deploy' }]));
      await http()
        .patch(`/merge-queues/${queue.id}`)
        .set(owner.auth)
        .send({ data: { baseRef: 'next' } })
        .expect(200);
      expect(await names(queue.id)).toEqual(['deploy']);
      // Back to settings: the checks are the queue's own again, set by hand.
      const back = await http()
        .patch(`/merge-queues/${queue.id}/settings`)
        .set(owner.auth)
        .send({ data: { requiredChecksFrom: 'settings', requiredChecks: [{ name: 'ci' }] } })
        .expect(200);
      expect(back.body.data.requiredChecks).toEqual([{ name: 'ci', source: 'checkRun' }]);
      expect(back.body.data.requiredChecksRead).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );
});
