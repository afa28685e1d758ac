import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import type { TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, git, readFile } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import { finalEntries, firstParentMerges, type MergeQueueClient, type MqQueue } from '../support/merge-queue-client';

type Queue = MqQueue;

/** Each case drives GitHub's REST API (the emulator's, on real bare repositories) and the worker through several CI rounds. */
const TEST_TIMEOUT_MS = 90_000;

/**
 * The merge-queue engine on a GITHUB code source: the API and an in-process worker talk to the
 * provider emulator through the real Octokit client with the integration's token; what lands is
 * read back from the emulator's bare repository with git.
 */
describe('Merge queues on GitHub (engine, the provider emulator, in-process worker)', () => {
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
    suite = await githubQueueSuite('github');
    ({ emulator, app, prisma, owner, mq } = suite);
    ({ login, integrationId } = suite.github);
  }, 60_000);

  afterAll(() => suite?.close());

  afterEach(() => (emulator.knobs.gitFailures = 0));

  const enqueue = (queueId: string, number: number, headSha: string) => mq.enqueue(queueId, number, headSha);
  const runCi = (queueId: string, repoPath: string, done: (q: Queue) => boolean, timeoutMs = 60_000) => mq.runCi(queueId, repoPath, done, { timeoutMs });
  const quiet = (queueId: string) => mq.quiet(queueId);

  const statuses = (q: Queue) => Object.fromEntries(q.entries.map((e) => [e.number, e.status]));
  const scratchRefs = (repo: string) => git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/mq-build', 'refs/heads/mq-probe');

  it(
    'lands PRs in order with exactly their content, as fast-forwards of tested candidates built by GitHub',
    async () => {
      const { queue, ...repo } = await suite.newQueue();
      const { main } = await mq.landsThreeInOrder(queue.id, { path: repo.path, main: repo.main });
      // The merge commits were made by GitHub's merges endpoint, as the integration's user.
      expect(git(repo.path, 'log', '-1', '--format=%an', main)).toBe(login);
      await quiet(queue.id);
      expect(scratchRefs(repo.path)).toBe('');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'finds the bad PR of a batch of four, fails it and lands the other three',
    async () => {
      const { queue, ...repo } = await suite.newQueue({ settings: { flakyRetries: 0, minBatch: 4, maxBatch: 4, maxParallel: 1 } });
      // Paused while the four arrive, so that they are planned as one batch.
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const files: Record<string, string>[] = [{ 'pr-1.txt': 'one\n' }, { 'pr-2.txt': 'two\n' }, { 'bad.txt': 'breaks the build\n' }, { 'pr-4.txt': 'four\n' }];
      for (const [i, change] of files.entries()) await enqueue(queue.id, i + 1, commit(repo.path, repo.main, change, `PR ${i + 1}`));
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      const q = await runCi(queue.id, repo.path, (x) => x.entries.length === 4 && finalEntries(x));
      expect(statuses(q)).toEqual({ 1: 'merged', 2: 'merged', 3: 'failed', 4: 'merged' });
      expect(q.batches.some((b) => b.prNumbers.length === 4 && b.status === 'failed')).toBe(true);
      const main = git(repo.path, 'rev-parse', 'main');
      expect(git(repo.path, 'ls-tree', '--name-only', main).split('\n').sort()).toEqual(['README.md', 'pr-1.txt', 'pr-2.txt', 'pr-4.txt']);
      expect(firstParentMerges(repo.path).map((s) => s.split(' ')[1])).toEqual(['#1', '#2', '#4']);
      await quiet(queue.id);
      expect(scratchRefs(repo.path)).toBe('');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'blocks the PR that conflicts, naming it and the PR it conflicts with, and lands the first',
    async () => {
      const { queue, ...repo } = await suite.newQueue({ files: { 'shared.txt': 'line one\n' } });
      await enqueue(queue.id, 7, commit(repo.path, repo.main, { 'shared.txt': 'line one, edited by #7\n' }, 'PR 7'));
      await enqueue(queue.id, 8, commit(repo.path, repo.main, { 'shared.txt': 'line one, edited by #8\n' }, 'PR 8'));
      const q = await runCi(queue.id, repo.path, (x) => x.entries.length === 2 && finalEntries(x));
      const byNumber = Object.fromEntries(q.entries.map((e) => [e.number, e]));
      expect(byNumber[7].status).toBe('merged');
      expect(byNumber[8].status).toBe('blocked');
      expect(byNumber[8].block).toMatch(
        /^Merge conflict while building candidate b\d+: #8 conflicts with (#7|the base \([0-9a-f]{12}\)) \(GitHub does not say in which paths\)$/,
      );
      expect(readFile(repo.path, git(repo.path, 'rev-parse', 'main'), 'shared.txt')).toBe('line one, edited by #7\n');
      await quiet(queue.id);
      expect(scratchRefs(repo.path)).toBe('');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a provider failure during an operation is no outcome: the operation is performed again after a backoff and the PR still lands',
    async () => {
      const { queue, ...repo } = await suite.newQueue();
      await enqueue(queue.id, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      // GitHub answers 502 to the next few git calls, whichever operation makes them.
      emulator.knobs.gitFailures = 3;
      const q = await runCi(queue.id, repo.path, (x) => x.entries[0]?.status === 'merged');
      expect(emulator.knobs.gitFailures).toBe(0);
      expect(q.entries[0].status).toBe('merged');
      expect(readFile(repo.path, git(repo.path, 'rev-parse', 'main'), 'pr-1.txt')).toBe('one\n');
      await quiet(queue.id);
      // A transient failure (5xx) puts the operation back to pending (docs/merge-queue.md, "No silent
      // loops"): it is performed again, not reconciled, and nothing failed.
      const ops = await prisma.mergeQueueOperation.findMany({ where: { queueId: queue.id } });
      expect(ops.filter((o) => o.outcome === 'unknown' || o.outcome === 'failed')).toEqual([]);
      expect(await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } })).toMatchObject({ failureCount: 0, retryAt: null, quarantined: false });
    },
    TEST_TIMEOUT_MS,
  );

  it('refuses a queue whose base ref GitHub does not have, and answers 502 while GitHub is down', async () => {
    const name = `repo-${randomUUID().slice(0, 8)}`;
    emulator.addRepository(login, name);
    const source = await http()
      .post('/code-sources')
      .set(owner.auth)
      .send({ data: { integrationId, repository: `${login}/${name}` } })
      .expect(201);
    const create = (baseRef: string) =>
      http()
        .post('/merge-queues')
        .set(owner.auth)
        .send({ data: { codeSourceId: source.body.data.id, baseRef, requiredChecks: ['ci'] } });
    expect((await create('nope').expect(422)).body.code).toBe('dpa:MergeQueue:BASE_REF_NOT_FOUND');
    emulator.knobs.gitFailures = 1;
    expect((await create('main').expect(502)).body.code).toBe('dpa:GitProvider:UNAVAILABLE');
    await create('main').expect(201);
  });
});
