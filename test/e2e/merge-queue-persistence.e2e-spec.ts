import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { MergeQueueWriter } from '@/modules/merge-queues/engine/queue-writer';
import { MergeQueueOutboxRepository } from '@/modules/merge-queues/engine/store/outbox.repository';
import { MergeQueuesRepository } from '@/modules/merge-queues/merge-queues.repository';
import { Prisma } from '@/generated/prisma/client';
import { type AppConfig, loadConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { statusChanges, statusFront } from '@/modules/merge-queues/commit-statuses/commit-statuses';
import { isPlainWaiting, type MergeQueueEvent, reduceMergeQueue, windowSize } from '@/modules/merge-queues/planner';
import { createTestApp } from '../support/app';
import { createTenant, type TestTenant } from '../support/factories';
import { commit, createBareRepo, createLocalCodeSource } from '../support/git-repos';
import { MergeQueueClient } from '../support/merge-queue-client';
import { ownDatabase } from '../support/own-database';

/**
 * Issue 22, part 3: the planner's entries and batches are rows, written only when they change; the
 * history the planner drops stays as rows; the state assembled from the rows is the one the reducer
 * produced; the sweep selects only queues with something due. The API only (no worker), on a
 * database and queue prefix of its own: on the shared ones the other suites' workers sweep and
 * execute every queue, and an event of theirs between the test's read and its write would move the
 * revision under the comparison.
 */
describe('Merge queues: incremental persistence and the due sweep', () => {
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let repository: MergeQueuesRepository;
  let writer: MergeQueueWriter;
  let outbox: MergeQueueOutboxRepository;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  let own: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    own = await ownDatabase('persistence');
    const config: AppConfig = { ...loadConfig(), databaseUrl: own.databaseUrl, queuePrefix: own.queuePrefix };
    app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
    prisma = app.get(PrismaService, { strict: false });
    repository = app.get(MergeQueuesRepository, { strict: false });
    writer = app.get(MergeQueueWriter, { strict: false });
    outbox = app.get(MergeQueueOutboxRepository, { strict: false });
    owner = await createTenant(app, 'mq-persist');
    mq = new MergeQueueClient(() => app.getHttpServer(), owner.auth, prisma);
  }, 60_000);

  afterAll(async () => {
    try {
      await app?.close();
    } finally {
      await own?.drop();
    }
  });

  /**
   * A paused queue holding `n` waiting PRs (`priority(i)`: PR i's priority). `postsStatuses`: its code
   * source is made a GitHub one before the queue's first event (the repository asks once per queue),
   * so it decides commit statuses; with no worker they are never posted.
   */
  async function pausedQueue(n: number, settings: Record<string, unknown> = {}, priority: (i: number) => number = () => 0, postsStatuses = false) {
    const repo = createBareRepo({ 'README.md': 'hello\n' });
    const source = await createLocalCodeSource(prisma, owner.organizationId, repo.path);
    const queue = await mq.create(source.id, settings);
    if (postsStatuses) await prisma.codeSource.update({ where: { id: source.id }, data: { provider: 'GITHUB' } });
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    const entries = [];
    for (let i = 1; i <= n; i++)
      entries.push(await mq.enqueue(queue.id, i, commit(repo.path, repo.main, { [`pr-${i}.txt`]: `${i}\n` }, `PR ${i}`), { priority: priority(i) }));
    return { queue, entries };
  }

  /** Applies one event as the API does, and checks it against the reducer run on the whole state read just before. */
  async function applyAndCompare(queueId: string, event: MergeQueueEvent) {
    const whole = (await repository.plannerState(owner.organizationId, queueId))!;
    const expected = reduceMergeQueue(whole, event);
    const applied = await writer.apply({ organizationId: owner.organizationId, queueId, build: () => [event], wake: 'none' });
    expect(applied.outcome.operations).toEqual(expected.operations);
    expect(applied.outcome.transitions).toEqual(expected.transitions);
    expect(await repository.plannerState(owner.organizationId, queueId)).toEqual(expected.state);
    return { applied, whole };
  }

  it("a change to one entry writes that row only; the document holds no entries; the state read back is the reducer's", async () => {
    const { queue, entries } = await pausedQueue(5);
    const doc = (await prisma.mergeQueue.findUniqueOrThrow({ where: { id: queue.id } })).plannerState as Record<string, unknown>;
    expect(doc).not.toHaveProperty('entries');
    expect(doc).not.toHaveProperty('batches');
    const before = await prisma.mergeQueueEntry.findMany({ where: { queueId: queue.id }, orderBy: { number: 'asc' } });
    const target = entries[2].id;
    const applied = await writer.apply({
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
    await writer.apply({
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

  it("an event loads a window of the waiting line, and its result is the whole state's", async () => {
    // maxParallel 1 x maxBatch 2: a window of 11 plain waiting entries; 30 PRs, every third at priority 1.
    const settings = { maxParallel: 1, maxBatch: 2 };
    const size = windowSize(settings);
    const { queue, entries } = await pausedQueue(30, settings, (i) => (i % 3 === 0 ? 1 : 0));
    const rows = await prisma.mergeQueueEntry.findMany({ where: { queueId: queue.id } });
    expect(rows.every((r) => r.plannerPlain)).toBe(true);
    // A change to an entry the window leaves out (PR 29, priority 0, near the back): it is loaded as the one the event names.
    const back = entries[28].id;
    const first = await applyAndCompare(queue.id, { type: 'setPriority', entryId: back, priority: 2, at: Date.now() });
    expect(first.applied.outcome.before.entries.length).toBe(size + 1);
    expect(first.applied.outcome.before.entries.map((e) => e.id)).toContain(back);
    // The window keeps the state's order (the order the whole state lists its entries in).
    const order = first.whole.entries.map((e) => e.id);
    const held = first.applied.outcome.before.entries.map((e) => e.id);
    expect(order.filter((id) => held.includes(id))).toEqual(held);
    // Set aside, the entry is still plain (a set-aside entry is left out of windows unless named).
    await applyAndCompare(queue.id, { type: 'setAside', entryId: entries[5].id, setAside: true, at: Date.now() });
    // The duplicate check reads the rows: a PR the window leaves out is refused all the same.
    await http()
      .post(`/merge-queues/${queue.id}/entries`)
      .set(owner.auth)
      .send({ data: { number: 28, headSha: 'a'.repeat(40), url: 'https://example.test/pr/28' } })
      .expect(409);
    // Resume (the whole state) plans the first batch; then events in windows plan the next ones.
    await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
    let state = (await repository.plannerState(owner.organizationId, queue.id))!;
    const batch = state.batches.find((b) => b.status === 'preparing')!;
    const removed = await applyAndCompare(queue.id, { type: 'remove', entryId: batch.entryIds[0], at: Date.now() });
    expect(removed.applied.outcome.before.entries.length).toBeLessThan(30);
    expect(removed.applied.outcome.operations.map((o) => o.kind)).toContain('prepare');
    state = (await repository.plannerState(owner.organizationId, queue.id))!;
    const next = state.batches.find((b) => b.status === 'preparing')!;
    const failed = await applyAndCompare(queue.id, {
      type: 'operationFailed',
      operationId: next.operation!.id,
      reason: 'conflict',
      conflictEntryId: next.entryIds[0],
      at: Date.now(),
    });
    expect(failed.applied.outcome.before.entries.length).toBeLessThan(30);
    // The rows' plain flag follows the state.
    const after = await prisma.mergeQueueEntry.findMany({ where: { queueId: queue.id, planner: { not: Prisma.DbNull } } });
    const final = (await repository.plannerState(owner.organizationId, queue.id))!;
    for (const row of after) expect(row.plannerPlain).toBe(isPlainWaiting(final.entries.find((e) => e.id === row.id)!));
  }, 120_000);

  it("a queue that posts commit statuses loads a window with the front of the line, and posts the whole state's statuses", async () => {
    // maxParallel 1 x maxBatch 2: a window of 11 plain waiting entries and a front of 31 (set-aside
    // PRs count there).
    const settings = { maxParallel: 1, maxBatch: 2 };
    const { queue, entries } = await pausedQueue(60, settings, () => 0, true);
    // Set aside: three in the first places, one far back.
    for (const i of [1, 3, 5, 50]) await applyAndCompare(queue.id, { type: 'setAside', entryId: entries[i].id, setAside: true, at: Date.now() });
    const front = statusFront({ config: { ...(await repository.plannerState(owner.organizationId, queue.id))!.config } });
    expect(front).toBe(20 + windowSize(settings));
    const statusesAgree = async (event: MergeQueueEvent | MergeQueueEvent[], numbers?: number[]) => {
      const events = Array.isArray(event) ? event : [event];
      const whole = (await repository.plannerState(owner.organizationId, queue.id))!;
      const expected = { state: events.reduce((st, ev) => reduceMergeQueue(st, ev).state, whole) };
      const applied = await writer.apply({ organizationId: owner.organizationId, queueId: queue.id, numbers, build: () => events, wake: 'none' });
      expect(applied.outcome.state).toEqual(expect.objectContaining({ revision: expected.state.revision, batches: expected.state.batches }));
      const now = Date.now();
      expect(statusChanges(applied.outcome.before, applied.outcome.state, now)).toEqual(statusChanges(whole, expected.state, now));
      expect(await repository.plannerState(owner.organizationId, queue.id)).toEqual(expected.state);
      return applied.outcome.before;
    };
    // A change near the back: the window holds the front (set-aside ones too), not all 60.
    const loaded = await statusesAgree({ type: 'setPriority', entryId: entries[58].id, priority: 1, at: Date.now() });
    const held = loaded.entries.map((e) => e.number);
    expect(held.length).toBeLessThan(60);
    expect(held.length).toBeGreaterThanOrEqual(front);
    for (const n of [2, 4, 6, 59]) expect(held).toContain(n);
    expect(held).not.toContain(51);
    // PR 59 now has priority 1: it is first in line, its status names position 1.
    const whole = (await repository.plannerState(owner.organizationId, queue.id))!;
    expect(statusChanges(loaded, whole, Date.now()).find((x) => x.subject.kind === 'entry' && x.subject.number === 59)?.description).toMatch(
      /^Queued: position 1(,|$)/,
    );
    // A provider event names a PR by number: the window loads its live entry before the callback reads it.
    const byNumber = await writer.apply({
      organizationId: owner.organizationId,
      queueId: queue.id,
      numbers: [57],
      build: ({ state, window }) => {
        expect(state.entries.find((e) => e.number === 57)).toMatchObject({ status: 'queued' });
        expect(state.entries.length).toBeLessThan(60);
        // The front's edge is the last plain waiting PR it loaded, set-aside ones counted.
        const plain = whole.entries.filter(isPlainWaiting).sort((a, b) => b.priority - a.priority || a.position - b.position);
        expect(window?.frontEdge).toEqual({ priority: plain[front - 1].priority, position: plain[front - 1].position });
        return [];
      },
      wake: 'none',
    });
    expect(byNumber.outcome.changed).toBe(false);
    // A removal in the front moves places.
    await statusesAgree({ type: 'remove', entryId: entries[0].id, at: Date.now() });
    // Twelve removals in one request leave fewer than 20 places at or ahead of the front's edge:
    // the statuses could name a PR the window left out, so the whole state is reduced instead.
    const many = entries.slice(6, 18).map((e): MergeQueueEvent => ({ type: 'remove', entryId: e.id, at: Date.now() }));
    const fellBack = await statusesAgree(many);
    expect(fellBack.entries.length).toBeGreaterThanOrEqual(60);
    // Resume plans the first batch over the whole state, then a removal in the window.
    await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
    const planned = (await repository.plannerState(owner.organizationId, queue.id))!;
    const inBatch = planned.batches.find((b) => b.status === 'preparing')!;
    const last = await statusesAgree({ type: 'remove', entryId: inBatch.entryIds[0], at: Date.now() }, []);
    expect(last.entries.length).toBeLessThan(60);
  }, 120_000);

  it('the sweep selects the queues with something due, not the idle ones nor those due later', async () => {
    const [due, later, idle] = [await pausedQueue(0), await pausedQueue(0), await pausedQueue(0)].map((q) => q.queue.id);
    await prisma.mergeQueue.update({ where: { id: due }, data: { nextWakeAt: new Date(Date.now() - 1_000) } });
    await prisma.mergeQueue.update({ where: { id: later }, data: { nextWakeAt: new Date(Date.now() + 3_600_000) } });
    const { due: dueNow } = await outbox.sweepTargets();
    const mine = dueNow.filter((id) => [due, later, idle].includes(id));
    expect(mine).toEqual([due]);
    // A tick that finds nothing to do moves the queue's wake past it: the next sweep leaves it alone.
    await writer.apply({ organizationId: null, queueId: due, quietWhenUnchanged: true, build: () => [{ type: 'tick', at: Date.now() }], wake: 'none' });
    expect((await prisma.mergeQueue.findUniqueOrThrow({ where: { id: due } })).nextWakeAt).toBeNull();
    expect((await outbox.sweepTargets()).due).not.toContain(due);
  }, 60_000);
});
