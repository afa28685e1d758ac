import type { NestExpressApplication } from '@nestjs/platform-express';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue as BullQueue } from 'bullmq';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { QueueName } from '@/common/queues/queue-names';
import { createTenant, type TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, createBareRepo, createLocalCodeSource } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { MergeQueueClient, MqEntry } from '../support/merge-queue-client';
import { until } from '../support/processes';

const TEST_TIMEOUT_MS = 90_000;

/** The spec's closed objects (delivery-platform-api.md, "MergeQueue"): the only properties they may carry. */
const SPEC_QUEUE = ['id', 'organizationId', 'repositoryId', 'repository', 'baseRef', 'revision', 'status', 'batchDepth', 'updatedAt', 'entries', 'batches'];
const SPEC_ENTRY = ['id', 'number', 'headSha', 'url', 'status', 'position', 'priority', 'setAside', 'batchId', 'block', 'title'];
const SPEC_BATCH = ['id', 'position', 'prNumbers', 'status', 'requiredChecks', 'checksUrl', 'headSha', 'operation'];

/** The properties of `o` the spec does not list in `allowed` (empty when it keeps to the spec). */
const outside = (o: object, allowed: string[]) => Object.keys(o).filter((k) => !allowed.includes(k));

/** What of a MergeQueue (its entries and batches included) lies outside the spec. */
function queueOutsideSpec(q: { entries: object[]; batches: object[] }): string[] {
  return [...outside(q, SPEC_QUEUE), ...q.entries.flatMap((e) => outside(e, SPEC_ENTRY)), ...q.batches.flatMap((b) => outside(b, SPEC_BATCH))];
}

/**
 * An entry's details (GET /merge-queues/{id}/entries/{entryId}/details), the spec's closed
 * MergeQueueEntry kept closed on every route, and PR titles read from GitHub (the emulator, through
 * the real Octokit client): by the worker after an API enqueue, and on `pull_request edited`.
 */
describe('Merge queue entry details and PR titles from GitHub (the provider emulator, webhooks, in-process worker)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  const http = () => request(app.getHttpServer());
  const groups = [
    { name: 'api', paths: ['api-*'] },
    { name: 'web', paths: ['web-*'] },
  ];

  beforeAll(async () => {
    suite = await githubQueueSuite('details', { webhooks: true });
    ({ emulator, app, prisma, owner, mq } = suite);
  }, 60_000);

  afterAll(() => suite?.close());

  afterEach(() => Object.assign(emulator.knobs, { down: false, delayMs: 0 }));

  /** Waits until the worker applied the delivery, and returns what it did. */
  const applied = (deliveryId: string) =>
    until(`delivery ${deliveryId} applied`, async () => {
      const row = await prisma.webhookDelivery.findFirst({
        where: { deliveryId, organizationId: owner.organizationId },
        select: { processedAt: true, outcome: true },
      });
      return row?.processedAt ? (row.outcome ?? '') : undefined;
    });

  /** A PR GitHub knows (the emulator's `opened`), with its title. */
  async function openPr(repository: string, number: number, headSha: string, title: string): Promise<void> {
    const opened = await emulator.pullRequest(repository, 'opened', { number, headSha, baseRef: 'main', title });
    expect(opened.status).toBe(202);
    await applied(opened.id);
  }

  it(
    "shows the spec's entry beside its origin, title and its source, lanes, batch and events; lanes and pathsStatus are on no route's spec entry",
    async () => {
      const { path, main, queue } = await suite.newQueue({ files: { 'api-main.ts': 'api\n', 'web-main.ts': 'web\n' }, settings: { pathGroups: groups } });
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const posted = await mq.enqueue(queue.id, 1, commit(path, main, { 'api-main.ts': 'api 1\n' }, 'PR 1'), { title: 'Given by the caller' });
      const second = await mq.enqueue(queue.id, 2, commit(path, main, { 'web-main.ts': 'web 2\n', 'api-x.ts': 'x\n' }, 'PR 2'), { title: 'Second' });
      expect(outside(posted, SPEC_ENTRY)).toEqual([]);

      const details = await mq.details(queue.id, posted.id);
      // The spec's entry exactly as the queue lists it.
      const listed = (await mq.get(queue.id)).entries.find((e) => e.id === posted.id);
      expect(details.entry).toEqual(listed);
      expect(outside(details.entry, SPEC_ENTRY)).toEqual([]);
      // GitHub knows no PR 1: the caller's title stays, and says so.
      expect([details.title, details.titleSource]).toEqual(['Given by the caller', 'request']);
      // How it came: through the API, by the member whose token asked.
      expect(details.origin).toEqual({ via: 'api', actor: expect.any(String), actorKind: 'principal' });
      expect([details.lanes, details.pathsStatus, details.pathsCount, details.pathsHead]).toEqual([['api'], 'listed', 1, posted.headSha]);
      expect(details).not.toHaveProperty('lanesReason');
      expect(details.batch).toBeNull();
      // Its enqueue, and its lanes reaching the planner with it (one transaction: either may be listed first).
      expect(details.events.map((e) => e.type).sort()).toEqual(['enqueue', 'entryLanes']);
      expect(details.events.find((e) => e.type === 'enqueue')?.detail).toMatchObject({ entryId: posted.id, number: 1 });
      expect(details.enqueuedAt).toEqual(expect.any(String));

      // Origin, once written (as a label enqueue writes it): shown as stored.
      await prisma.mergeQueueEntry.update({ where: { id: second.id }, data: { origin: { via: 'label', actor: 'octocat', actorKind: 'github' } } });
      expect((await mq.details(queue.id, second.id)).origin).toEqual({ via: 'label', actor: 'octocat', actorKind: 'github' });

      // A change of the entry is among its events, newest first; another entry's are not.
      await http()
        .patch(`/merge-queues/${queue.id}/entries/${posted.id}`)
        .set(owner.auth)
        .send({ data: { priority: 3 } })
        .expect(200);
      const [newest, ...older] = (await mq.details(queue.id, posted.id)).events.map((e) => e.type);
      expect([newest, older.sort()]).toEqual(['setPriority', ['enqueue', 'entryLanes']]);
      expect((await mq.details(queue.id, second.id)).events.map((e) => e.type).sort()).toEqual(['enqueue', 'entryLanes']);

      // In a batch: the batch it is in, and the event that moved it there.
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      const inBatch = await until('PR 1 in a batch', async () => {
        const d = await mq.details(queue.id, posted.id);
        return d.batch ? d : undefined;
      });
      expect(inBatch.batch?.id).toBe(inBatch.entry.batchId);
      expect(inBatch.batch?.prNumbers).toContain(1);
      expect(outside(inBatch.batch!, SPEC_BATCH)).toEqual([]);
      expect(inBatch.events.flatMap((e) => e.transitions).filter((t) => t.id === posted.id)).toContainEqual({
        subject: 'entry',
        id: posted.id,
        from: 'queued',
        to: 'testing',
      });
      // The chain lists each batched entry with its lanes.
      const chain = (await http().get(`/merge-queues/${queue.id}/chain`).set(owner.auth).expect(200)).body.data;
      const batched = (chain.batches as { entries: { id: string; lanes?: string[]; pathsStatus?: string; title?: string }[] }[]).flatMap((b) => b.entries);
      expect(batched.find((e) => e.id === posted.id)).toMatchObject({ lanes: ['api'], pathsStatus: 'listed', title: 'Given by the caller' });

      // Every route that answers with a MergeQueue or entries keeps to the spec's objects.
      const answers: { route: string; extra: string[] }[] = [];
      const queueAnswer = async (route: string, res: request.Response) => answers.push({ route, extra: queueOutsideSpec(res.body.data) });
      await queueAnswer('GET /merge-queues/{id}', await http().get(`/merge-queues/${queue.id}`).set(owner.auth).expect(200));
      const list = await http().get('/merge-queues').set(owner.auth).expect(200);
      answers.push({ route: 'GET /merge-queues', extra: (list.body.data as { entries: object[]; batches: object[] }[]).flatMap(queueOutsideSpec) });
      await queueAnswer(
        'PATCH /merge-queues/{id}',
        await http()
          .patch(`/merge-queues/${queue.id}`)
          .set(owner.auth)
          .send({ data: { maxParallel: 2 } })
          .expect(200),
      );
      for (const control of ['pause', 'resume', 'disable', 'enable'])
        await queueAnswer(`POST /merge-queues/{id}/${control}`, await http().post(`/merge-queues/${queue.id}/${control}`).set(owner.auth).expect(200));
      const third = await http()
        .post(`/merge-queues/${queue.id}/entries`)
        .set(owner.auth)
        .send({ data: { number: 3, headSha: commit(path, main, { 'web-3.ts': '3\n' }, 'PR 3'), url: 'https://example.test/pr/3' } })
        .expect(201);
      answers.push({ route: 'POST /merge-queues/{id}/entries', extra: outside(third.body.data, SPEC_ENTRY) });
      const patched = await http()
        .patch(`/merge-queues/${queue.id}/entries/${third.body.data.id}`)
        .set(owner.auth)
        .send({ data: { priority: 1 } })
        .expect(200);
      answers.push({ route: 'PATCH /merge-queues/{id}/entries/{entryId}', extra: outside(patched.body.data, SPEC_ENTRY) });
      const removed = await http().delete(`/merge-queues/${queue.id}/entries/${third.body.data.id}`).set(owner.auth).expect(200);
      answers.push({ route: 'DELETE /merge-queues/{id}/entries/{entryId}', extra: outside(removed.body.data, SPEC_ENTRY) });
      expect(answers.filter((a) => a.extra.length > 0)).toEqual([]);
      expect(answers).toHaveLength(10);
      // A final entry keeps its details (lanes it had, no pathsStatus).
      const final = await mq.details(queue.id, third.body.data.id);
      expect([final.entry.status, final.lanes, final.pathsStatus]).toEqual(['removed', ['web'], undefined]);
      expect(final.events.map((e) => e.type).filter((t) => ['remove', 'setPriority', 'enqueue'].includes(t))).toEqual(['remove', 'setPriority', 'enqueue']);
    },
    TEST_TIMEOUT_MS,
  );

  it('answers 404 for an entry the queue does not have, another queue’s entry, and another organization’s queue', async () => {
    const a = await suite.newQueue();
    const b = await suite.newQueue();
    const entry = await mq.enqueue(a.queue.id, 1, commit(a.path, a.main, { 'x.txt': 'x\n' }, 'PR 1'));
    const unknown = await http().get(`/merge-queues/${a.queue.id}/entries/01900000-0000-7000-8000-000000000000/details`).set(owner.auth).expect(404);
    expect(unknown.body.code).toBe('dpa:MergeQueue:ENTRY_NOT_FOUND');
    const elsewhere = await http().get(`/merge-queues/${b.queue.id}/entries/${entry.id}/details`).set(owner.auth).expect(404);
    expect(elsewhere.body.code).toBe('dpa:MergeQueue:ENTRY_NOT_FOUND');
    const intruder = await createTenant(app, 'details-intruder');
    const foreign = await http().get(`/merge-queues/${a.queue.id}/entries/${entry.id}/details`).set(intruder.auth).expect(404);
    expect(foreign.body.code).toBe('dpa:MergeQueue:NOT_FOUND');
    expect(foreign.body.requestId).toEqual(expect.any(String));
  });

  it(
    'an API enqueue on a GitHub queue gets the PR’s title from GitHub, without or over the title given; an edited title follows',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const head = commit(path, main, { 'a.txt': 'a\n' }, 'PR 21');
      await openPr(repository, 21, head, 'Add the widget API');
      const other = commit(path, main, { 'b.txt': 'b\n' }, 'PR 22');
      await openPr(repository, 22, other, 'Fix the gadget');

      // No title given: the answer has none; the worker reads GitHub's.
      const untitled = await http()
        .post(`/merge-queues/${queue.id}/entries`)
        .set(owner.auth)
        .send({ data: { number: 21, headSha: head, url: `https://example.test/pr/21` } })
        .expect(201);
      expect(untitled.body.data).not.toHaveProperty('title');
      const read = await until('the title read from GitHub', async () => {
        const d = await mq.details(queue.id, untitled.body.data.id);
        return d.titleSource === 'github' ? d : undefined;
      });
      expect([read.title, read.entry.title]).toEqual(['Add the widget API', 'Add the widget API']);
      expect(read.events.map((e) => e.type)).toEqual(['titleChanged', 'enqueue']);
      expect(read.events[0].detail).toMatchObject({ entryId: untitled.body.data.id, title: 'Add the widget API', source: 'github' });
      expect((await mq.get(queue.id)).entries.find((e) => e.number === 21)?.title).toBe('Add the widget API');

      // A title given is shown until GitHub's is read; GitHub's wins.
      const given = await mq.enqueue(queue.id, 22, other, { title: 'What the caller says' });
      expect(given.title).toBe('What the caller says');
      const won = await until('GitHub’s title over the given one', async () => {
        const d = await mq.details(queue.id, given.id);
        return d.titleSource === 'github' ? d : undefined;
      });
      expect(won.title).toBe('Fix the gadget');

      // The PR's title edited on GitHub: the webhook brings it.
      const edited = await emulator.pullRequest(repository, 'edited', { number: 21, headSha: head, baseRef: 'main', title: 'Add the widget API (v2)' });
      expect(edited.status).toBe(202);
      expect(await applied(edited.id)).toMatch(/applied \(#21 has a new title\)/);
      const after = await mq.details(queue.id, untitled.body.data.id);
      expect([after.title, after.titleSource, after.entry.title]).toEqual(['Add the widget API (v2)', 'github', 'Add the widget API (v2)']);
      const chain = (await http().get(`/merge-queues/${queue.id}/chain`).set(owner.auth).expect(200)).body.data;
      expect((chain.waiting as { number: number; title?: string }[]).find((e) => e.number === 21)?.title).toBe('Add the widget API (v2)');
      // An edit that left the title alone (GitHub sends no `changes.title`) changes nothing.
      const body = await emulator.pullRequest(repository, 'edited', { number: 21, headSha: head, baseRef: 'main' });
      expect(await applied(body.id)).toBe('ignored: pull_request edited without a title change');
      // A PR not in the queue: nothing to change.
      const stranger = await emulator.pullRequest(repository, 'edited', { number: 99, headSha: head, baseRef: 'main', title: 'Elsewhere' });
      expect(await applied(stranger.id)).toMatch(/#99 is not in the queue/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'GitHub slow or down: the enqueue answers at once with the title given, never fails, and GitHub’s title comes once GitHub is back',
    async () => {
      const { repository, path, main, queue } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const head = commit(path, main, { 'c.txt': 'c\n' }, 'PR 31');
      await openPr(repository, 31, head, 'Title on GitHub');
      const jobs = suite.worker.get<BullQueue>(getQueueToken(QueueName.MergeQueues), { strict: false });

      // Slow: every GitHub call takes 5 s; the enqueue does not wait for one.
      emulator.knobs.delayMs = 5_000;
      const started = Date.now();
      const slow = await mq.enqueue(queue.id, 31, head, { title: 'Given while slow' });
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(slow.title).toBe('Given while slow');
      emulator.knobs.delayMs = 0;
      await until('the slow read done', async () => ((await mq.details(queue.id, slow.id)).titleSource === 'github' ? true : undefined), 30_000);

      // Down: the enqueue succeeds with the given title; the worker's reads fail and are tried again.
      const downHead = commit(path, main, { 'd.txt': 'd\n' }, 'PR 32');
      await openPr(repository, 32, downHead, 'Title of 32 on GitHub');
      emulator.knobs.down = true;
      let entry: MqEntry;
      try {
        entry = await mq.enqueue(queue.id, 32, downHead, { title: 'Given while down' });
        expect(entry.title).toBe('Given while down');
        const attempts = async () => (await jobs.getJob(`title-${entry.id}`))?.attemptsMade ?? 0;
        await until('a read failed', async () => ((await attempts()) >= 1 ? true : undefined), 30_000);
        const kept = await mq.details(queue.id, entry.id);
        expect([kept.title, kept.titleSource, kept.entry.title]).toEqual(['Given while down', 'request', 'Given while down']);
      } finally {
        emulator.knobs.down = false;
      }
      const back = await until(
        'GitHub’s title once it is back',
        async () => {
          const d = await mq.details(queue.id, entry.id);
          return d.titleSource === 'github' ? d : undefined;
        },
        40_000,
      );
      expect(back.title).toBe('Title of 32 on GitHub');
    },
    TEST_TIMEOUT_MS,
  );

  it('LOCAL_GIT, and a PR GitHub does not know, keep the title as given', async () => {
    const jobs = suite.worker.get<BullQueue>(getQueueToken(QueueName.MergeQueues), { strict: false });
    const { path, main, queue } = await suite.newQueue();
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    // PR 41 was never opened on the emulator: GitHub answers 404, the caller's title stays.
    const entry = await mq.enqueue(queue.id, 41, commit(path, main, { 'e.txt': 'e\n' }, 'PR 41'), { title: 'Only the caller knows' });
    await until('the read done', async () => ((await jobs.getJob(`title-${entry.id}`)) ? undefined : true));
    const details = await mq.details(queue.id, entry.id);
    expect([details.title, details.titleSource]).toEqual(['Only the caller knows', 'request']);
    expect(details.events.map((e) => e.type)).toEqual(['enqueue']);
    // LOCAL_GIT: no provider to ask; the title is the one given, and nothing is asked.
    const repo = createBareRepo();
    const local = await mq.create((await createLocalCodeSource(prisma, owner.organizationId, repo.path)).id);
    await http().post(`/merge-queues/${local.id}/pause`).set(owner.auth).expect(200);
    const localEntry = await mq.enqueue(local.id, 41, commit(repo.path, repo.main, { 'e.txt': 'e\n' }, 'PR 41'), { title: 'Local title' });
    expect(await jobs.getJob(`title-${localEntry.id}`)).toBeUndefined();
    expect(await mq.details(local.id, localEntry.id)).toMatchObject({ title: 'Local title', titleSource: 'request', entry: { title: 'Local title' } });
    const untitled = await mq.enqueue(local.id, 42, commit(repo.path, repo.main, { 'f.txt': 'f\n' }, 'PR 42'), { title: undefined });
    expect(await mq.details(local.id, untitled.id)).toMatchObject({ title: null, titleSource: null });
  });
});
