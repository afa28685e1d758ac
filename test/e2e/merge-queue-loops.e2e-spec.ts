import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getQueueToken } from '@nestjs/bullmq';
import type { Job, Queue } from 'bullmq';
import Redis from 'ioredis';
import request from 'supertest';
import type { AppConfig } from '@/common/config/app-config';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { MergeQueuesJob, QueueName } from '@/common/queues/queue-names';
import { MergeQueuesProcessor } from '@/modules/merge-queues/merge-queues.processor';
import { createTestWorker } from '../support/app';
import type { TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, git } from '../support/git-repos';
import type { MergeQueueClient } from '../support/merge-queue-client';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';

const TEST_TIMEOUT_MS = 90_000;

/** Polls `read` until `done` holds (or fails after `timeoutMs`, showing the last value). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last: ${JSON.stringify(value, null, 1)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Issue 19, "no silent loops", on GitHub (the provider emulator, the real Octokit client) with the
 * real worker in process: a land refused for good stops the queue with the reason after one try;
 * a 503 with Retry-After is retried after it, with backoff; one queue whose planner throws does not
 * stop the sweep of the others; and the sweep's job scheduler comes back when Redis loses it.
 */
describe('Merge queues: no silent loops (GitHub on the emulator, in-process worker)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let worker: INestApplicationContext;
  let prisma: PrismaService;
  let owner: TestTenant;
  let login: string;
  let mq: MergeQueueClient;
  let config: AppConfig;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    // Its own database and queue prefix (own-database.ts): a worker of another suite, with other
    // failure settings, took part in this suite's failures and quarantined a queue after 4 of 10.
    // Short backoffs so that the cases take seconds; the policy itself is unit-tested (failure-policy.spec.ts).
    suite = await githubQueueSuite('loops', {
      config: (base) => ({ ...base, mergeQueues: { ...base.mergeQueues, retryBaseMs: 200, retryMaxMs: 3_000, quarantineAfter: 10 } }),
    });
    ({ emulator, app, worker, prisma, owner, mq, config } = suite);
    ({ login } = suite.github);
  }, 60_000);

  afterAll(async () => {
    delete process.env.DPA_FAILPOINTS;
    await suite?.close();
  });

  afterEach(() => {
    Object.assign(emulator.knobs, { gitFailures: 0, gitFailureStatus: undefined, gitFailureRetryAfter: undefined, protectedBranches: [] });
    delete process.env.DPA_FAILPOINTS;
  });

  const events = async (queueId: string) =>
    (await http().get(`/merge-queues/${queueId}/events?limit=100`).set(owner.auth).expect(200)).body.data as {
      type: string;
      detail: Record<string, unknown>;
    }[];
  const pr = (path: string, main: string, n: number) => commit(path, main, { [`pr-${n}.txt`]: `${n}\n` }, `PR ${n}`);

  it(
    'a land refused by a protected branch stops the queue with a readable reason after exactly one try; resume lands it once the rule is lifted',
    async () => {
      const repo = await suite.newQueue();
      emulator.knobs.protectedBranches = [`${login}/${repo.name}:main`];
      // A land is one GraphQL updateRefs (the fenced land); this suite's worker works on this queue only now.
      const since = Date.now();
      const mainUpdates = () => emulator.requests.filter((r) => r.at >= since && r.method === 'POST' && r.path === '/graphql').length;
      await mq.enqueue(repo.queue.id, 1, pr(repo.path, repo.main, 1));
      const paused = await mq.runCi(repo.queue.id, repo.path, (q) => q.status === 'paused', { timeoutMs: 60_000 });
      await mq.quiet(repo.queue.id);

      expect(mainUpdates()).toBe(1);
      expect(git(repo.path, 'rev-parse', 'main')).toBe(repo.main);
      // The reason, readable: on the entry (GET /merge-queues/{id}), in the events, in the chain the CLI draws.
      const reason = 'Protected branch update failed for refs/heads/main.';
      expect(paused.entries.find((e) => e.number === 1)).toMatchObject({ status: 'testing', block: `Landing refused by the provider: ${reason}` });
      expect(paused.batches.find((b) => b.prNumbers.includes(1))).toMatchObject({ status: 'ready' });
      expect((await events(repo.queue.id)).find((e) => e.type === 'landRefused')?.detail).toMatchObject({ reason });
      const chain = (await http().get(`/merge-queues/${repo.queue.id}/chain`).set(owner.auth).expect(200)).body.data;
      expect(chain).toMatchObject({ status: 'paused', hold: { kind: 'landRefused', reason, prNumbers: [1] } });

      // No loop: the sweep and a kick find nothing to do; the base is never asked again.
      const processor = worker.get(MergeQueuesProcessor);
      await processor.sweep();
      await mq.quiet(repo.queue.id);
      expect(mainUpdates()).toBe(1);

      // Lifted and resumed: the land is tried again, once, and succeeds.
      emulator.knobs.protectedBranches = [];
      await http().post(`/merge-queues/${repo.queue.id}/resume`).set(owner.auth).expect(200);
      const landed = await mq.runCi(repo.queue.id, repo.path, (q) => q.entries.every((e) => e.status === 'merged'), { timeoutMs: 60_000 });
      expect(landed.status).toBe('idle');
      expect(landed.entries[0].block).toBeUndefined();
      expect(mainUpdates()).toBe(2);
      expect(git(repo.path, 'rev-parse', 'main')).not.toBe(repo.main);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a land onto a deleted base ref stops the queue with the reason, once',
    async () => {
      const repo = await suite.newQueue();
      await mq.enqueue(repo.queue.id, 1, pr(repo.path, repo.main, 1));
      // CI passes once the base ref is gone: the land finds nothing to move.
      await mq.runCi(repo.queue.id, repo.path, (q) => q.batches.some((b) => b.status === 'testing'), { report: () => false });
      git(repo.path, 'update-ref', '-d', 'refs/heads/main');
      const paused = await mq.runCi(repo.queue.id, repo.path, (q) => q.status === 'paused', { timeoutMs: 60_000 });
      expect(paused.entries[0]).toMatchObject({ status: 'testing', block: 'Landing refused by the provider: the base ref main does not exist' });
      const trail = await events(repo.queue.id);
      expect(trail.filter((e) => e.type === 'landRefused')).toHaveLength(1);
      // One land, tried once; a sweep finds nothing more to do.
      await worker.get(MergeQueuesProcessor).sweep();
      await mq.quiet(repo.queue.id);
      const lands = await prisma.mergeQueueOperation.findMany({ where: { queueId: repo.queue.id, kind: 'land' } });
      expect(lands.map((o) => o.outcome)).toEqual(['failed']);
      expect(git(repo.path, 'for-each-ref', '--format=%(refname)', 'refs/heads/main')).toBe('');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a provider answering 503 with Retry-After is tried again only after it, with backoff, and the PR lands',
    async () => {
      const repo = await suite.newQueue();
      const since = Date.now();
      Object.assign(emulator.knobs, { gitFailures: 3, gitFailureStatus: 503, gitFailureRetryAfter: '2' });
      await mq.enqueue(repo.queue.id, 1, pr(repo.path, repo.main, 1));
      const done = await mq.runCi(repo.queue.id, repo.path, (q) => q.entries.every((e) => e.status === 'merged'), { timeoutMs: 60_000 });
      expect(done.status).toBe('idle');
      // The first three git calls to the repository answered 503; each next call came at least
      // Retry-After (2 s) later, never in a tight loop (no assertion on how fast it went).
      // Git operations only: the worker also posts commit statuses (issue 20) and reads the PR's title
      // (issue 39), jobs of their own with their own retries, which the failures do not hold up.
      const calls = emulator.requests.filter(
        (r) => r.at >= since && r.path.startsWith(`/repos/${login}/${repo.name}/`) && !r.path.includes('/statuses/') && !r.path.includes('/pulls/'),
      );
      expect(calls.length).toBeGreaterThan(3);
      for (const i of [1, 2, 3]) expect(calls[i].at - calls[i - 1].at).toBeGreaterThanOrEqual(2_000);
      const row = await prisma.mergeQueue.findUniqueOrThrow({ where: { id: repo.queue.id } });
      // The failures in a row ended with the first operation that succeeded.
      expect(row).toMatchObject({ failureCount: 0, retryAt: null, quarantined: false });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a queue failing again and again is quarantined with the reason; the others go on; resume takes it up again',
    async () => {
      const failing = await suite.newQueue();
      const healthy = await suite.newQueue();
      // Every git call fails (far more than the 10 tries before quarantine), without Retry-After.
      Object.assign(emulator.knobs, { gitFailures: 1_000_000, gitFailureStatus: 503 });
      await mq.enqueue(failing.queue.id, 1, pr(failing.path, failing.main, 1));
      const quarantined = await until(
        () => mq.get(failing.queue.id),
        (q) => q.status === 'paused',
        60_000,
      );
      emulator.knobs.gitFailures = 0;
      const row = await prisma.mergeQueue.findUniqueOrThrow({ where: { id: failing.queue.id } });
      expect(row).toMatchObject({ quarantined: true, failureCount: 10 });
      expect(quarantined.entries[0].block).toMatch(/^Queue quarantined: 10 failures in a row; the last: prepare unavailable: Service Unavailable/);
      expect((await events(failing.queue.id)).find((e) => e.type === 'quarantined')?.detail.reason).toMatch(/10 failures in a row/);
      // Another queue of the same worker goes on.
      await mq.enqueue(healthy.queue.id, 2, pr(healthy.path, healthy.main, 2));
      await mq.runCi(healthy.queue.id, healthy.path, (q) => q.entries.every((e) => e.status === 'merged'), { timeoutMs: 60_000 });
      // Resumed: the failures start again from zero, and the PR lands.
      await http().post(`/merge-queues/${failing.queue.id}/resume`).set(owner.auth).expect(200);
      await mq.runCi(failing.queue.id, failing.path, (q) => q.entries.every((e) => e.status === 'merged'), { timeoutMs: 60_000 });
      expect(await prisma.mergeQueue.findUniqueOrThrow({ where: { id: failing.queue.id } })).toMatchObject({ quarantined: false, failureCount: 0 });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'one queue whose planner throws does not stop the sweep of two others',
    async () => {
      // Created first, so its id sorts first: the sweep reaches it before the two others.
      const queues = [];
      for (let i = 0; i < 3; i++) queues.push(await suite.newQueue());
      for (const [i, q] of queues.entries()) await mq.enqueue(q.queue.id, 1 + i, pr(q.path, q.main, 1 + i));
      // CI starts on all three and never reports; each is made due (as if its check deadline had come), so the sweep ticks it.
      for (const q of queues)
        await until(
          () => mq.get(q.queue.id),
          (v) => v.batches.some((b) => b.status === 'testing'),
        );
      const [broken, ...others] = queues.map((q) => q.queue.id);
      const due = () => prisma.mergeQueue.updateMany({ where: { id: { in: [broken, ...others] } }, data: { nextWakeAt: new Date(Date.now() - 1_000) } });
      await due();
      expect(others.every((id) => id > broken)).toBe(true);
      process.env.DPA_FAILPOINTS = `merge-queue.reduce@${broken}`;
      const result = await worker.get(MergeQueuesProcessor).sweep();
      expect(result.failed).toEqual([broken]);
      expect(result.swept).toEqual(expect.arrayContaining(others));
      expect(result.swept).not.toContain(broken);
      // Armed no more: the next sweep handles the queue that failed.
      delete process.env.DPA_FAILPOINTS;
      await due();
      const next = await worker.get(MergeQueuesProcessor).sweep();
      expect(next.failed).toEqual([]);
      expect(next.swept).toEqual(expect.arrayContaining([broken, ...others]));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the sweep comes back when Redis loses its job scheduler',
    async () => {
      // This case flushes Redis, so its worker runs on a Redis database of its own, never the
      // suite's (DPA_TEST_REDIS_DB, shared by the other processes of this run): the next one.
      const ownDb = (Number(process.env.DPA_TEST_REDIS_DB ?? 13) + 1) % 16;
      const url = new URL(config.redisUrl);
      url.pathname = `/${ownDb}`;
      const own: AppConfig = {
        ...config,
        redisUrl: url.toString(),
        queuePrefix: `${config.queuePrefix}-flush`,
        jobSchedulerCheckIntervalMs: 200,
        mergeQueues: { ...config.mergeQueues, sweepIntervalMs: 300 },
      };
      const flushed = await createTestWorker(own);
      const redis = new Redis(url.toString(), { maxRetriesPerRequest: null });
      try {
        const queue = flushed.get<Queue>(getQueueToken(QueueName.MergeQueues), { strict: false });
        const processor = flushed.get(MergeQueuesProcessor);
        const sweeps: number[] = [];
        processor.worker.on('completed', (job: Job) => void (job.name === MergeQueuesJob.Sweep && sweeps.push(Date.now())));
        expect(await queue.getJobScheduler(MergeQueuesJob.Sweep)).toBeDefined();
        await until(
          async () => sweeps.length,
          (n) => n > 0,
        );
        expect(await redis.flushdb()).toBe('OK');
        const flushedAt = Date.now();
        expect(await queue.getJobScheduler(MergeQueuesJob.Sweep)).toBeUndefined();
        // Re-created by the periodic check, and sweeping again.
        await until(
          () => queue.getJobScheduler(MergeQueuesJob.Sweep),
          (s) => s !== undefined,
        );
        await until(
          async () => sweeps.filter((t) => t > flushedAt).length,
          (n) => n > 0,
        );
        expect(processor.schedulers?.recreated).toBeGreaterThanOrEqual(1);
      } finally {
        await redis.flushdb();
        redis.disconnect();
        await flushed.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
