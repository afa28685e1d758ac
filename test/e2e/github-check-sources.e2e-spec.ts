import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import type { TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, git, readFile } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { MergeQueueClient, MqQueue } from '../support/merge-queue-client';
import { until } from '../support/processes';

/** Each case drives GitHub (the emulator), its webhooks and the worker through a CI round or two. */
const TEST_TIMEOUT_MS = 90_000;

/** The GitHub App that creates the queue's `ci` check runs, and another one installed on the repository. */
const CI_APP = { id: 4711, slug: 'ci-app' };
const OTHER_APP = { id: 666, slug: 'other-app' };

/**
 * The GitHub border of a merge queue (issue 38): a push to a queued PR never lands unreviewed, a
 * check counts only from the source the queue takes it from, and skipped is no pass. The emulator
 * sends signed deliveries to the API's POST /webhooks/github; an in-process worker applies them.
 */
describe('GitHub check sources and pushes to queued PRs (emulator, webhooks, in-process worker)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  let login: string;
  let integrationId: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    suite = await githubQueueSuite('check_sources', { webhooks: true });
    ({ emulator, app, prisma, owner, mq } = suite);
    ({ login, integrationId } = suite.github);
  }, 60_000);

  afterAll(() => suite?.close());

  const deliveryRow = (deliveryId: string) => prisma.webhookDelivery.findFirst({ where: { integrationId, deliveryId } });
  const applied = (deliveryId: string) =>
    until(`delivery ${deliveryId} applied`, async () => {
      const row = await deliveryRow(deliveryId);
      return row?.processedAt ? row : undefined;
    });
  const testingBatch = (queueId: string, not: string[] = []) =>
    until(`a batch of ${queueId} testing`, async () => (await mq.get(queueId)).batches.find((b) => b.status === 'testing' && b.headSha && !not.includes(b.id)));
  const settings = (queueId: string, data: Record<string, unknown>) => http().patch(`/merge-queues/${queueId}/settings`).set(owner.auth).send({ data });
  const isAncestor = (repo: string, a: string, b: string) => git(repo, 'rev-list', '--count', `${b}..${a}`) === '0';
  const statusesOn = (sha: string) =>
    emulator.statuses.filter((x) => x.sha === sha && x.context === 'merge-queue/main').map((x) => `${x.state}: ${x.description}`);
  /** Runs CI by check runs of `ci-app` on every candidate under test until `done` holds. */
  const ciByApp = (queueId: string, repository: string, done: (q: MqQueue) => boolean) => {
    const reported = new Set<string>();
    return until(`queue ${queueId} to settle`, async () => {
      const q = await mq.get(queueId);
      if (done(q)) return q;
      for (const b of q.batches) {
        if (b.status !== 'testing' || !b.headSha || reported.has(b.id)) continue;
        reported.add(b.id);
        expect((await emulator.checkRunCompleted(repository, b.headSha, 'ci', 'success', undefined, CI_APP)).status).toBe(202);
      }
      return undefined;
    });
  };
  /** The queue's events of `type`, oldest first. */
  const events = (queueId: string, type: string) =>
    prisma.mergeQueueEvent.findMany({ where: { queueId, type }, orderBy: [{ revision: 'asc' }, { createdAt: 'asc' }] });

  it(
    'a push to a queued PR removes it (onHeadPush remove, the default): nothing of either head lands, and the PR shows why',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      expect((await http().get(`/merge-queues/${queue.id}/settings`).set(owner.auth).expect(200)).body.data).toEqual({
        requiredChecks: [{ name: 'ci', source: 'checkRun' }],
        onHeadPush: 'remove',
        skippedPasses: false,
        mergeMethod: 'merge',
        enqueueLabel: null,
        commentCommands: true,
        requireApproval: true,
        requiredChecksFrom: 'settings',
      });
      const oldHead = commit(path, main, { 'pr-1.txt': 'reviewed\n' }, 'PR 1, the reviewed head');
      await mq.enqueue(queue.id, 1, oldHead);
      const batch = await testingBatch(queue.id);
      const newHead = commit(path, main, { 'pr-1.txt': 'pushed after enqueue\n' }, 'PR 1, pushed after enqueue');
      const sync = await emulator.pullRequest(repository, 'synchronize', { number: 1, headSha: newHead, baseRef: 'main' });
      expect(sync.status).toBe(202);
      expect((await applied(sync.id)).outcome).toMatch(/#1 was removed: new commits were pushed/);
      const q = await until('#1 removed', async () => {
        const x = await mq.get(queue.id);
        return x.entries[0]?.status === 'removed' && x.batches.every((b) => ['withdrawn', 'landed', 'failed'].includes(b.status)) ? x : undefined;
      });
      expect(q.entries[0]).toMatchObject({ status: 'removed', block: 'new commits were pushed', headSha: newHead });
      expect(q.batches.find((b) => b.id === batch.id)?.status).toBe('withdrawn');
      // CI passing late on the old candidate lands nothing: it is no live candidate.
      const late = await emulator.checkRunCompleted(repository, batch.headSha as string, 'ci', 'success');
      expect((await applied(late.id)).outcome).toMatch(/is no live candidate/);
      expect(git(path, 'rev-parse', 'main')).toBe(main);
      expect(isAncestor(path, oldHead, 'main')).toBe(false);
      expect(isAncestor(path, newHead, 'main')).toBe(false);
      // The reason is in the events, and on the PR's head as its commit status.
      const removals = await events(queue.id, 'remove');
      expect(removals.map((e) => e.detail)).toEqual([expect.objectContaining({ reason: 'new commits were pushed', deliveryId: sync.id, headSha: newHead })]);
      await until('the removal on the PR', async () => statusesOn(newHead).includes('error: Removed: new commits were pushed') || undefined);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'requeueIfApproved re-queues only a head GitHub says is approved: an unreviewed push removes the PR, an approved one is tested and lands',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      await settings(queue.id, { onHeadPush: 'requeueIfApproved' }).expect(200);
      // The repository dismisses stale approvals on a push, so an approval of one head says nothing of the next.
      emulator.reviewRules(repository, { dismissStaleReviews: true });
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);

      const unreviewedBase = commit(path, main, { 'pr-2.txt': 'reviewed\n' }, 'PR 2');
      await emulator.pullRequest(repository, 'opened', { number: 2, headSha: unreviewedBase, baseRef: 'main' });
      emulator.review(repository, 2, login, 'APPROVED');
      await mq.enqueue(queue.id, 2, unreviewedBase);
      const unreviewed = commit(path, main, { 'pr-2.txt': 'not reviewed\n' }, 'PR 2, pushed and not reviewed');
      const pushed = await emulator.pullRequest(repository, 'synchronize', { number: 2, headSha: unreviewed, baseRef: 'main' });
      expect((await applied(pushed.id)).outcome).toMatch(
        /#2 was removed: new commits were pushed \(the new head is not approved \(review decision REVIEW_REQUIRED\)\)/,
      );

      const first = commit(path, main, { 'pr-3.txt': 'first\n' }, 'PR 3');
      await emulator.pullRequest(repository, 'opened', { number: 3, headSha: first, baseRef: 'main' });
      emulator.review(repository, 3, login, 'APPROVED');
      await mq.enqueue(queue.id, 3, first);
      const second = commit(path, main, { 'pr-3.txt': 'second, approved\n' }, 'PR 3, pushed and approved');
      emulator.review(repository, 3, login, 'APPROVED', second);
      const approved = await emulator.pullRequest(repository, 'synchronize', { number: 3, headSha: second, baseRef: 'main' });
      expect((await applied(approved.id)).outcome).toMatch(/#3 has a new head .*, approved: queued again/);

      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      const q = await ciByApp(queue.id, repository, (x) => x.entries.find((e) => e.number === 3)?.status === 'merged');
      expect(Object.fromEntries(q.entries.map((e) => [e.number, [e.status, e.headSha]]))).toEqual({ 2: ['removed', unreviewed], 3: ['merged', second] });
      const landed = git(path, 'rev-parse', 'main');
      expect(readFile(path, landed, 'pr-3.txt')).toBe('second, approved\n');
      expect(readFile(path, landed, 'pr-2.txt')).toBeNull();
      expect(isAncestor(path, first, landed)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a commit status from a user with push access and a check run from another app change nothing; the bound app’s check run lands',
    async () => {
      const { repository, path, main, queue, source } = await suite.newQueue();
      // Deliveries reach a queue by GitHub's id of the repository (the code source's foreignId), as GitHub sends it.
      const { foreignId } = await prisma.codeSource.findUniqueOrThrow({ where: { id: source.id } });
      const set = await settings(queue.id, { requiredChecks: [{ name: 'ci', app: CI_APP.slug }] }).expect(200);
      expect(set.body.data.requiredChecks).toEqual([{ name: 'ci', source: 'checkRun', app: 'ci-app' }]);
      const head = commit(path, main, { 'pr-4.txt': 'four\n' }, 'PR 4');
      await mq.enqueue(queue.id, 4, head);
      const batch = await testingBatch(queue.id);
      const candidate = batch.headSha as string;
      // Anyone with push access can post a commit status named like the check.
      const status = await emulator.deliver('status', {
        sha: candidate,
        context: 'ci',
        state: 'success',
        target_url: 'https://attacker.example.test/',
        sender: { login },
        repository: { id: Number(foreignId), full_name: repository },
      });
      expect((await applied(status.id)).outcome).toMatch(/ci on [0-9a-f]{40} not counted: reported by a commit status/);
      const other = await emulator.checkRunCompleted(repository, candidate, 'ci', 'success', undefined, OTHER_APP);
      expect((await applied(other.id)).outcome).toMatch(/not counted: reported by a check run of app other-app; the queue takes ci only from app ci-app/);
      // An API report for the bound check is refused and changes nothing.
      const api = await http()
        .post(`/merge-queues/${queue.id}/batches/${batch.id}/checks`)
        .set(owner.auth)
        .send({ data: { name: 'ci', state: 'success', sha: candidate } })
        .expect(422);
      expect(api.body.code).toBe('dpa:MergeQueue:CHECK_SOURCE_BOUND');
      const still = await mq.get(queue.id);
      expect(still.batches.find((b) => b.id === batch.id)).toMatchObject({ status: 'testing', requiredChecks: [{ name: 'ci', state: 'pending' }] });
      expect(git(path, 'rev-parse', 'main')).toBe(main);
      // Each result not counted is in the events, with where it came from.
      const notCounted = (await events(queue.id, 'checkReported')).map((e) => e.detail as Record<string, unknown>);
      expect(notCounted).toEqual([
        expect.objectContaining({ state: 'pending', deliveryId: status.id, from: { kind: 'status' }, notCounted: expect.stringMatching(/commit status/) }),
        expect.objectContaining({
          deliveryId: other.id,
          from: { kind: 'checkRun', appId: '666', appSlug: 'other-app' },
          notCounted: expect.stringMatching(/other-app/),
        }),
      ]);
      // The bound app's check run counts: the PR lands.
      const bound = await emulator.checkRunCompleted(repository, candidate, 'ci', 'success', undefined, CI_APP);
      expect((await applied(bound.id)).outcome).toMatch(/ci success on/);
      await until('#4 merged', async () => ((await mq.get(queue.id)).entries[0]?.status === 'merged' ? true : undefined));
      expect(readFile(path, git(path, 'rev-parse', 'main'), 'pr-4.txt')).toBe('four\n');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a queue whose CI reports by commit status: its statuses do not count until the check is set to source "status", then they do',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      const head = commit(path, main, { 'pr-5.txt': 'five\n' }, 'PR 5');
      await mq.enqueue(queue.id, 5, head);
      const batch = await testingBatch(queue.id);
      const ignored = await emulator.commitStatus(repository, batch.headSha as string, 'ci', 'success');
      expect((await applied(ignored.id)).outcome).toMatch(
        /not counted: reported by a commit status, which counts only for a check set to \{name: "ci", source: "status"\}/,
      );
      expect((await mq.get(queue.id)).entries[0].status).toBe('testing');
      // The fix the reason names. The same required check keeps its batch (names unchanged).
      const set = await settings(queue.id, { requiredChecks: [{ name: 'ci', source: 'status' }] }).expect(200);
      expect(set.body.data.requiredChecks).toEqual([{ name: 'ci', source: 'status' }]);
      const counted = await emulator.commitStatus(repository, batch.headSha as string, 'ci', 'success');
      expect((await applied(counted.id)).outcome).toMatch(/ci success on/);
      await until('#5 merged', async () => ((await mq.get(queue.id)).entries[0]?.status === 'merged' ? true : undefined));
      // A check run no longer counts for it.
      expect((await http().get(`/merge-queues/${queue.id}/settings`).set(owner.auth).expect(200)).body.data.requiredChecks).toEqual([
        { name: 'ci', source: 'status' },
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a skipped required check does not land: the candidate waits and fails at the timeout "skipped on the candidate"; with skippedPasses it lands',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue({ settings: { checkTimeoutSeconds: 3, flakyRetries: 0 } });
      const head = commit(path, main, { 'pr-6.txt': 'six\n' }, 'PR 6');
      await mq.enqueue(queue.id, 6, head);
      const batch = await testingBatch(queue.id);
      const skipped = await emulator.checkRunCompleted(repository, batch.headSha as string, 'ci', 'skipped');
      expect((await applied(skipped.id)).outcome).toMatch(/not counted: skipped on the candidate/);
      const failed = await until('#6 failed', async () => {
        const q = await mq.get(queue.id);
        return q.entries[0]?.status === 'failed' ? q : undefined;
      });
      expect(failed.batches.find((b) => b.id === batch.id)?.status).toBe('failed');
      const row = await prisma.mergeQueueEvent.findMany({ where: { queueId: queue.id, type: 'tick' } });
      expect(row.length).toBeGreaterThan(0);
      await until(
        'the reason on the PR',
        async () => statusesOn(head).some((s) => /^failure: Failed: check ci did not count within .*skipped on the candidate/.test(s)) || undefined,
      );
      expect(git(path, 'rev-parse', 'main')).toBe(main);

      // With skippedPasses (GitHub's own rule) a skipped check passes.
      await settings(queue.id, { skippedPasses: true }).expect(200);
      const next = commit(path, main, { 'pr-7.txt': 'seven\n' }, 'PR 7');
      await mq.enqueue(queue.id, 7, next);
      const second = await testingBatch(queue.id, [batch.id]);
      const passes = await emulator.checkRunCompleted(repository, second.headSha as string, 'ci', 'neutral');
      expect((await applied(passes.id)).outcome).toMatch(/ci success on/);
      await until('#7 merged', async () => ((await mq.get(queue.id)).entries.find((e) => e.number === 7)?.status === 'merged' ? true : undefined));
    },
    TEST_TIMEOUT_MS,
  );

  it('the settings resource refuses what is inconsistent with a 4xx naming the field, and takes If-Match', async () => {
    const { queue } = await suite.newQueue();
    const bad = await settings(queue.id, { requiredChecks: [{ name: 'ci', source: 'status', app: 'ci-app' }] }).expect(422);
    expect(bad.body.code).toBe('dpa:MergeQueue:INVALID_SETTINGS');
    expect(JSON.stringify(bad.body)).toContain('requiredChecks.0.app');
    const twice = await settings(queue.id, { requiredChecks: [{ name: 'ci' }, { name: 'ci', source: 'status' }] }).expect(422);
    expect(JSON.stringify(twice.body)).toContain('requiredChecks.1.name');
    expect((await settings(queue.id, { onHeadPush: 'merge' }).expect(400)).body.code).toMatch(/VALIDATION/);
    expect((await settings(queue.id, { requiredChecks: [{ name: 'ci', app: 'not a slug!' }] }).expect(400)).body.code).toMatch(/VALIDATION/);
    const current = await mq.get(queue.id);
    await settings(queue.id, { skippedPasses: true })
      .set('If-Match', String(Number(current.revision) + 5))
      .expect(409);
    const ok = await settings(queue.id, { requiredChecks: [{ name: 'ci', app: '4711' }, { name: 'lint' }] })
      .set('If-Match', current.revision)
      .expect(200);
    expect(ok.body.data).toEqual({
      requiredChecks: [
        { name: 'ci', source: 'checkRun', app: '4711' },
        { name: 'lint', source: 'checkRun' },
      ],
      onHeadPush: 'remove',
      skippedPasses: false,
      mergeMethod: 'merge',
      enqueueLabel: null,
      commentCommands: true,
      requireApproval: true,
      requiredChecksFrom: 'settings',
    });
    // The GitHub adoption settings (issue 39): a label, comment commands, approval, the land method
    // and where the checks come from; null turns the label off again, and each is named when wrong.
    const adopted = await settings(queue.id, {
      mergeMethod: 'squash',
      enqueueLabel: 'ready to merge',
      commentCommands: false,
      requireApproval: false,
    }).expect(200);
    expect(adopted.body.data).toMatchObject({ mergeMethod: 'squash', enqueueLabel: 'ready to merge', commentCommands: false, requireApproval: false });
    expect((await settings(queue.id, { enqueueLabel: null }).expect(200)).body.data).toMatchObject({ enqueueLabel: null, mergeMethod: 'squash' });
    for (const [field, value] of [
      ['mergeMethod', 'fast-forward'],
      ['enqueueLabel', 'x'.repeat(51)],
      ['enqueueLabel', 'a\nb'],
      ['commentCommands', 'yes'],
      ['requireApproval', null],
      ['requiredChecksFrom', 'rulesets'],
    ] as const) {
      const refused = await settings(queue.id, { [field]: value }).expect(400);
      expect(JSON.stringify(refused.body)).toContain(field);
    }
    await settings(queue.id, { mergeMethod: 'merge', commentCommands: true, requireApproval: true }).expect(200);
    // The queue's PATCH drops the source of a check it no longer requires.
    await http()
      .patch(`/merge-queues/${queue.id}`)
      .set(owner.auth)
      .send({ data: { requiredChecks: ['lint'] } })
      .expect(200);
    await http()
      .patch(`/merge-queues/${queue.id}`)
      .set(owner.auth)
      .send({ data: { requiredChecks: ['lint', 'ci'] } })
      .expect(200);
    expect((await http().get(`/merge-queues/${queue.id}/settings`).set(owner.auth).expect(200)).body.data.requiredChecks).toEqual([
      { name: 'lint', source: 'checkRun' },
      { name: 'ci', source: 'checkRun' },
    ]);
  });
});
