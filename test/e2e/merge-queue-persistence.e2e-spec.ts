import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { MergeQueuesRepository } from '@/modules/merge-queues/merge-queues.repository';
import { createTestApp } from '../support/app';
import { createTenant, type TestTenant } from '../support/factories';
import { commit, createBareRepo, createLocalCodeSource } from '../support/git-repos';
import { MergeQueueClient, type MqQueue } from '../support/merge-queue-client';

/**
 * Issue 22, part 3: the planner's entries and batches are rows, written only when they change; the
 * history the planner drops stays as rows; the state assembled from the rows is the one the reducer
 * produced; the sweep selects only queues with something due. The API only (no worker): the queue
 * is paused, so no operation is performed.
 */
describe('Merge queues: incremental persistence and the due sweep', () => {
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let repository: MergeQueuesRepository;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    prisma = app.get(PrismaService, { strict: false });
    repository = app.get(MergeQueuesRepository, { strict: false });
    owner = await createTenant(app, 'mq-persist');
    mq = new MergeQueueClient(() => app.getHttpServer(), owner.auth, prisma);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  /** A paused queue holding `n` waiting PRs. */
  async function pausedQueue(n: number) {
    const repo = createBareRepo({ 'README.md': 'hello\n' });
    const source = await createLocalCodeSource(prisma, owner.organizationId, repo.path);
    const queue = (
      await http()
        .post('/merge-queues')
        .set(owner.auth)
        .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'] } })
        .expect(201)
    ).body.data as MqQueue;
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    const entries = [];
    for (let i = 1; i <= n; i++) entries.push(await mq.enqueue(queue.id, i, commit(repo.path, repo.main, { [`pr-${i}.txt`]: `${i}\n` }, `PR ${i}`)));
    return { queue, entries };
  }

  it("a change to one entry writes that row only; the document holds no entries; the state read back is the reducer's", async () => {
    const { queue, entries } = await pausedQueue(5);
    const doc = (await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } })).plannerState as Record<string, unknown>;
    expect(doc).not.toHaveProperty('entries');
    expect(doc).not.toHaveProperty('batches');
    const before = await prisma.mergeQueueEntry.findMany({ where: { queueId: queue.id }, orderBy: { number: 'asc' } });
    const target = entries[2].id;
    const applied = await repository.apply({
      organizationId: owner.organizationId,
      queueId: queue.id,
      build: () => [{ type: 'setAside', entryId: target, setAside: true, at: Date.now() }],
      wake: 'none',
    });
    expect(applied.outcome.changed).toBe(true);
    const after = await prisma.mergeQueueEntry.findMany({ where: { queueId: queue.id }, orderBy: { number: 'asc' } });
    const rewritten = after.filter((row, i) => row.updatedAt.getTime() !== before[i].updatedAt.getTime()).map((row) => row.id);
    expect(rewritten).toEqual([target]);
    expect(after.find((row) => row.id === target)).toMatchObject({ setAside: true, planner: expect.objectContaining({ id: target, setAside: true }) });
    // The state assembled from the document and the rows equals the reducer's, in the same order.
    const read = await repository.plannerState(owner.organizationId, queue.id);
    expect(read).toEqual(applied.outcome.state);
    expect(read!.entries.map((e) => e.id)).toEqual(applied.outcome.state.entries.map((e) => e.id));
    // The API shows the change.
    const shown = await mq.get(queue.id);
    expect(shown.entries.find((e) => e.id === target)).toMatchObject({ status: 'queued' });
  }, 60_000);

  it('final entries the planner history drops stay as rows (the API still lists them) and leave the state', async () => {
    const { queue, entries } = await pausedQueue(5);
    // A history of 2 final entries (the default keeps 200): the third removal drops the oldest.
    await prisma.$executeRaw`UPDATE "MergeQueue" SET "plannerState" = jsonb_set("plannerState", '{config,historyLimit}', '2') WHERE "id" = ${queue.id}`;
    for (const e of entries.slice(0, 4)) await http().delete(`/merge-queues/${queue.id}/entries/${e.id}`).set(owner.auth).expect(200);
    // One more event: the reducer prunes before it applies an event.
    await repository.apply({
      organizationId: owner.organizationId,
      queueId: queue.id,
      build: () => [{ type: 'setAside', entryId: entries[4].id, setAside: true, at: Date.now() }],
      wake: 'none',
    });
    const state = (await repository.plannerState(owner.organizationId, queue.id))!;
    const finalInState = state.entries.filter((e) => e.status === 'removed').map((e) => e.id);
    expect(finalInState).toEqual([entries[2].id, entries[3].id]);
    const rows = await prisma.mergeQueueEntry.findMany({ where: { queueId: queue.id }, orderBy: { number: 'asc' } });
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => [r.status, r.planner === null])).toEqual([
      ['removed', true],
      ['removed', true],
      ['removed', false],
      ['removed', false],
      ['queued', false],
    ]);
    const shown = await mq.get(queue.id);
    expect(shown.entries.map((e) => [e.number, e.status])).toEqual([
      [1, 'removed'],
      [2, 'removed'],
      [3, 'removed'],
      [4, 'removed'],
      [5, 'queued'],
    ]);
  }, 60_000);

  it('the sweep selects the queues with something due, not the idle ones nor those due later', async () => {
    const [due, later, idle] = [await pausedQueue(0), await pausedQueue(0), await pausedQueue(0)].map((q) => q.queue.id);
    await prisma.mergeQueue.update({ where: { id: due }, data: { nextWakeAt: new Date(Date.now() - 1_000) } });
    await prisma.mergeQueue.update({ where: { id: later }, data: { nextWakeAt: new Date(Date.now() + 3_600_000) } });
    const { ciRunning } = await repository.sweepTargets();
    const mine = ciRunning.filter((id) => [due, later, idle].includes(id));
    expect(mine).toEqual([due]);
    // A tick that finds nothing to do moves the queue's wake past it: the next sweep leaves it alone.
    await repository.apply({ organizationId: null, queueId: due, quietWhenUnchanged: true, build: () => [{ type: 'tick', at: Date.now() }], wake: 'none' });
    expect((await prisma.mergeQueue.findUniqueOrThrow({ where: { id: due } })).nextWakeAt).toBeNull();
    expect((await repository.sweepTargets()).ciRunning).not.toContain(due);
  }, 60_000);
});
