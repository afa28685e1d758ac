import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getQueueToken } from '@nestjs/bullmq';
import { Octokit } from '@octokit/rest';
import type { Queue as BullQueue } from 'bullmq';
import { Redis } from 'ioredis';
import request from 'supertest';
import type { AppConfig } from '@/common/config/app-config';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { QueueName } from '@/common/queues/queue-names';
import type { CodeSource } from '@/generated/prisma/client';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import { LocalGitRunner } from '@/modules/git-providers/local-git.runner';
import { type Fence, LocalMergeQueueGit, type MergeQueueGit } from '@/modules/git-providers/merge-queue-git';
import { MergeQueueGits } from '@/modules/merge-queues/engine/gits';
import { MergeQueueExecutor } from '@/modules/merge-queues/engine/executor';
import { executorJobId } from '@/modules/merge-queues/engine/scheduler';
import { fenceRef, type Lease, LeaseLost } from '@/modules/merge-queues/engine/lease';
import { MergeQueuesProcessor } from '@/modules/merge-queues/merge-queues.processor';
import { MergeQueueWriter } from '@/modules/merge-queues/engine/queue-writer';
import { MergeQueueOutboxRepository } from '@/modules/merge-queues/engine/store/outbox.repository';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, createBareRepo, createLocalCodeSource, git, readFile } from '../support/git-repos';
import { firstParentMerges, type MergeQueueClient, type MqQueue } from '../support/merge-queue-client';
import { until } from '../support/processes';

const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Short leases, so that a stalled executor is replaced within a second or two. */
const LEASE_MS = 1_200;
const TEST_TIMEOUT_MS = 120_000;

/** LOCAL_GIT whose next land of a queue (when armed) waits at the door: a land request delayed in flight. */
const landGates = new Map<string, { reached: Fence | null; arrived: Promise<void>; arrive: () => void; release: () => void; released: Promise<void> }>();
function armLandGate(queueId: string) {
  let arrive!: () => void;
  let release!: () => void;
  const gate = {
    reached: null as Fence | null,
    arrived: new Promise<void>((r) => (arrive = r)),
    arrive: () => arrive(),
    released: new Promise<void>((r) => (release = r)),
    release: () => release(),
  };
  landGates.set(queueId, gate);
  return gate;
}
class GatedLocalGit extends LocalMergeQueueGit {
  constructor(path: string) {
    super(path, new LocalGitRunner({ timeoutMs: 30_000 }));
  }

  async land(ref: string, newSha: string, expectedSha: string, fence: Fence): Promise<boolean> {
    const gate = [...landGates].find(([queueId]) => fence.ref.endsWith(`/${queueId}`))?.[1];
    if (gate && gate.reached === null) {
      gate.reached = fence;
      gate.arrive();
      await gate.released;
    }
    return super.land(ref, newSha, expectedSha, fence);
  }
}

/** An executor whose lease renewals can be frozen: the process stalled (event loop blocked, paused VM) while its requests are in flight. */
class StallableExecutor extends MergeQueueExecutor {
  frozen = false;

  protected renew(lease: Lease): Promise<boolean> {
    return this.frozen ? Promise.resolve(true) : super.renew(lease);
  }
}

/**
 * Fenced execution (docs/merge-queue.md, "Fencing"): two executors on one queue at once, the
 * first stalled past its lease while its land request is in flight; and an executor whose BullMQ
 * job lock is lost. LOCAL_GIT runs real git on bare repositories; GitHub is the provider emulator
 * behind the real Octokit (REST and GraphQL).
 */
describe('Merge queues: fenced executors (lease, epoch, fence ref), LOCAL_GIT and GitHub', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let worker: INestApplicationContext;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  let config: AppConfig;
  let jobs: BullQueue;
  let token: string;
  const http = () => request(app.getHttpServer());

  /** The executors' git: gated LOCAL_GIT, or GitHub through the real Octokit at the emulator. */
  const gits = {
    forSource: async (source: CodeSource): Promise<MergeQueueGit> =>
      source.provider === 'LOCAL_GIT'
        ? new GatedLocalGit(source.url)
        : new GitHubMergeQueueGit(new Octokit({ baseUrl: emulator.url, auth: token, log: QUIET }), source.nameWithOwner),
  };

  beforeAll(async () => {
    // A database and a BullMQ prefix of its own (own-database.ts): the workers of suites running
    // beside it sweep every queue of their database and would take part in the take-overs this
    // suite stages.
    suite = await githubQueueSuite('fencing', {
      config: (base) => ({ ...base, mergeQueues: { ...base.mergeQueues, leaseMs: LEASE_MS } }),
      worker: (b) => b.overrideProvider(MergeQueueGits).useValue(gits),
    });
    ({ emulator, app, worker, prisma, owner, mq, config } = suite);
    ({ token } = suite.github);
    jobs = worker.get<BullQueue>(getQueueToken(QueueName.MergeQueues), { strict: false });
  }, 60_000);

  afterAll(async () => {
    await jobs?.resume();
    await suite?.close();
  });

  const settings = { requiredChecks: ['ci'], checkTimeoutSeconds: 600, minBatch: 2, maxBatch: 2, maxParallel: 1, flakyRetries: 0 };

  /** A bare repository with every ref update logged (the reflog is the base's full history). */
  function loggedRepo(path: string) {
    git(path, 'config', 'core.logAllRefUpdates', 'always');
  }

  async function localQueue() {
    const repo = createBareRepo({ 'README.md': 'hello\n' });
    loggedRepo(repo.path);
    const source = await createLocalCodeSource(prisma, owner.organizationId, repo.path);
    const res = await http()
      .post('/merge-queues')
      .set(owner.auth)
      .send({ data: { codeSourceId: source.id, baseRef: 'main', ...settings } })
      .expect(201);
    return { ...repo, queue: res.body.data as MqQueue };
  }

  /** The values main took, oldest first (the reflog of the bare repository). */
  const mainHistory = (path: string): string[] => {
    try {
      return git(path, 'reflog', 'show', '--format=%H', 'refs/heads/main').split('\n').filter(Boolean).reverse();
    } catch {
      return []; // no reflog yet: main never moved since it was created
    }
  };

  const newExecutor = <T extends MergeQueueExecutor>(Kind: new (...args: ConstructorParameters<typeof MergeQueueExecutor>) => T) =>
    new Kind(worker.get(MergeQueueWriter), worker.get(MergeQueueOutboxRepository), gits as unknown as MergeQueueGits, config);

  /** Two PRs queued as one batch (the queue paused while they arrive), driven by hand up to CI passing: the batch's land is next. */
  async function upToLand(queueId: string, repo: { path: string; main: string }, driver: MergeQueueExecutor) {
    await http().post(`/merge-queues/${queueId}/pause`).set(owner.auth).expect(200);
    const e1 = await mq.enqueue(queueId, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
    const e2 = await mq.enqueue(queueId, 2, commit(repo.path, repo.main, { 'pr-2.txt': 'two\n' }, 'PR 2'));
    await http().post(`/merge-queues/${queueId}/resume`).set(owner.auth).expect(200);
    const testing = await until('the batch of two under test', async () => {
      await driver.drain(queueId);
      const q = await mq.get(queueId);
      return q.batches.find((b) => b.status === 'testing' && b.headSha && b.prNumbers.length === 2 && !b.operation);
    });
    await http()
      .post(`/merge-queues/${queueId}/batches/${testing.id}/checks`)
      .set(owner.auth)
      .send({ data: { name: 'ci', state: 'success', sha: testing.headSha } })
      .expect(200);
    return { e1, e2, batch: testing };
  }

  /**
   * The scenario of issue 19: executor A is stalled past its lease while its land request is in
   * flight; the user removes PR #1 meanwhile; executor B takes the queue over, reconciles A's land
   * (`unknown`), reads git back (not landed: the batch is withdrawn, #1 removed), and only then
   * does A's request arrive, while main is still exactly where the request expects it: without
   * the fence it would land the removed #1. It is refused; A's outcome is never written; #2 lands
   * once afterwards.
   */
  async function staleLandScenario(kind: 'LOCAL_GIT' | 'GITHUB') {
    const { queue, ...repo } = kind === 'LOCAL_GIT' ? await localQueue() : await suite.newQueue({ settings, prepare: loggedRepo });
    await jobs.pause();
    let aRun: Promise<unknown> | undefined;
    try {
      const { e1 } = await upToLand(queue.id, repo, newExecutor(MergeQueueExecutor));
      const a = newExecutor(StallableExecutor);
      // The land request is delayed in flight: LOCAL_GIT at the door of `git update-ref`, GitHub in the emulator (GraphQL updateRefs held).
      let release: () => void;
      if (kind === 'LOCAL_GIT') {
        const gate = armLandGate(queue.id);
        aRun = a.run(queue.id).catch((error: unknown) => error);
        await gate.arrived;
        release = gate.release;
      } else {
        let open!: () => void;
        emulator.knobs.heldUpdateRefs = 0;
        emulator.knobs.holdUpdateRefs = new Promise<void>((r) => (open = r));
        aRun = a.run(queue.id).catch((error: unknown) => error);
        await until('the land request to reach GitHub', async () => emulator.knobs.heldUpdateRefs === 1, 30_000, 20);
        release = () => {
          emulator.knobs.holdUpdateRefs = null;
          open();
        };
      }
      // A stalls: it renews its lease no more.
      a.frozen = true;
      const land = await prisma.mergeQueueOperation.findFirstOrThrow({ where: { queueId: queue.id, kind: 'land' } });
      expect(land.outcome).toBe('running');
      const epochA = land.ownerEpoch as bigint;
      expect(epochA).toBeGreaterThan(0n);
      // The user removes #1 while its batch is landing.
      await http().delete(`/merge-queues/${queue.id}/entries/${e1.id}`).set(owner.auth).expect(200);

      // B: refused while A's lease lasts, takes the queue once it expired.
      const b = newExecutor(MergeQueueExecutor);
      await until('B to take the queue over', async () => !(await b.run(queue.id)).leaseBusy, 30_000, 100);
      const row = await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } });
      expect(row.leaseEpoch).toBeGreaterThan(epochA);
      const reconciled = await prisma.mergeQueueOperation.findUniqueOrThrow({ where: { id: land.id } });
      expect(reconciled.outcome).toBe('unknown');
      const readBack = await prisma.mergeQueueOperation.findFirstOrThrow({ where: { queueId: queue.id, kind: 'readBack' } });
      expect(readBack.outcome).toBe('succeeded');
      expect(readBack.ownerEpoch).toBeGreaterThan(epochA);
      expect((readBack.result as { readBack: { candidateLanded: boolean } }).readBack.candidateLanded).toBe(false);
      expect((await mq.get(queue.id)).entries.find((e) => e.id === e1.id)?.status).toBe('removed');
      // The late request would still be a clean compare-and-swap of main: only the fence stops it.
      const payload = land.payload as { candidateSha: string; expectedBaseSha: string };
      expect(git(repo.path, 'rev-parse', 'main')).toBe(payload.expectedBaseSha);
      expect(readFile(repo.path, payload.candidateSha, 'pr-1.txt')).toBe('one\n');
      const eventsBefore = await prisma.mergeQueueEvent.count({ where: { queueId: queue.id } });

      release();
      const outcome = await aRun;
      expect(outcome).toBeInstanceOf(LeaseLost);
      // Refused: main never took the stale candidate, and A wrote nothing (its outcome, an event).
      expect(git(repo.path, 'rev-parse', 'main')).toBe(payload.expectedBaseSha);
      expect(mainHistory(repo.path)).not.toContain(payload.candidateSha);
      expect(await prisma.mergeQueueOperation.findUniqueOrThrow({ where: { id: land.id } })).toMatchObject({ outcome: 'unknown', ownerEpoch: epochA });
      expect(await prisma.mergeQueueEvent.count({ where: { queueId: queue.id } })).toBe(eventsBefore);
    } finally {
      emulator.knobs.holdUpdateRefs = null;
      await jobs.resume();
    }

    // The worker carries on: #2 lands once, #1 never.
    const done = await mq.runCi(queue.id, repo.path, (q) => q.entries.find((e) => e.number === 2)?.status === 'merged', { timeoutMs: 60_000 });
    expect(Object.fromEntries(done.entries.map((e) => [e.number, e.status]))).toEqual({ 1: 'removed', 2: 'merged' });
    expect(firstParentMerges(repo.path).map((s) => s.split(' ')[1])).toEqual(['#2']);
    const main = git(repo.path, 'rev-parse', 'main');
    expect(readFile(repo.path, main, 'pr-1.txt')).toBeNull();
    expect(readFile(repo.path, main, 'pr-2.txt')).toBe('two\n');
    // main moved exactly once after it was created: to the candidate holding #2 alone.
    const history = mainHistory(repo.path);
    expect(history[history.length - 1]).toBe(main);
    expect(history.slice(history.indexOf(repo.main) + 1)).toEqual([main]);
    await mq.quiet(queue.id);
    const started = await prisma.mergeQueueEvent.findMany({ where: { queueId: queue.id, type: 'operationStarted' } });
    const ids = started.map((e) => (e.detail as { operationId: string }).operationId);
    expect(ids).toHaveLength(new Set(ids).size);
    return { repo, queue };
  }

  it(
    'LOCAL_GIT: a second executor takes over from one stalled past its lease; the stale land arrives late and is refused by the fence; no PR lost, none merged twice',
    async () => {
      const { repo, queue } = await staleLandScenario('LOCAL_GIT');
      // The fence ref was moved by the read-back (a parentless commit of its own).
      const fence = git(repo.path, 'rev-parse', fenceRef(queue.id));
      expect(git(repo.path, 'log', '-1', '--format=%s', fence)).toMatch(/^merge-queue fence [0-9a-f-]{36}$/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'GitHub (emulator): the same take-over; the stale GraphQL updateRefs is refused on its beforeOid; candidates are built on scratch branches of their own operation',
    async () => {
      const { repo, queue } = await staleLandScenario('GITHUB');
      expect(emulator.requests.some((r) => r.method === 'POST' && r.path === '/graphql')).toBe(true);
      // Scratch branches are per operation (mq-build/<queue>/<operation>) and all deleted afterwards.
      expect(git(repo.path, 'for-each-ref', '--format=%(refname)', 'refs/heads/mq-build', 'refs/heads/mq-probe')).toBe('');
      const buildPaths = emulator.requests
        .map((r) => ({ ...r, path: decodeURIComponent(r.path) }))
        .filter((r) => r.method === 'PATCH' && r.path.includes(`/git/refs/heads/mq-build/${queue.id}/`));
      const scratch = new Set(buildPaths.map((r) => r.path.split('/git/refs/heads/')[1]));
      expect(scratch.size).toBeGreaterThanOrEqual(2);
      for (const name of scratch) expect(name).toMatch(new RegExp(`^mq-build/${queue.id}/op\\d+$`));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an executor whose BullMQ job lock is lost stops at once and writes nothing more; the next executor reconciles what it left',
    async () => {
      const { queue, ...repo } = await localQueue();
      const processor = worker.get(MergeQueuesProcessor);
      const gate = armLandGate(queue.id);
      const lockLost = new Promise<string[]>((resolve) => processor.worker.once('lockRenewalFailed', resolve));
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      await mq.enqueue(queue.id, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      await mq.enqueue(queue.id, 2, commit(repo.path, repo.main, { 'pr-2.txt': 'two\n' }, 'PR 2'));
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      // CI answers until the land is in flight (held at the door of git).
      let landing = false;
      void gate.arrived.then(() => (landing = true));
      await mq.runCi(queue.id, repo.path, () => landing, { timeoutMs: 60_000 });
      const land = await prisma.mergeQueueOperation.findFirstOrThrow({ where: { queueId: queue.id, kind: 'land' } });
      expect(land.outcome).toBe('running');
      // Redis loses the job's lock (as after a failover): BullMQ's next renewal fails and says so.
      // This suite's own Redis database (REDIS_URL of the test run); only the one lock key is removed.
      const redis = new Redis(process.env.REDIS_URL as string);
      try {
        expect(await redis.del(`${jobs.toKey(executorJobId(queue.id))}:lock`)).toBe(1);
      } finally {
        redis.disconnect();
      }
      expect(await lockLost).toContain(executorJobId(queue.id));
      // The request in flight still reaches git (it was sent), but the aborted run records nothing.
      gate.release();
      const done = await mq.runCi(queue.id, repo.path, (q) => q.entries.every((e) => e.status === 'merged'), { timeoutMs: 60_000 });
      expect(done.entries).toHaveLength(2);
      const after = await prisma.mergeQueueOperation.findUniqueOrThrow({ where: { id: land.id } });
      // Not `succeeded`: the aborted run never delivered its outcome; a later epoch reconciled it.
      expect(after.outcome).toBe('unknown');
      const readBack = await prisma.mergeQueueOperation.findFirstOrThrow({ where: { queueId: queue.id, kind: 'readBack' } });
      expect(readBack.ownerEpoch).toBeGreaterThan(land.ownerEpoch as bigint);
      expect((readBack.result as { readBack: { candidateLanded: boolean } }).readBack.candidateLanded).toBe(true);
      const trail = await prisma.mergeQueueEvent.findMany({ where: { queueId: queue.id }, orderBy: { createdAt: 'asc' } });
      expect(trail.filter((e) => e.type === 'operationSucceeded' && (e.detail as { operationId?: string }).operationId === land.plannerKey)).toEqual([]);
      expect(firstParentMerges(repo.path).map((s) => s.split(' ')[1])).toEqual(['#1', '#2']);
      // main moved once: the aborted run's request, which the read-back found landed.
      expect(mainHistory(repo.path)).toEqual([git(repo.path, 'rev-parse', 'main')]);
    },
    TEST_TIMEOUT_MS,
  );

  it('the lease: one holder at a time, taken over only once expired (the epoch grows), and a stale holder can neither renew nor write', async () => {
    const { queue } = await localQueue();
    const outbox = worker.get(MergeQueueOutboxRepository);
    const writer = worker.get(MergeQueueWriter);
    const a = await outbox.takeLease(queue.id, 'holder-a', LEASE_MS);
    expect(a).not.toBeNull();
    expect(await outbox.takeLease(queue.id, 'holder-b', LEASE_MS)).toBeNull();
    expect(await outbox.renewLease(a!, LEASE_MS)).toBe(true);
    // A write under the lease is applied.
    const tick = (lease: Lease) =>
      writer.apply({ organizationId: null, queueId: queue.id, lease, build: () => [{ type: 'tick', at: Date.now() }], wake: 'none' });
    await tick(a!);
    // B gets it once it expired (A stopped renewing), with a greater epoch.
    const b = await until('the lease to expire', () => outbox.takeLease(queue.id, 'holder-b', LEASE_MS), 30_000, 100);
    expect(b.epoch).toBe(a!.epoch + 1n);
    expect(await outbox.renewLease(a!, LEASE_MS)).toBe(false);
    await expect(tick(a!)).rejects.toBeInstanceOf(LeaseLost);
    await tick(b);
    // A's release does not free B's lease; B's does, and the next take grows the epoch again.
    await outbox.releaseLease(a!);
    expect(await outbox.takeLease(queue.id, 'holder-c', LEASE_MS)).toBeNull();
    await outbox.releaseLease(b);
    const c = await outbox.takeLease(queue.id, 'holder-c', LEASE_MS);
    expect(c?.epoch).toBe(b.epoch + 1n);
    await outbox.releaseLease(c!);
  });
});
