import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueueOperationKind } from '@/generated/prisma/client';
import { buildIfStale } from '@tools/workspace/build';
import { createTestApp } from '../support/app';
import { createTenant, type TestTenant } from '../support/factories';
import { commit, createBareRepo, createLocalCodeSource, git, readFile } from '../support/git-repos';
import { runCli, startApi, startWorker, type BuiltProcess, until } from '../support/processes';

/*
 * The merge-queue engine as users run it: built API and worker processes on one Postgres and one
 * Redis, killed with SIGKILL at the worst moments by failpoints (src/common/faults/failpoints.ts).
 * CI is this test: it reports the required check on every candidate under test.
 */

// A prefix of this suite's own: in-process workers of other suites must not take its jobs.
const PREFIX = `dpa-mqp-${randomUUID().slice(0, 8)}`;
// A short lease: a killed worker's queue is taken over 3 s after its last renewal.
const ENV = { QUEUE_PREFIX: PREFIX, MERGE_QUEUE_SWEEP_INTERVAL_MS: '1000', MERGE_QUEUE_LEASE_MS: '3000' };

interface Batch {
  id: string;
  status: string;
  prNumbers: number[];
  headSha?: string;
  operation?: { kind: string; outcome: string };
}
interface Queue {
  id: string;
  status: string;
  entries: { id: string; number: number; status: string }[];
  batches: Batch[];
}

describe('Merge queues across real processes (kills, two APIs, two workers, the CLI)', () => {
  let setup: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  const running: BuiltProcess[] = [];

  beforeAll(async () => {
    buildIfStale();
    setup = await createTestApp();
    prisma = setup.get(PrismaService, { strict: false });
    owner = await createTenant(setup, 'mq-processes');
  }, 240_000);

  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
  });

  afterAll(async () => {
    await setup?.close();
  });

  const track = <T extends BuiltProcess>(p: T): T => {
    running.push(p);
    return p;
  };

  async function newQueue(api: string, settings: Record<string, unknown> = {}) {
    const repo = createBareRepo();
    const source = await createLocalCodeSource(prisma, owner.organizationId, repo.path);
    const res = await request(api)
      .post('/merge-queues')
      .set(owner.auth)
      .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'], checkTimeoutSeconds: 600, ...settings } })
      .expect(201);
    return { repo, queueId: res.body.data.id as string };
  }

  const prHead = (repo: { path: string; main: string }, n: number) => commit(repo.path, repo.main, { [`pr-${n}.txt`]: `change ${n}\n` }, `PR ${n}`);

  async function enqueue(api: string, queueId: string, number: number, headSha: string) {
    return request(api)
      .post(`/merge-queues/${queueId}/entries`)
      .set(owner.auth)
      .send({ data: { number, headSha, url: `https://example.test/pr/${number}` } });
  }

  const getQueue = async (api: string, id: string): Promise<Queue> =>
    (await request(api).get(`/merge-queues/${id}`).set(owner.auth).expect(200)).body.data as Queue;

  /**
   * Acts as CI through `apis` (round robin) until every entry is merged. `afterStartCi`: a batch
   * gets its result only once it has no operation left (startCi performed), as a CI system that
   * startCi starts would; otherwise as soon as its candidate is under test.
   */
  async function ciUntilMerged(apis: string[], queueId: string, count: number, options: { timeoutMs?: number; afterStartCi?: boolean } = {}): Promise<Queue> {
    const reported = new Set<string>();
    let turn = 0;
    return until(
      `${count} PRs merged on ${queueId}`,
      async () => {
        const api = apis[turn++ % apis.length];
        const q = await getQueue(api, queueId);
        if (q.entries.length === count && q.entries.every((e) => e.status === 'merged')) return q;
        for (const b of q.batches) {
          if (b.status !== 'testing' || !b.headSha || reported.has(b.id) || (options.afterStartCi && b.operation)) continue;
          await request(apis[turn++ % apis.length])
            .post(`/merge-queues/${queueId}/batches/${b.id}/checks`)
            .set(owner.auth)
            .send({ data: { name: 'ci', state: 'success', sha: b.headSha } })
            .expect(200);
          reported.add(b.id);
        }
        return undefined;
      },
      options.timeoutMs ?? 90_000,
      150,
    );
  }

  /** Every PR appears exactly once on the base's first-parent line, and the content is all there. */
  function expectMergedOnce(repo: { path: string }, numbers: number[]): void {
    const merges = git(repo.path, 'log', '--first-parent', '--format=%s', 'main')
      .split('\n')
      .filter((s) => s.startsWith('Merge #'))
      .map((s) => Number(s.split(' ')[1].slice(1)));
    expect([...merges].sort((a, b) => a - b)).toEqual([...numbers].sort((a, b) => a - b));
    const main = git(repo.path, 'rev-parse', 'main');
    for (const n of numbers) expect(readFile(repo.path, main, `pr-${n}.txt`)).toBe(`change ${n}\n`);
  }

  /** Each operation was started (marked running) at most once and every one is finished. */
  async function expectEachOperationStartedOnce(queueId: string): Promise<void> {
    await until('the outbox to drain', async () => (await prisma.mergeQueueOperation.count({ where: { queueId, finishedAt: null } })) === 0, 30_000);
    const started = await prisma.mergeQueueEvent.findMany({ where: { queueId, type: 'operationStarted' }, select: { detail: true } });
    const ids = started.map((e) => (e.detail as { operationId: string }).operationId);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBe(new Set(ids).size);
  }

  it('two API processes and two worker processes on one queue: every PR lands once, no operation is performed twice, and the CLI draws the queue', async () => {
    const [api1, api2] = await Promise.all([startApi(ENV), startApi(ENV)]).then((ps) => ps.map(track));
    await Promise.all([startWorker(ENV), startWorker(ENV)]).then((ps) => ps.map(track));
    const apis = [api1.base, api2.base];
    const queues = await Promise.all([newQueue(api1.base, { maxParallel: 3 }), newQueue(api2.base, { maxParallel: 3 })]);
    const numbers = [1, 2, 3, 4, 5, 6, 7, 8];
    for (const n of numbers) {
      for (const [i, q] of queues.entries()) expect((await enqueue(apis[(n + i) % 2], q.queueId, n, prHead(q.repo, n))).status).toBe(201);
    }

    // While CI has not answered yet: the picture a person looks at.
    await until('a candidate under test', async () => (await getQueue(api1.base, queues[0].queueId)).batches.some((b) => b.status === 'testing' && b.headSha));
    const cli = await runCli(['queue', 'show', queues[0].queueId, '--url', api2.base], { ...process.env, DPA_TOKEN: owner.token }, 30_000);
    expect(cli.status).toBe(0);
    expect(cli.stdout).toContain(`merge queue ${queues[0].queueId}`);
    expect(cli.stdout).toMatch(/^[├└]─● +[0-9a-f]{8} +chain +testing +#\d/m);
    expect(cli.stdout).toMatch(/^waiting \(\d+\)$/m);
    expect(cli.stdout).not.toContain(owner.token);
    // One entry: the PR, its batch and its events.
    const testing = (await getQueue(api1.base, queues[0].queueId)).entries.find((e) => e.status === 'testing');
    expect(testing).toBeDefined();
    const entry = await runCli(['queue', 'entry', queues[0].queueId, testing!.id, '--url', api2.base], { ...process.env, DPA_TOKEN: owner.token }, 30_000);
    expect(entry.status).toBe(0);
    expect(entry.stdout).toMatch(new RegExp(`^#${testing!.number}  `));
    expect(entry.stdout).toMatch(/^events \(newest first\)$/m);
    expect(entry.stdout).toMatch(/^ {2}[0-9-]{10} [0-9:]{8} {2}enqueue\b/m);
    const refused = await runCli(['queue', 'show', randomUUID(), '--url', api2.base], { ...process.env, DPA_TOKEN: owner.token }, 30_000);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('404 dpa:MergeQueue:NOT_FOUND');

    for (const q of queues) await ciUntilMerged(apis, q.queueId, numbers.length);
    for (const q of queues) {
      expectMergedOnce(q.repo, numbers);
      await expectEachOperationStartedOnce(q.queueId);
    }
  }, 180_000);

  /*
   * Kill a worker with SIGKILL at a failpoint, start another: the operation left `running` ends
   * `unknown`, a readBack reads git, and the queue carries on to land each PR exactly once.
   */
  it.each<[string, MergeQueueOperationKind, string]>([
    ['prepare.after', 'prepare', 'the candidate commit was built, nothing recorded'],
    ['publish.after', 'publish', 'the candidate ref was pushed, nothing recorded'],
    ['startCi.before', 'startCi', 'CI start was marked running, its outcome never recorded'],
    ['land.after', 'land', 'the base ref moved, nothing recorded'],
  ])(
    'a worker killed at %s (%s: %s) is replaced and the queue reconciles: each PR merged exactly once',
    async (failpoint, kind) => {
      const api = track(await startApi(ENV));
      const { repo, queueId } = await newQueue(api.base);
      const doomed = track(await startWorker({ ...ENV, DPA_FAILPOINTS: `merge-queue.executor.${failpoint}@${queueId}` }));
      for (const n of [1, 2]) expect((await enqueue(api.base, queueId, n, prHead(repo, n))).status).toBe(201);
      // CI reports until the worker dies at the failpoint; it reports only once startCi has been
      // performed (no operation left on the batch), as a CI system started by it would.
      const reported = new Set<string>();
      await until(
        `the worker to die at ${failpoint}`,
        async () => {
          if (!doomed.running) return true;
          for (const b of (await getQueue(api.base, queueId)).batches) {
            if (b.status !== 'testing' || !b.headSha || b.operation || reported.has(b.id)) continue;
            await request(api.base)
              .post(`/merge-queues/${queueId}/batches/${b.id}/checks`)
              .set(owner.auth)
              .send({ data: { name: 'ci', state: 'success', sha: b.headSha } });
            reported.add(b.id);
          }
          return false;
        },
        60_000,
      );
      expect(await doomed.exited()).toEqual({ code: null, signal: 'SIGKILL' });
      expect(doomed.output).toContain(`failpoint merge-queue.executor.${failpoint} fired`);
      // Left `running`; or already reconciled to `unknown` when a worker of a suite running beside this
      // one (same database) swept the queue first: either way the dead worker's operation is in doubt.
      const orphan = await prisma.mergeQueueOperation.findFirstOrThrow({
        where: { queueId, kind, OR: [{ outcome: 'running', finishedAt: null }, { outcome: 'unknown' }] },
      });
      if (kind === 'land' && orphan.outcome === 'running') {
        // The base ref already holds the candidate while the database still says `merging`.
        const payload = orphan.payload as { candidateSha: string };
        expect(git(repo.path, 'rev-parse', 'main')).toBe(payload.candidateSha);
        expect((await getQueue(api.base, queueId)).batches.some((b) => b.status === 'merging')).toBe(true);
      }

      track(await startWorker(ENV));
      await ciUntilMerged([api.base], queueId, 2, { afterStartCi: true });
      expectMergedOnce(repo, [1, 2]);
      await expectEachOperationStartedOnce(queueId);
      const after = await prisma.mergeQueueOperation.findUniqueOrThrow({ where: { id: orphan.id } });
      expect(after.outcome).toBe('unknown');
      expect(await prisma.mergeQueueOperation.count({ where: { queueId, kind: 'readBack', outcome: 'succeeded' } })).toBeGreaterThan(0);
    },
    180_000,
  );

  it('an API process killed between an event commit and the executor kick: the periodic sweep picks the outbox up', async () => {
    const witness = track(await startApi(ENV));
    track(await startWorker(ENV));
    const { repo, queueId } = await newQueue(witness.base);
    const doomed = track(await startApi({ ...ENV, DPA_FAILPOINTS: `merge-queue.after-commit@${queueId}` }));
    // The enqueue commits, then the process dies before answering or kicking the executor.
    const lost = await enqueue(doomed.base, queueId, 1, prHead(repo, 1)).then(
      (res) => res.status,
      (error: Error) => error.message,
    );
    expect(lost).toMatch(/socket hang up|ECONNRESET/);
    expect(await doomed.exited()).toEqual({ code: null, signal: 'SIGKILL' });
    // The event is all there: the entry, and the operation it issued, pending in the outbox.
    const entry = await prisma.mergeQueueEntry.findFirstOrThrow({ where: { queueId, number: 1 } });
    expect(entry.status).toBe('testing');
    expect(await prisma.mergeQueueOperation.count({ where: { queueId, kind: 'prepare' } })).toBe(1);
    await ciUntilMerged([witness.base], queueId, 1, { timeoutMs: 60_000 });
    expectMergedOnce(repo, [1]);
    await expectEachOperationStartedOnce(queueId);
  }, 120_000);
});
