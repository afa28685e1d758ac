import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { CodeSource } from '@/generated/prisma/client';
import { LocalMergeQueueGit } from '@/modules/git-providers/merge-queue-git';
import { LocalGitRunner } from '@/modules/git-providers/local-git.runner';
import { MergeQueueGits } from '@/modules/merge-queues/engine/gits';
import { MergeQueueExecutor } from '@/modules/merge-queues/engine/executor';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue as Queue_ } from 'bullmq';
import { QueueName } from '@/common/queues/queue-names';
import { createTestApp, createTestWorker } from '../support/app';
import { createMember, createTenant, type TestTenant } from '../support/factories';
import { commit, createBareRepo, createLocalCodeSource, git, readFile } from '../support/git-repos';
import { finalEntries, firstParentMerges, MergeQueueClient, type MqBatch, type MqEntry, type MqQueue } from '../support/merge-queue-client';

/** LOCAL_GIT with one fault: the process "dies" right after the base ref moved, before anything is recorded. */
const faults = {
  crashAfterNextLand: false,
  sideEffects: [] as string[],
  /** By queue id: the next publish of that queue writes its ref, notes the candidate, then waits to be released before it answers. */
  publishGates: new Map<string, { reached: string | null; released: Promise<void> }>(),
};
class CrashingGit extends LocalMergeQueueGit {
  constructor(private readonly path: string) {
    super(path, new LocalGitRunner({ timeoutMs: 30_000 }));
  }

  /** Every candidate build and ref write is noted, so a test can count side effects. */
  async buildCandidate(...args: Parameters<LocalMergeQueueGit['buildCandidate']>) {
    faults.sideEffects.push(`${this.path} build ${args[0]} ${args[1].map((h) => h.headSha).join(',')}`);
    return super.buildCandidate(...args);
  }

  async publishRef(ref: string, sha: string): Promise<void> {
    faults.sideEffects.push(`${this.path} publish ${ref} ${sha}`);
    await super.publishRef(ref, sha);
    const gate = [...faults.publishGates].find(([queueId]) => ref.includes(`/${queueId}/`))?.[1];
    if (gate && gate.reached === null) {
      gate.reached = sha;
      await gate.released;
    }
  }

  async land(...args: Parameters<LocalMergeQueueGit['land']>): Promise<boolean> {
    const swapped = await super.land(...args);
    if (swapped && faults.crashAfterNextLand) {
      faults.crashAfterNextLand = false;
      throw new Error('simulated executor death right after the base ref moved');
    }
    return swapped;
  }
}

type Batch = MqBatch;
type Entry = MqEntry;
type Queue = MqQueue;

/** Each case drives real git and the worker through several CI rounds; generous on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 60_000;

describe('Merge queues (engine, real git, in-process worker)', () => {
  let app: NestExpressApplication;
  let worker: INestApplicationContext;
  let prisma: PrismaService;
  let owner: TestTenant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    worker = await createTestWorker(undefined, (b) =>
      b.overrideProvider(MergeQueueGits).useValue({ forSource: async (source: CodeSource) => new CrashingGit(source.url) }),
    );
    prisma = app.get(PrismaService, { strict: false });
    owner = await createTenant(app, 'mq');
    mq = new MergeQueueClient(() => app.getHttpServer(), owner.auth, prisma);
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await app?.close();
  });

  async function newQueue(files: Record<string, string> = { 'README.md': 'hello\n' }, settings: Record<string, unknown> = {}) {
    const repo = createBareRepo(files);
    const source = await createLocalCodeSource(prisma, owner.organizationId, repo.path);
    const res = await http()
      .post('/merge-queues')
      .set(owner.auth)
      .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'], checkTimeoutSeconds: 600, ...settings } })
      .expect(201);
    return { repo, queue: res.body.data as Queue };
  }

  let mq: MergeQueueClient;
  const getQueue = (id: string) => mq.get(id);
  const enqueue = (queueId: string, number: number, headSha: string) => mq.enqueue(queueId, number, headSha);
  const runCi: MergeQueueClient['runCi'] = (...args) => mq.runCi(...args);
  const quiet = (queueId: string) => mq.quiet(queueId);

  it('refuses a queue on a GitLab code source (GitHub ones run: merge-queues-github.e2e-spec.ts)', async () => {
    const hosted = await prisma.codeSource.create({
      data: {
        organizationId: owner.organizationId,
        provider: 'GITLAB',
        foreignId: '42',
        nameWithOwner: `acme/hosted-${Date.now()}`,
        url: 'https://gitlab.example/acme/hosted',
      },
    });
    const res = await http()
      .post('/merge-queues')
      .set(owner.auth)
      .send({ data: { codeSourceId: hosted.id, baseRef: 'main', requiredChecks: ['ci'] } })
      .expect(422);
    expect(res.body).toMatchObject({ code: 'dpa:MergeQueue:PROVIDER_NOT_SUPPORTED', metadata: { provider: 'GITLAB' } });
  });

  it(
    'lands PRs in order with exactly their content, as fast-forwards of tested candidates',
    async () => {
      const { repo, queue } = await newQueue();
      const { q } = await mq.landsThreeInOrder(queue.id, { path: repo.path, main: repo.main });
      expect(q.status).toBe('idle');
      expect(BigInt(q.revision) > 0n).toBe(true);
      // The trail lists the operations and their outcomes, newest first.
      const events = (await http().get(`/merge-queues/${queue.id}/events?limit=100`).set(owner.auth).expect(200)).body;
      const types = (events.data as { type: string }[]).map((e) => e.type);
      expect(types).toContain('enqueue');
      expect(types).toContain('checkReported');
      expect(types).toContain('operationSucceeded');
      expect(types[types.length - 1]).toBe('enqueue');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'finds the bad PR of a batch, fails it and lands the others',
    async () => {
      const { repo, queue } = await newQueue({ 'README.md': 'hello\n' }, { flakyRetries: 0 });
      const heads = [
        commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'),
        commit(repo.path, repo.main, { 'bad.txt': 'breaks the build\n' }, 'PR 2'),
        commit(repo.path, repo.main, { 'pr-3.txt': 'three\n' }, 'PR 3'),
      ];
      for (const [i, head] of heads.entries()) await enqueue(queue.id, i + 1, head);
      const q = await runCi(queue.id, repo.path, (x) => x.entries.length === 3 && finalEntries(x));
      expect(Object.fromEntries(q.entries.map((e) => [e.number, e.status]))).toEqual({ 1: 'merged', 2: 'failed', 3: 'merged' });
      const main = git(repo.path, 'rev-parse', 'main');
      expect(readFile(repo.path, main, 'pr-1.txt')).toBe('one\n');
      expect(readFile(repo.path, main, 'pr-3.txt')).toBe('three\n');
      expect(readFile(repo.path, main, 'bad.txt')).toBeNull();
    },
    TEST_TIMEOUT_MS,
  );

  it.each([true, false])(
    'screening %s: while a failed batch is bisected, spare runners screen the PRs behind it on the base (a candidate that passes and never lands)',
    async (screening) => {
      const { repo, queue } = await newQueue({ 'README.md': 'hello\n' }, { flakyRetries: 0, screening });
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      for (const n of [1, 2, 3, 4, 5, 6]) {
        const files = n === 1 ? { 'bad.txt': 'breaks the build\n' } : { [`pr-${n}.txt`]: `${n}\n` };
        await enqueue(queue.id, n, commit(repo.path, repo.main, files, `PR ${n}`));
      }
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      const role = async (batchId: string) =>
        ((await prisma.mergeQueueBatch.findUnique({ where: { id: batchId }, select: { planner: true } }))?.planner as { role?: string } | null)?.role;
      // CI answers the probes of the failed batch [1, 2] last, so the bisection is still running
      // while the PRs behind it wait: the runners it leaves free screen them.
      const screenDone = (x: MqQueue) => x.batches.some((b) => b.prNumbers.includes(3) && b.status === 'withdrawn' && b.requiredChecks[0].state === 'success');
      const probesTesting = (x: MqQueue) => x.batches.filter((b) => b.status === 'testing' && b.prNumbers.length === 1 && b.prNumbers[0] <= 2).length === 2;
      await runCi(queue.id, repo.path, screening ? screenDone : probesTesting, { only: async (id) => (await role(id)) !== 'part' });
      if (!screening) await new Promise((r) => setTimeout(r, 1_000));
      const q = await runCi(queue.id, repo.path, (x) => x.entries.length === 6 && finalEntries(x), { timeoutMs: 60_000 });
      expect(Object.fromEntries(q.entries.map((e) => [e.number, e.status]))).toEqual({
        1: 'failed',
        2: 'merged',
        3: 'merged',
        4: 'merged',
        5: 'merged',
        6: 'merged',
      });
      expect(readFile(repo.path, git(repo.path, 'rev-parse', 'main'), 'bad.txt')).toBeNull();
      // The screen: PRs 3-6 on the base, passed, never landed (withdrawn once they were marked screened).
      const rows = await prisma.mergeQueueBatch.findMany({ where: { queueId: queue.id } });
      const screens = rows.filter((b) => (b.planner as { role?: string } | null)?.role === 'screen');
      if (screening) {
        expect(screens.map((b) => ({ prNumbers: b.prNumbers, status: b.status, baseSha: b.baseSha, checks: b.requiredChecks }))).toEqual([
          { prNumbers: [3, 4, 5, 6], status: 'withdrawn', baseSha: repo.main, checks: [{ name: 'ci', state: 'success' }] },
        ]);
        expect(git(repo.path, 'rev-list', '--first-parent', 'main').split('\n')).not.toContain(screens[0].headSha);
      } else expect(screens).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'blocks the second of two PRs that edit the same line, with a readable reason, and lands the first',
    async () => {
      const { repo, queue } = await newQueue({ 'shared.txt': 'line one\n' });
      const a = commit(repo.path, repo.main, { 'shared.txt': 'line one, edited by #7\n' }, 'PR 7');
      const b = commit(repo.path, repo.main, { 'shared.txt': 'line one, edited by #8\n' }, 'PR 8');
      await enqueue(queue.id, 7, a);
      await enqueue(queue.id, 8, b);
      const q = await runCi(queue.id, repo.path, (x) => x.entries.length === 2 && finalEntries(x));
      const byNumber = Object.fromEntries(q.entries.map((e) => [e.number, e]));
      expect(byNumber[7].status).toBe('merged');
      expect(byNumber[8].status).toBe('blocked');
      expect(byNumber[8].block).toMatch(/^Merge conflict while building candidate b\d+: #8 conflicts with (#7|the base \([0-9a-f]{12}\)) in shared\.txt$/);
      expect(readFile(repo.path, git(repo.path, 'rev-parse', 'main'), 'shared.txt')).toBe('line one, edited by #7\n');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'pause: running CI finishes and is recorded, nothing lands until resume; the endpoint answers as the spec says',
    async () => {
      const { repo, queue } = await newQueue();
      const head = commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1');
      await enqueue(queue.id, 1, head);
      await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined && b.operation === undefined), {
        report: () => false,
      });
      // Quiet: the executor has nothing left to answer, so the revision stays what we read.
      await quiet(queue.id);
      const testing = await getQueue(queue.id);

      const paused = await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).set('If-Match', testing.revision).expect(200);
      expect(paused.body.data.status).toBe('paused');
      // Pausing again: 200 and no state change.
      const again = await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      expect(again.body.data.revision).toBe(paused.body.data.revision);
      // A stale revision, another organization, a caller without mergeQueues:operate.
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).set('If-Match', testing.revision).expect(409);
      const intruder = await createTenant(app, 'mq-intruder');
      expect((await http().post(`/merge-queues/${queue.id}/pause`).set(intruder.auth).expect(404)).body.code).toBe('dpa:MergeQueue:NOT_FOUND');
      const member = await createMember(app, owner, 'MEMBER');
      expect((await http().post(`/merge-queues/${queue.id}/pause`).set(member.auth).expect(403)).body.metadata.permission).toBe('mergeQueues:operate');

      // The CI run that already existed finishes; its result is recorded; nothing lands.
      const base = git(repo.path, 'rev-parse', 'main');
      const ready = await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'ready'));
      await new Promise((r) => setTimeout(r, 1_500));
      const still = await getQueue(queue.id);
      expect(still.status).toBe('paused');
      expect(still.entries[0].status).toBe('testing');
      expect(git(repo.path, 'rev-parse', 'main')).toBe(base);
      expect(ready.batches.find((b) => b.status === 'ready')?.requiredChecks).toEqual([{ name: 'ci', state: 'success' }]);

      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      await runCi(queue.id, repo.path, (x) => x.entries[0].status === 'merged');
      expect(readFile(repo.path, git(repo.path, 'rev-parse', 'main'), 'pr-1.txt')).toBe('one\n');

      // Disabled: pause is a 422; the audit trail has the controls.
      await http().post(`/merge-queues/${queue.id}/disable`).set(owner.auth).expect(200);
      expect((await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(422)).body.code).toBe('dpa:MergeQueue:DISABLED');
      const audit = await http().get(`/audit-events?targetId=${queue.id}&limit=100`).set(owner.auth).expect(200);
      expect((audit.body.data as { action: string }[]).map((e) => e.action).reverse()).toEqual([
        'mergeQueue.created',
        'mergeQueue.paused',
        'mergeQueue.resumed',
        'mergeQueue.disabled',
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'reconciles a land whose executor died after the base moved: landed, each PR merged exactly once',
    async () => {
      const { repo, queue } = await newQueue();
      const heads = [commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'), commit(repo.path, repo.main, { 'pr-2.txt': 'two\n' }, 'PR 2')];
      faults.crashAfterNextLand = true;
      for (const [i, head] of heads.entries()) await enqueue(queue.id, i + 1, head);
      const q = await runCi(queue.id, repo.path, (x) => x.entries.length === 2 && x.entries.every((e) => e.status === 'merged'));
      expect(faults.crashAfterNextLand).toBe(false);
      expect(firstParentMerges(repo.path).map((s) => s.split(' ')[1])).toEqual(['#1', '#2']);
      const main = git(repo.path, 'rev-parse', 'main');
      expect(readFile(repo.path, main, 'pr-1.txt')).toBe('one\n');
      expect(readFile(repo.path, main, 'pr-2.txt')).toBe('two\n');
      expect(q.batches.filter((b) => b.status === 'landed').length).toBeGreaterThan(0);
      // The orphaned land ended unknown and a readBack found it had happened.
      await quiet(queue.id);
      const ops = await prisma.mergeQueueOperation.findMany({ where: { queueId: queue.id }, orderBy: [{ revision: 'asc' }, { ordinal: 'asc' }] });
      const lands = ops.filter((o) => o.kind === 'land');
      expect(lands.map((o) => o.outcome)).toContain('unknown');
      expect(ops.some((o) => o.kind === 'readBack' && o.outcome === 'succeeded')).toBe(true);
      expect(ops.every((o) => o.finishedAt !== null)).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
  it(
    'plans by priority, skips a set-aside PR until it is put back, and draws the chain with estimates',
    async () => {
      const { repo, queue } = await newQueue({ 'README.md': 'hello\n' }, { maxParallel: 1, maxBatch: 1 });
      const head = (n: number) => commit(repo.path, repo.main, { [`pr-${n}.txt`]: `change ${n}\n` }, `PR ${n}`);
      await enqueue(queue.id, 1, head(1));
      await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined), { report: () => false });
      const low = await enqueue(queue.id, 2, head(2));
      const high = (
        await http()
          .post(`/merge-queues/${queue.id}/entries`)
          .set(owner.auth)
          .send({ data: { number: 3, headSha: head(3), url: 'https://example.test/pr/3', priority: 50 } })
          .expect(201)
      ).body.data as Entry;
      const aside = await enqueue(queue.id, 4, head(4));
      const patched = await http()
        .patch(`/merge-queues/${queue.id}/entries/${aside.id}`)
        .set(owner.auth)
        .send({ data: { setAside: true } })
        .expect(200);
      expect(patched.body.data).toMatchObject({ setAside: true, status: 'queued' });

      // The chain view: the batch under test, then the waiting entries in planning order with ETAs.
      const chain = (await http().get(`/merge-queues/${queue.id}/chain`).set(owner.auth).expect(200)).body.data;
      expect(chain.batches.map((b: { prNumbers: number[] }) => b.prNumbers)).toEqual([[1]]);
      expect(chain.batches[0]).toMatchObject({ role: 'chain', status: 'testing' });
      expect(chain.waiting.map((e: { id: string }) => e.id)).toEqual([high.id, low.id, aside.id]);
      expect(chain.waiting[0].estimatedMergeAt).toBeDefined();
      expect(chain.waiting[2]).toMatchObject({ setAside: true });
      expect(chain.waiting[2].estimatedMergeAt).toBeUndefined();

      await runCi(queue.id, repo.path, (x) => ['#2', '#3'].every((n) => x.entries.find((e) => `#${e.number}` === n)?.status === 'merged'));
      expect(firstParentMerges(repo.path).map((s) => s.split(' ')[1])).toEqual(['#1', '#3', '#2']);
      await quiet(queue.id);
      expect((await getQueue(queue.id)).entries.find((e) => e.id === aside.id)?.status).toBe('queued');
      await http()
        .patch(`/merge-queues/${queue.id}/entries/${aside.id}`)
        .set(owner.auth)
        .send({ data: { setAside: false } })
        .expect(200);
      await runCi(queue.id, repo.path, (x) => x.entries.find((e) => e.id === aside.id)?.status === 'merged');
      expect(firstParentMerges(repo.path).map((s) => s.split(' ')[1])).toEqual(['#1', '#3', '#2', '#4']);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'fails a batch whose required check never reports within checkTimeoutSeconds (a delayed tick job, not an in-process timer)',
    async () => {
      const { repo, queue } = await newQueue({ 'README.md': 'hello\n' }, { checkTimeoutSeconds: 1, flakyRetries: 0 });
      await enqueue(queue.id, 1, commit(repo.path, repo.main, { 'slow.txt': 'slow\n' }, 'PR 1'));
      const q = await runCi(queue.id, repo.path, (x) => x.entries[0]?.status === 'failed', { report: () => false, timeoutMs: 20_000 });
      expect(q.batches.find((b) => b.prNumbers.includes(1))?.status).toBe('failed');
      expect(git(repo.path, 'rev-parse', 'main')).toBe(repo.main);
      const events = (await http().get(`/merge-queues/${queue.id}/events?limit=100`).set(owner.auth).expect(200)).body.data as {
        type: string;
        transitions: { subject: string; to: string }[];
      }[];
      expect(events.some((e) => e.type === 'tick' && e.transitions.some((t) => t.subject === 'batch' && t.to === 'failed'))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a new head withdraws the batch under test and re-queues the PR; the new head is what lands',
    async () => {
      const { repo, queue } = await newQueue();
      const oldHead = commit(repo.path, repo.main, { 'pr-1.txt': 'first try\n' }, 'PR 1');
      const entry = await enqueue(queue.id, 1, oldHead);
      const testing = await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined), {
        report: () => false,
      });
      const oldBatch = testing.batches.find((b) => b.status === 'testing') as Batch;
      const newHead = commit(repo.path, oldHead, { 'pr-1.txt': 'second try\n' }, 'PR 1, fixed');
      await http()
        .patch(`/merge-queues/${queue.id}/entries/${entry.id}`)
        .set(owner.auth)
        .send({ data: { headSha: newHead } })
        .expect(200);
      const after = await getQueue(queue.id);
      expect(after.batches.find((b) => b.id === oldBatch.id)?.status).toBe('withdrawn');
      // A result for the withdrawn batch is recorded and changes nothing.
      const late = await http()
        .post(`/merge-queues/${queue.id}/batches/${oldBatch.id}/checks`)
        .set(owner.auth)
        .send({ data: { name: 'ci', state: 'success', sha: oldBatch.headSha } })
        .expect(200);
      expect(late.body.data.status).toBe('withdrawn');
      const q = await runCi(queue.id, repo.path, (x) => x.entries[0].status === 'merged');
      expect(q.entries[0].headSha).toBe(newHead);
      const main = git(repo.path, 'rev-parse', 'main');
      expect(readFile(repo.path, main, 'pr-1.txt')).toBe('second try\n');
      git(repo.path, 'merge-base', '--is-ancestor', newHead, main);
    },
    TEST_TIMEOUT_MS,
  );

  it('a PR with a live entry is refused a second one (409 naming that entry); once removed it may be queued again', async () => {
    const { repo, queue } = await newQueue();
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    const head = commit(repo.path, repo.main, { 'pr-5.txt': 'five\n' }, 'PR 5');
    const first = await enqueue(queue.id, 5, head);
    const again = await http()
      .post(`/merge-queues/${queue.id}/entries`)
      .set(owner.auth)
      .send({ data: { number: 5, headSha: head, url: 'https://git.example.test/pull/5' } })
      .expect(409);
    expect(again.body).toMatchObject({ code: 'dpa:MergeQueue:ENTRY_EXISTS', metadata: { number: 5, entryId: first.id } });
    await http().delete(`/merge-queues/${queue.id}/entries/${first.id}`).set(owner.auth).expect(200);
    const second = await enqueue(queue.id, 5, head);
    expect(second.id).not.toBe(first.id);
  });

  // Under load CI's report often arrived while the queue was still migrating; the two cases after
  // this one make both orders of "CI passes" and "PATCH baseRef" deterministic.
  it(
    'PATCH: settings apply at once; a new baseRef goes through migrating, waits for nothing landing, and PRs then land on the new branch',
    async () => {
      const { repo, queue } = await newQueue();
      git(repo.path, 'update-ref', 'refs/heads/release', repo.main);
      const entry = await enqueue(queue.id, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined), { report: () => false });

      // Bad settings and refs are refused with the field named; another queue's ref is a 409.
      const refused = async (data: Record<string, unknown>, status: number) =>
        (await http().patch(`/merge-queues/${queue.id}`).set(owner.auth).send({ data }).expect(status)).body;
      expect((await refused({ minBatch: 8, maxBatch: 2 }, 422)).code).toBe('dpa:MergeQueue:INVALID_SETTINGS');
      expect((await refused({ baseRef: 'nope' }, 422)).code).toBe('dpa:MergeQueue:BASE_REF_NOT_FOUND');
      expect((await refused({ requiredChecks: null }, 400)).details[0].items.join(' ')).toContain('requiredChecks');
      expect((await refused({ screening: 'yes' }, 400)).details[0].items.join(' ')).toContain('screening');
      const stale = (await getQueue(queue.id)).revision;
      await http()
        .patch(`/merge-queues/${queue.id}`)
        .set(owner.auth)
        .send({ data: { maxParallel: 2 } })
        .expect(200);
      await http()
        .patch(`/merge-queues/${queue.id}`)
        .set(owner.auth)
        .set('If-Match', stale)
        .send({ data: { maxParallel: 3 } })
        .expect(409);

      const moved = await http()
        .patch(`/merge-queues/${queue.id}`)
        .set(owner.auth)
        .send({ data: { baseRef: 'release' } })
        .expect(200);
      expect(['migrating', 'active', 'idle']).toContain(moved.body.data.status);
      const done = await runCi(queue.id, repo.path, (x) => x.entries.find((e) => e.id === entry.id)?.status === 'merged');
      const row = await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } });
      expect({ baseRef: row.baseRef, pendingBaseRef: row.pendingBaseRef }).toEqual({ baseRef: 'release', pendingBaseRef: null });
      expect(done.entries.find((e) => e.id === entry.id)?.status).toBe('merged');
      expect(readFile(repo.path, git(repo.path, 'rev-parse', 'release'), 'pr-1.txt')).toBe('one\n');
      expect(git(repo.path, 'rev-parse', 'main')).toBe(repo.main);
      const events = (await http().get(`/merge-queues/${queue.id}/events?limit=100`).set(owner.auth).expect(200)).body.data as {
        type: string;
        transitions: { subject: string; to: string }[];
      }[];
      const types = events.map((e) => e.type).reverse();
      expect(types.indexOf('migrate')).toBeGreaterThan(-1);
      expect(types.indexOf('migrated')).toBeGreaterThan(types.indexOf('migrate'));
      expect(events.find((e) => e.type === 'migrate')?.transitions).toContainEqual(expect.objectContaining({ subject: 'queue', to: 'migrating' }));
      const audit = await http().get(`/audit-events?targetId=${queue.id}&limit=100`).set(owner.auth).expect(200);
      expect((audit.body.data as { action: string }[]).filter((e) => e.action === 'mergeQueue.updated')).toHaveLength(2);
    },
    TEST_TIMEOUT_MS,
  );
  /**
   * A queue whose batch is under test on `main`, with `release` made at main's commit (so the
   * candidate's base is the same commit on both refs), and BullMQ paused: no executor runs until
   * `resume`, so the PATCH and CI's report are applied in the order the case sends them.
   */
  async function migrationWithExecutorsHeld() {
    const jobs = worker.get<Queue_>(getQueueToken(QueueName.MergeQueues), { strict: false });
    const { repo, queue } = await newQueue();
    git(repo.path, 'update-ref', 'refs/heads/release', repo.main);
    const entry = await enqueue(queue.id, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
    const testing = await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined), { report: () => false });
    const batch = testing.batches.find((b) => b.status === 'testing')!;
    await jobs.pause();
    const passCi = () =>
      http()
        .post(`/merge-queues/${queue.id}/batches/${batch.id}/checks`)
        .set(owner.auth)
        .send({ data: { name: 'ci', state: 'success', sha: batch.headSha } })
        .expect(200);
    const moveToRelease = () =>
      http()
        .patch(`/merge-queues/${queue.id}`)
        .set(owner.auth)
        .send({ data: { baseRef: 'release' } })
        .expect(200);
    const lands = () => prisma.mergeQueueOperation.count({ where: { queueId: queue.id, kind: 'land' } });
    const settle = async () => {
      await jobs.resume();
      const done = await runCi(queue.id, repo.path, (x) => x.entries.find((e) => e.id === entry.id)?.status === 'merged');
      await quiet(queue.id);
      // The move may finish in the run after the land's.
      for (let i = 0; i < 100 && (await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } })).pendingBaseRef !== null; i++)
        await new Promise((r) => setTimeout(r, 100));
      const row = await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } });
      const events = (await http().get(`/merge-queues/${queue.id}/events?limit=100`).set(owner.auth).expect(200)).body.data as { type: string }[];
      return { done, row, types: events.map((e) => e.type).reverse() };
    };
    return { jobs, repo, queue, entry, passCi, moveToRelease, lands, settle };
  }

  it(
    'PATCH baseRef, then CI passes while migrating: the batch lands on the NEW ref once the move is done (never on the old one)',
    async () => {
      const t = await migrationWithExecutorsHeld();
      try {
        expect((await t.moveToRelease()).body.data.status).toBe('migrating');
        // Recorded while migrating; nothing is planned or landed until the move is done.
        await t.passCi();
        expect(await t.lands()).toBe(0);
        // The worker's next run completes the move; `migrated` plans the land at once (the
        // candidate's base is release's head too), and that land is on release.
        const { done, row, types } = await t.settle();
        expect({ baseRef: row.baseRef, pendingBaseRef: row.pendingBaseRef }).toEqual({ baseRef: 'release', pendingBaseRef: null });
        expect(done.entries.find((e) => e.id === t.entry.id)?.status).toBe('merged');
        expect(readFile(t.repo.path, git(t.repo.path, 'rev-parse', 'release'), 'pr-1.txt')).toBe('one\n');
        expect(git(t.repo.path, 'rev-parse', 'main')).toBe(t.repo.main);
        expect(types.indexOf('migrated')).toBeGreaterThan(types.indexOf('checkReported'));
      } finally {
        await t.jobs.resume();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'CI passes, then PATCH baseRef before the land ran: the land already issued finishes on the OLD ref, then the queue moves',
    async () => {
      const t = await migrationWithExecutorsHeld();
      try {
        await t.passCi();
        // The land is issued (in the outbox; no executor has run it yet) when the PATCH arrives.
        expect(await t.lands()).toBe(1);
        expect((await t.moveToRelease()).body.data.status).toBe('migrating');
        const { done, row, types } = await t.settle();
        expect(done.entries.find((e) => e.id === t.entry.id)?.status).toBe('merged');
        expect(readFile(t.repo.path, git(t.repo.path, 'rev-parse', 'main'), 'pr-1.txt')).toBe('one\n');
        expect(git(t.repo.path, 'rev-parse', 'release')).toBe(t.repo.main);
        expect({ baseRef: row.baseRef, pendingBaseRef: row.pendingBaseRef }).toEqual({ baseRef: 'release', pendingBaseRef: null });
        expect(types.indexOf('migrated')).toBeGreaterThan(types.indexOf('migrate'));
      } finally {
        await t.jobs.resume();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'two executors draining one outbox at once perform each operation exactly once (claimed from pending under the queue lock)',
    async () => {
      const jobs = worker.get<Queue_>(getQueueToken(QueueName.MergeQueues), { strict: false });
      const executor = worker.get(MergeQueueExecutor);
      const { repo, queue } = await newQueue({ 'README.md': 'hello\n' }, { maxParallel: 3, maxBatch: 1 });
      // BullMQ's queue is paused (no worker takes a job): the operations stay in the outbox for the two executors below.
      await jobs.pause();
      try {
        for (const n of [1, 2, 3]) await enqueue(queue.id, n, commit(repo.path, repo.main, { [`pr-${n}.txt`]: `${n}\n` }, `PR ${n}`));
        // Nothing has run yet (the first prepare waits; the chain's next ones wait for its candidate).
        expect(await prisma.mergeQueueOperation.count({ where: { queueId: queue.id, outcome: 'pending' } })).toBeGreaterThan(0);
        expect(await prisma.mergeQueueOperation.count({ where: { queueId: queue.id, NOT: { outcome: 'pending' } } })).toBe(0);
        faults.sideEffects = [];
        // Each run gives its slot back after its time slice (MERGE_QUEUE_EXECUTOR_SLICE_MS): on a loaded machine a
        // prepare can outlast it, so the two executors drain side by side in rounds until the outbox is empty.
        let a = 0;
        let b = 0;
        for (
          let round = 0;
          round < 20 &&
          (await prisma.mergeQueueOperation.count({
            where: { queueId: queue.id, outcome: 'pending', finishedAt: null, kind: { in: ['prepare', 'publish', 'startCi'] } },
          })) > 0;
          round++
        ) {
          const [x, y] = await Promise.all([executor.drain(queue.id), executor.drain(queue.id)]);
          a += x;
          b += y;
        }
        const ops = await prisma.mergeQueueOperation.findMany({ where: { queueId: queue.id } });
        const performed = ops.filter((o) => o.outcome === 'succeeded');
        // prepare and publish of three batches, startCi of each: all done, and each by one executor.
        expect(performed.filter((o) => o.kind === 'prepare')).toHaveLength(3);
        expect(performed.filter((o) => o.kind === 'publish')).toHaveLength(3);
        expect(a + b).toBe(performed.length);
        const mine = faults.sideEffects.filter((e) => e.startsWith(`file://${repo.path} `));
        expect(mine.filter((e) => e.includes(' build '))).toHaveLength(3);
        expect(mine.filter((e) => e.includes(' publish '))).toHaveLength(3);
        expect(new Set(mine).size).toBe(mine.length);
        const started = await prisma.mergeQueueEvent.findMany({ where: { queueId: queue.id, type: 'operationStarted' } });
        const ids = started.map((e) => (e.detail as { operationId: string }).operationId);
        expect(ids).toHaveLength(new Set(ids).size);
        expect(ids).toHaveLength(performed.length);
      } finally {
        await jobs.resume();
      }
      const q = await runCi(queue.id, repo.path, (x) => x.entries.every((e) => e.status === 'merged'));
      expect(q.entries).toHaveLength(3);
      expect(firstParentMerges(repo.path)).toHaveLength(3);
    },
    TEST_TIMEOUT_MS,
  );
  const reportOn = (queueId: string, batchId: string, auth: { Authorization: string }, data: Record<string, unknown>) =>
    http()
      .post(`/merge-queues/${queueId}/batches/${batchId}/checks`)
      .set(auth)
      .send({ data: { name: 'ci', state: 'success', ...data } });
  type TrailEvent = { type: string; revision: string; detail: Record<string, unknown>; transitions: unknown[]; operations: unknown[] };
  const trail = async (queueId: string) =>
    (await http().get(`/merge-queues/${queueId}/events?limit=100`).set(owner.auth).expect(200)).body.data as TrailEvent[];

  it(
    'check reports need mergeQueues:reportChecks: a MEMBER and an unscoped VIEWER key get 403; an ADMIN and a CI key scoped to it succeed',
    async () => {
      const { repo, queue } = await newQueue();
      await enqueue(queue.id, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      const testing = await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined), {
        report: () => false,
      });
      const batch = testing.batches.find((b) => b.status === 'testing') as Batch;
      await quiet(queue.id);
      const before = await getQueue(queue.id);
      for (const role of ['MEMBER', 'VIEWER'] as const) {
        const caller = await createMember(app, owner, role);
        const res = await reportOn(queue.id, batch.id, caller.auth, { sha: batch.headSha }).expect(403);
        expect(res.body).toMatchObject({ code: 'dpa:Auth:FORBIDDEN', metadata: { permission: 'mergeQueues:reportChecks', role } });
      }
      expect((await getQueue(queue.id)).batches).toEqual(before.batches);
      const admin = await createMember(app, owner, 'ADMIN');
      expect((await reportOn(queue.id, batch.id, admin.auth, { state: 'pending', sha: batch.headSha }).expect(200)).body.data.status).toBe('testing');
      // CI as the README recommends: a service account with a key that can report checks and nothing else.
      const account = (
        await http()
          .post('/service-accounts')
          .set(owner.auth)
          .send({ data: { name: `ci-${queue.id}`, role: 'ADMIN' } })
          .expect(201)
      ).body.data.id as string;
      const key = (
        await http()
          .post('/api-keys')
          .set(owner.auth)
          .send({ data: { name: 'ci checks', ownerId: account, scopes: ['mergeQueues:reportChecks'] } })
          .expect(201)
      ).body.data as { token: string; scopes: string[] };
      expect(key.scopes).toEqual(['mergeQueues:reportChecks']);
      const ci = { Authorization: `Bearer ${key.token}` };
      expect((await http().get(`/merge-queues/${queue.id}`).set(ci).expect(403)).body.metadata).toMatchObject({
        permission: 'mergeQueues:read',
        scopes: ['mergeQueues:reportChecks'],
      });
      expect((await reportOn(queue.id, batch.id, ci, { sha: batch.headSha }).expect(200)).body.data.requiredChecks).toEqual([{ name: 'ci', state: 'success' }]);
      const q = await runCi(queue.id, repo.path, (x) => x.entries[0].status === 'merged', { report: () => false });
      expect(git(repo.path, 'rev-parse', 'main')).toBe(batch.headSha);
      expect(q.batches.find((b) => b.id === batch.id)?.status).toBe('landed');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a result for another commit than the batch's candidate changes nothing: 409 with the candidate in metadata, recorded in the events",
    async () => {
      const { repo, queue } = await newQueue();
      const head = commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1');
      await enqueue(queue.id, 1, head);
      const testing = await runCi(queue.id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined), {
        report: () => false,
      });
      const batch = testing.batches.find((b) => b.status === 'testing') as Batch;
      await quiet(queue.id);
      const before = await getQueue(queue.id);
      // CI tested the PR's head, not the candidate: the result is for another commit.
      const res = await reportOn(queue.id, batch.id, owner.auth, { sha: head, url: 'https://ci.example.test/stale' }).expect(409);
      expect(res.body).toMatchObject({
        code: 'dpa:MergeQueue:CHECK_NOT_FOR_CANDIDATE',
        metadata: { batchId: batch.id, sha: head, candidateSha: batch.headSha },
        requestId: expect.any(String),
      });
      const after = await getQueue(queue.id);
      expect(after.batches).toEqual(before.batches);
      expect(after.entries).toEqual(before.entries);
      const [last] = await trail(queue.id);
      expect(last).toMatchObject({
        type: 'checkReported',
        detail: { batchId: batch.id, candidateSha: head, state: 'success', fit: 'other', currentCandidateSha: batch.headSha },
        transitions: [],
        operations: [],
      });
      expect(BigInt(last.revision)).toBeLessThanOrEqual(BigInt(after.revision));
      // The commit is required, and must be a commit id.
      expect(JSON.stringify((await reportOn(queue.id, batch.id, owner.auth, {}).expect(400)).body.details)).toContain('sha');
      expect(JSON.stringify((await reportOn(queue.id, batch.id, owner.auth, { sha: 'main' }).expect(400)).body.details)).toContain('sha');
      const q = await runCi(queue.id, repo.path, (x) => x.entries[0].status === 'merged');
      expect(q.batches.find((b) => b.id === batch.id)?.status).toBe('landed');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a result that arrives before the batch is testing its candidate is kept in Postgres and applied once it is',
    async () => {
      const { repo, queue } = await newQueue();
      let release = () => {};
      const gate = { reached: null as string | null, released: new Promise<void>((resolve) => (release = resolve)) };
      faults.publishGates.set(queue.id, gate);
      let batch: Batch;
      try {
        await enqueue(queue.id, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
        // The candidate ref is pushed (a CI watching it starts), but its publish is not recorded yet.
        const deadline = Date.now() + 20_000;
        while (gate.reached === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(gate.reached).not.toBeNull();
        batch = (await getQueue(queue.id)).batches[0];
        expect(batch).toMatchObject({ status: 'preparing', headSha: gate.reached, operation: { kind: 'publish' } });
        const early = await reportOn(queue.id, batch.id, owner.auth, { sha: gate.reached, url: 'https://ci.example.test/early' }).expect(200);
        expect(early.body.data).toMatchObject({
          status: 'preparing',
          requiredChecks: [{ name: 'ci', state: 'pending' }],
          checksUrl: 'https://ci.example.test/early',
        });
        // Kept in the planner state in Postgres (the batch row's planner part), not in a process's memory.
        const row = await prisma.mergeQueueBatch.findUniqueOrThrow({ where: { id: batch.id } });
        const kept = (row.planner as { earlyChecks?: unknown }).earlyChecks;
        expect(kept).toEqual([{ sha: gate.reached, name: 'ci', state: 'success' }]);
      } finally {
        release();
        faults.publishGates.delete(queue.id);
      }
      // No further report: the kept result is applied once the batch is testing, and the batch lands.
      const q = await runCi(queue.id, repo.path, (x) => x.entries[0].status === 'merged', { report: () => false, timeoutMs: 20_000 });
      expect(q.batches.find((b) => b.id === batch.id)).toMatchObject({ status: 'landed', requiredChecks: [{ name: 'ci', state: 'success' }] });
      expect(git(repo.path, 'rev-parse', 'main')).toBe(gate.reached);
      const events = await trail(queue.id);
      expect(events.find((e) => e.type === 'checkReported')?.detail).toMatchObject({ fit: 'early', candidateSha: gate.reached });
      const started = events.find((e) =>
        e.transitions.some((t) => (t as { id: string; to: string }).id === batch.id && (t as { to: string }).to === 'testing'),
      );
      expect(started?.transitions).toContainEqual(expect.objectContaining({ subject: 'batch', id: batch.id, from: 'testing', to: 'ready' }));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'PATCH baseRef: a ref being moved to is held against new queues; a disabled queue moves once nothing lands, and stays disabled',
    async () => {
      const jobs = worker.get<Queue_>(getQueueToken(QueueName.MergeQueues), { strict: false });
      const { repo, queue } = await newQueue();
      git(repo.path, 'update-ref', 'refs/heads/next', repo.main);
      await http().post(`/merge-queues/${queue.id}/disable`).set(owner.auth).expect(200);
      const source = await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } });
      // No worker takes a job for now: the move stays pending, and its target is held.
      await jobs.pause();
      try {
        await http()
          .patch(`/merge-queues/${queue.id}`)
          .set(owner.auth)
          .send({ data: { baseRef: 'next' } })
          .expect(200);
        expect((await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } })).pendingBaseRef).toBe('next');
        const taken = await http()
          .post('/merge-queues')
          .set(owner.auth)
          .send({ data: { codeSourceId: source.repositoryId, baseRef: 'next', requiredChecks: ['ci'] } })
          .expect(409);
        expect(taken.body.code).toBe('dpa:MergeQueue:ALREADY_EXISTS');
      } finally {
        await jobs.resume();
      }
      for (let i = 0; i < 200 && (await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } })).pendingBaseRef !== null; i++)
        await new Promise((r) => setTimeout(r, 50));
      const moved = await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } });
      expect({ baseRef: moved.baseRef, pendingBaseRef: moved.pendingBaseRef, status: moved.status }).toEqual({
        baseRef: 'next',
        pendingBaseRef: null,
        status: 'disabled',
      });
      const events = (await http().get(`/merge-queues/${queue.id}/events?limit=100`).set(owner.auth).expect(200)).body.data as {
        type: string;
        detail: { baseRef?: string };
      }[];
      expect(events.find((e) => e.type === 'baseMoved')?.detail.baseRef).toBe('next');
    },
    TEST_TIMEOUT_MS,
  );
});
