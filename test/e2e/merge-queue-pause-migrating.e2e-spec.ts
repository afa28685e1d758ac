import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { QueueName } from '@/common/queues/queue-names';
import { createTestApp, createTestWorker } from '../support/app';
import { createTenant, type TestTenant } from '../support/factories';
import { commit, createBareRepo, createLocalCodeSource, git, readFile } from '../support/git-repos';
import { MergeQueueClient, type MqQueue } from '../support/merge-queue-client';

/** Issue 24 point 1: a pause sent while the queue is `migrating` is not lost. */
describe('Merge queue: pause during a base-ref move (LOCAL_GIT, real worker)', () => {
  let app: NestExpressApplication;
  let worker: INestApplicationContext;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    worker = await createTestWorker();
    prisma = app.get(PrismaService, { strict: false });
    owner = await createTenant(app, 'mq-pause-move');
    mq = new MergeQueueClient(() => app.getHttpServer(), owner.auth, prisma);
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await app?.close();
  });

  it('answers 200 with the queue still migrating, and the queue is paused when the move completes; resume then lands on the new ref', async () => {
    const jobs = worker.get<Queue>(getQueueToken(QueueName.MergeQueues), { strict: false });
    const repo = createBareRepo();
    git(repo.path, 'update-ref', 'refs/heads/release', repo.main);
    const source = await createLocalCodeSource(prisma, owner.organizationId, repo.path);
    const created = await http()
      .post('/merge-queues')
      .set(owner.auth)
      .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'], checkTimeoutSeconds: 600 } })
      .expect(201);
    const id = (created.body.data as MqQueue).id;
    const entry = await mq.enqueue(id, 1, commit(repo.path, repo.main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
    await mq.runCi(id, repo.path, (x) => x.batches.some((b) => b.status === 'testing' && b.headSha !== undefined), { report: () => false });

    // No worker takes a job for now: the move stays pending and the queue stays `migrating`.
    await jobs.pause();
    let paused: MqQueue;
    try {
      await http()
        .patch(`/merge-queues/${id}`)
        .set(owner.auth)
        .send({ data: { baseRef: 'release' } })
        .expect(200);
      const before = await mq.get(id);
      expect(before.status).toBe('migrating');
      const res = await http().post(`/merge-queues/${id}/pause`).set(owner.auth).expect(200);
      paused = res.body.data as MqQueue;
      // The 200 says what will happen: the status stays migrating (the pause is recorded: a new revision).
      expect(paused.status).toBe('migrating');
      // (greater, not exactly one more: a job already running when the queue's jobs were paused may record its outcome too)
      expect(BigInt(paused.revision)).toBeGreaterThan(BigInt(before.revision));
      // Pausing again changes nothing.
      const again = (await http().post(`/merge-queues/${id}/pause`).set(owner.auth).expect(200)).body.data as MqQueue;
      expect(again.revision).toBe(paused.revision);
    } finally {
      await jobs.resume();
    }

    // The move completes: the queue is paused on the new ref, and lands nothing even with CI green.
    for (let i = 0; i < 400 && (await prisma.mergeQueue.findUniqueOrThrow({ where: { id } })).pendingBaseRef !== null; i++)
      await new Promise((r) => setTimeout(r, 50));
    const moved = await prisma.mergeQueue.findUniqueOrThrow({ where: { id } });
    expect({ baseRef: moved.baseRef, pendingBaseRef: moved.pendingBaseRef }).toEqual({ baseRef: 'release', pendingBaseRef: null });
    expect((await mq.get(id)).status).toBe('paused');
    const events = (await http().get(`/merge-queues/${id}/events?limit=100`).set(owner.auth).expect(200)).body.data as {
      type: string;
      transitions: { subject: string; to: string }[];
    }[];
    expect(events.find((e) => e.type === 'migrated')?.transitions).toContainEqual(expect.objectContaining({ subject: 'queue', to: 'paused' }));
    await mq.quiet(id);
    const release = git(repo.path, 'rev-parse', 'release');
    for (const b of (await mq.get(id)).batches.filter((x) => x.status === 'testing')) {
      await http()
        .post(`/merge-queues/${id}/batches/${b.id}/checks`)
        .set(owner.auth)
        .send({ data: { name: 'ci', state: 'success', sha: b.headSha } })
        .expect(200);
    }
    await mq.quiet(id);
    await new Promise((r) => setTimeout(r, 500));
    expect(git(repo.path, 'rev-parse', 'release')).toBe(release);
    expect((await mq.get(id)).entries.find((e) => e.id === entry.id)?.status).not.toBe('merged');

    // Resume: the PR is planned on the new ref and lands there.
    await http().post(`/merge-queues/${id}/resume`).set(owner.auth).expect(200);
    const done = await mq.runCi(id, repo.path, (x) => x.entries.find((e) => e.id === entry.id)?.status === 'merged', { timeoutMs: 40_000 });
    expect(done.entries.find((e) => e.id === entry.id)?.status).toBe('merged');
    expect(readFile(repo.path, git(repo.path, 'rev-parse', 'release'), 'pr-1.txt')).toBe('one\n');
    expect(git(repo.path, 'rev-parse', 'main')).toBe(repo.main);
  }, 90_000);
});
