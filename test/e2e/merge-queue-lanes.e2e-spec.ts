import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Job, Queue as BullQueue } from 'bullmq';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { MetricsService } from '@/common/metrics/metrics.service';
import { MergeQueuesJob, QueueName } from '@/common/queues/queue-names';
import { PathMatching } from '@/modules/merge-queues/changed-paths/path-matching';
import { PathsAsks } from '@/modules/merge-queues/changed-paths/paths-asks';
import { readQueueView, renderQueue } from '@/modules/merge-queues/engine/store/queue-view';
import { KEPT_PATHS_LIMITS, PATH_MATCH_LIMITS } from '@/modules/merge-queues/planner';
import { MergeQueuesProcessor } from '@/modules/merge-queues/merge-queues.processor';
import { MergeQueuesRepository } from '@/modules/merge-queues/merge-queues.repository';
import type { TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, commitPaths, createLocalCodeSource, git } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { MergeQueueClient, MqEntry } from '../support/merge-queue-client';
import { until } from '../support/processes';

const GROUPS = [
  { name: 'api', paths: ['services/api/'] },
  { name: 'web', paths: ['apps/web/**'] },
  { name: 'docs', paths: ['docs/', '*.md'] },
];
const EVERY_LANE = ['api', 'web', 'docs'];

/**
 * The slowest path groups the limits allow (issue 41): 16 groups of 50 patterns, 1,000
 * alternatives in all, each a star then up to 150 `?` in one segment, whose automaton grows with
 * every character of a long segment of a and b (each state a set of thousands of positions).
 */
const WORST_GROUPS = Array.from({ length: 16 }, (_, g) => ({
  name: `g${g}`,
  paths: Array.from({ length: 50 }, (_, p) => `**/*${(g * 50 + p) % 4 === 0 ? '{a,b}' : p % 2 ? 'a' : 'b'}${'?'.repeat(150 - (p % 10))}*/**`),
}));

/** A commit on `parent` adding `paths` (one blob for all; directories shared as `paths` share them). */
function commitMany(repo: string, parent: string, paths: readonly string[], message: string): string {
  const index = join(mkdtempSync(join(tmpdir(), 'mq-index-')), 'index');
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const run = (args: string[], input?: string) =>
    execFileSync('git', ['--git-dir', repo, ...args], { env, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();
  run(['read-tree', parent]);
  const blob = run(['hash-object', '-w', '--stdin'], 'x\n');
  run(['update-index', '--index-info'], paths.map((path) => `100644 ${blob}\t${path}`).join('\n') + '\n');
  return git(repo, 'commit-tree', run(['write-tree']), '-p', parent, '-m', message);
}

/** A segment of `length` characters a and b, from `seed` (the same on every run). */
function abSegment(seed: number, length: number): string {
  let x = seed;
  return Array.from({ length }, () => ((x = (x * 1103515245 + 12345) & 0x7fffffff) & 0x100 ? 'a' : 'b')).join('');
}

/**
 * Lanes (issue 22, part 4): a queue's path groups, and each entry's lanes from the paths its PR
 * changes as the provider lists them: `git diff` on a local repository, the compare API on GitHub
 * (the emulator, through Octokit). The queues are paused: this is about what an entry is, not what
 * the engine does with it. The worker runs for the job that asks the paths of entries queued before
 * the queue had path groups.
 */
describe('Merge queue lanes (path groups; local git and the GitHub emulator)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    // Its own database and queue prefix: its worker asks the paths of GitHub queues with this
    // emulator, and no other suite's worker (another emulator) takes its jobs.
    // The paths sweep runs when a test calls it (its job scheduler's first run is at worker start).
    suite = await githubQueueSuite('lanes', { config: (config) => ({ ...config, mergeQueues: { ...config.mergeQueues, pathsSweepIntervalMs: 3_600_000 } }) });
    ({ emulator, app, prisma, owner, mq } = suite);
  }, 60_000);

  afterAll(() => suite?.close());

  /** A bare repository whose main holds a small tree, `base` (a first commit) below it, and a paused local queue on main. */
  async function localQueue(settings: Record<string, unknown>) {
    const path = join(mkdtempSync(join(tmpdir(), 'mq-lanes-')), 'repo.git');
    execFileSync('git', ['init', '--bare', '-q', '-b', 'main', path]);
    const base = commitPaths(
      path,
      null,
      { 'README.md': 'hello\n', 'services/api/main.ts': 'api\n', 'apps/web/index.ts': 'web\n', 'docs/guide.md': 'guide\n', 'package.json': '{}\n' },
      'initial',
    );
    // main moved on in the web app after the PRs below branched from `base`.
    const main = commitPaths(path, base, { 'apps/web/index.ts': 'web 2\n' }, 'web moves on');
    git(path, 'update-ref', 'refs/heads/main', main);
    const source = await createLocalCodeSource(prisma, owner.organizationId, path);
    const queue = await mq.create(source.id, settings);
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    return { path, base, main, queueId: queue.id };
  }

  /** PATCH the queue's path groups; the answer is the queue. */
  const setGroups = (queueId: string, pathGroups: unknown) =>
    http().patch(`/merge-queues/${queueId}`).set(owner.auth).send({ data: { pathGroups } }).expect(200);
  const entryRow = (id: string) => prisma.mergeQueueEntry.findUniqueOrThrow({ where: { id }, select: { changedPaths: true, lanes: true } });
  /** Each entry's lanes by PR number, from its details (the spec's MergeQueueEntry carries none). */
  const lanesById = async (queueId: string) => new Map([...(await mq.detailsByNumber(queueId))].map(([n, d]) => [n, d.lanes]));
  /** Each entry's `pathsStatus` by PR number, from its details. */
  const pathsStatusById = async (queueId: string) => new Map([...(await mq.detailsByNumber(queueId))].map(([n, d]) => [n, d.pathsStatus]));
  const jobs = () => suite.worker.get<BullQueue>(getQueueToken(QueueName.MergeQueues), { strict: false });
  const isAskJob = (job: Job | undefined, queueId: string) => job?.name === MergeQueuesJob.AskPaths && (job.data as { queueId: string }).queueId === queueId;
  /** The queue's jobs asking changed paths that are not done (running, waiting, or delayed for a retry). */
  const askJobs = async (queueId: string) =>
    (await jobs().getJobs(['active', 'wait', 'waiting', 'prioritized', 'delayed'])).filter((j) => isAskJob(j, queueId));
  /**
   * PATCH the queue's path groups and lose the job that was to ask the paths (as if Redis lost it):
   * the BullMQ queue is paused meanwhile, so no worker takes it first. The PATCH answer, and how many jobs were lost.
   */
  async function setGroupsLosingTheJob(queueId: string, groups: unknown) {
    return beforeTheWorker(async () => {
      const patched = await setGroups(queueId, groups);
      const lost = await askJobs(queueId);
      for (const job of lost) await job.remove();
      return { patched, lost: lost.length, left: await mq.detailsByNumber(queueId) };
    });
  }
  /**
   * Runs `run` while no worker takes a merge-queue job (the BullMQ queue paused): what a request
   * left, read before the jobs it scheduled change it.
   */
  async function beforeTheWorker<T>(run: () => Promise<T>): Promise<T> {
    await jobs().pause();
    try {
      return await run();
    } finally {
      await jobs().resume();
    }
  }
  /**
   * Each entry's lanes in the planner state (what blame reads: `EntryState.lanes`), by PR number;
   * undefined: not known.
   */
  const plannerLanes = async (queueId: string) => {
    const state = await app.get(MergeQueuesRepository, { strict: false }).plannerState(owner.organizationId, queueId);
    return Object.fromEntries(state!.entries.map((e) => [e.number, e.lanes]));
  };
  /** A time `intervals` paths-sweep intervals (and a second) from now, as the sweep may be run at. */
  const later = (intervals: number) => Date.now() + intervals * suite.config.mergeQueues.pathsSweepIntervalMs + 1_000;

  it('local git: an entry is in the lanes its PR changes touch, from the merge base; outside every group or not known is every lane', async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: GROUPS });
    const prs: Record<number, string> = {
      // Only the api: what main gained in the web app since the PR branched is not the PR's.
      1: commitPaths(path, base, { 'services/api/main.ts': 'api 1\n' }, 'PR 1'),
      2: commitPaths(path, base, { 'services/api/routes/new.ts': 'x\n', 'apps/web/pages/new.tsx': 'y\n' }, 'PR 2'),
      // A root build file is in no group: every lane.
      3: commitPaths(path, base, { 'services/api/main.ts': 'api 3\n', 'package.json': '{"x":1}\n' }, 'PR 3'),
      // A move counts both paths: out of docs and into the api.
      4: commitPaths(path, base, { 'docs/guide.md': null, 'services/api/guide.md': 'guide\n' }, 'PR 4'),
      // A sibling directory sharing the group's prefix is not the group's.
      5: commitPaths(path, base, { 'services/api-gateway/main.ts': 'gw\n' }, 'PR 5'),
      // A head the repository does not hold: its paths are not known.
      6: 'f'.repeat(40),
    };
    const entries = new Map<number, MqEntry>();
    const atPost = new Map<number, string[] | undefined>();
    for (const [n, head] of Object.entries(prs)) {
      const entry = await mq.enqueue(queueId, Number(n), head);
      entries.set(Number(n), entry);
      atPost.set(Number(n), (await mq.details(queueId, entry.id)).lanes);
    }
    const expected = { 1: ['api'], 2: ['api', 'web'], 3: EVERY_LANE, 4: ['api', 'docs'], 5: EVERY_LANE, 6: EVERY_LANE };
    // The POST answers with the spec's entry (no lanes); its details right after it and the details of every entry now agree.
    for (const entry of entries.values()) expect(Object.keys(entry).filter((k) => k === 'lanes' || k === 'pathsStatus')).toEqual([]);
    expect(Object.fromEntries(atPost)).toEqual(expected);
    expect(Object.fromEntries(await lanesById(queueId))).toEqual(expected);
    expect(await entryRow(entries.get(1)!.id)).toEqual({ changedPaths: ['services/api/main.ts'], lanes: ['api'] });
    expect((await entryRow(entries.get(4)!.id)).changedPaths).toEqual(['docs/guide.md', 'services/api/guide.md']);
    expect(await entryRow(entries.get(6)!.id)).toEqual({ changedPaths: null, lanes: EVERY_LANE });
    // Why each is in its lanes: listed paths, or (#6) paths the repository could not list.
    const statuses = { 1: 'listed', 2: 'listed', 3: 'listed', 4: 'listed', 5: 'listed', 6: 'unlisted' };
    expect(Object.fromEntries(await pathsStatusById(queueId))).toEqual(statuses);
    // The chain (what `queue show` draws) has the groups and each waiting PR's lanes and where they come from.
    const chain = (await http().get(`/merge-queues/${queueId}/chain`).set(owner.auth).expect(200)).body.data;
    expect(chain.pathGroups).toEqual(GROUPS);
    const waiting = chain.waiting as { number: number; lanes: string[]; pathsStatus: string }[];
    expect(Object.fromEntries(waiting.map((e) => [e.number, e.lanes]))).toEqual(expected);
    expect(Object.fromEntries(waiting.map((e) => [e.number, e.pathsStatus]))).toEqual(statuses);
  });

  it("local git: a PR's lanes reach the planner state once its paths are known (with its enqueue or its new head, or from the worker); new groups drop them until matched again; unknown paths leave them absent", async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: GROUPS });
    const one = await mq.enqueue(queueId, 1, commitPaths(path, base, { 'services/api/main.ts': 'api 1\n' }, 'PR 1'));
    // A root build file is in no group: every lane, a fact about the PR (its paths are known).
    await mq.enqueue(queueId, 2, commitPaths(path, base, { 'apps/web/x.ts': 'x\n', 'package.json': '{"x":1}\n' }, 'PR 2'));
    // A head the repository does not hold: its paths are not known, and neither are its lanes.
    const three = await mq.enqueue(queueId, 3, 'f'.repeat(40));
    expect(await plannerLanes(queueId)).toEqual({ 1: ['api'], 2: EVERY_LANE, 3: undefined });
    // The views show every lane for #3 (for want of knowing better); the planner does not pretend to know.
    expect((await mq.details(queueId, three.id)).lanes).toEqual(EVERY_LANE);
    // The answer is an event of the entry's, written with its enqueue (one transaction).
    const events = (await mq.details(queueId, one.id)).events;
    expect(events.map((e) => e.type).sort()).toEqual(['enqueue', 'entryLanes']);
    expect(events.find((e) => e.type === 'entryLanes')?.detail).toMatchObject({ entryId: one.id, headSha: one.headSha, lanes: ['api'] });
    expect((await mq.details(queueId, three.id)).events.map((e) => e.type)).toEqual(['enqueue']);
    // A new head: the old head's lanes go, and the new head's come with it.
    const pushed = commitPaths(path, base, { 'docs/new.md': 'n\n' }, 'PR 1, pushed again');
    await http()
      .patch(`/merge-queues/${queueId}/entries/${one.id}`)
      .set(owner.auth)
      .send({ data: { headSha: pushed } })
      .expect(200);
    expect((await plannerLanes(queueId))[1]).toEqual(['docs']);
    // New groups: the PATCH drops every planner lane (matched under the old groups); the worker's answers bring them back.
    const merged = [{ name: 'app', paths: ['services/**', 'apps/**'] }, GROUPS[2]];
    const dropped = await beforeTheWorker(async () => {
      await setGroups(queueId, merged);
      return plannerLanes(queueId);
    });
    expect(dropped).toEqual({ 1: undefined, 2: undefined, 3: undefined });
    const back = await until('the worker matched the lanes again', async () => {
      const lanes = await plannerLanes(queueId);
      return lanes[1] && lanes[2] ? lanes : undefined;
    });
    expect(back).toEqual({ 1: ['docs'], 2: ['app', 'docs'], 3: undefined });
    // The rows the views read agree.
    expect(Object.fromEntries(await lanesById(queueId))).toEqual({ 1: ['docs'], 2: ['app', 'docs'], 3: ['app', 'docs'] });
  });

  it('changing the path groups works every live entry out again from its kept paths; a new head is asked again; no groups, no lanes', async () => {
    const { path, base, queueId } = await localQueue({});
    const apiHead = commitPaths(path, base, { 'services/api/main.ts': 'api\n2\n' }, 'PR 7');
    const seven = await mq.enqueue(queueId, 7, apiHead);
    expect(seven).not.toHaveProperty('lanes');
    expect(seven).not.toHaveProperty('pathsStatus');
    const noGroups = await mq.details(queueId, seven.id);
    expect(noGroups).not.toHaveProperty('lanes');
    expect(noGroups).not.toHaveProperty('pathsStatus');
    expect(await entryRow(seven.id)).toEqual({ changedPaths: null, lanes: null });
    // Groups added after PR 7 was queued: the PATCH leaves it in every lane (its paths were never
    // asked; the worker asks them afterwards, see the next case).
    const patched = await beforeTheWorker(async () => {
      await setGroups(queueId, GROUPS);
      return mq.details(queueId, seven.id);
    });
    expect(patched.lanes).toEqual(EVERY_LANE);
    const eight = await mq.enqueue(queueId, 8, commitPaths(path, base, { 'apps/web/a.ts': 'a\n', 'README.md': 'b\n' }, 'PR 8'));
    expect((await mq.details(queueId, eight.id)).lanes).toEqual(['web', 'docs']);
    // A new head: its paths are asked at once, and PR 7 is in the lanes of what it now changes.
    const moved = await http()
      .patch(`/merge-queues/${queueId}/entries/${seven.id}`)
      .set(owner.auth)
      .send({ data: { headSha: commitPaths(path, apiHead, { 'apps/web/x.ts': 'x\n' }, 'PR 7, second push') } })
      .expect(200);
    expect(moved.body.data).not.toHaveProperty('lanes');
    expect((await mq.details(queueId, seven.id)).lanes).toEqual(['api', 'web']);
    expect((await entryRow(seven.id)).changedPaths).toEqual(['apps/web/x.ts', 'services/api/main.ts']);
    // New groups: nothing is matched in the PATCH's transaction (issue 41): every live entry is in
    // every lane until the worker matches its kept paths again, without asking git.
    const merged = [{ name: 'app', paths: ['services/**', 'apps/**'] }, GROUPS[2]];
    // The repository is gone: a provider call would fail, so the lanes below come from the kept paths.
    execFileSync('mv', [path, `${path}.away`]);
    const repatched = await beforeTheWorker(async () => {
      await setGroups(queueId, merged);
      return mq.detailsByNumber(queueId);
    });
    expect([...repatched].map(([n, d]) => [n, d.lanes, d.pathsStatus])).toEqual([
      [7, ['app', 'docs'], 'pending'],
      [8, ['app', 'docs'], 'pending'],
    ]);
    const rematched = await until('the worker matched the kept paths again', async () => {
      const view = [...(await mq.detailsByNumber(queueId))];
      return view.every(([, d]) => d.pathsStatus === 'listed') ? Object.fromEntries(view.map(([n, d]) => [n, d.lanes])) : undefined;
    });
    expect(rematched).toEqual({ 7: ['app'], 8: ['app', 'docs'] });
    // A removed entry is final: new groups leave it with the lanes it had.
    await http().delete(`/merge-queues/${queueId}/entries/${eight.id}`).set(owner.auth).expect(200);
    await setGroups(queueId, GROUPS);
    await until('the worker matched PR 7 again', async () => (await mq.details(queueId, seven.id)).pathsStatus === 'listed');
    expect(Object.fromEntries(await lanesById(queueId))).toEqual({ 7: ['api', 'web'], 8: ['app', 'docs'] });
    const view = await mq.detailsByNumber(queueId);
    expect(view.get(7)?.pathsStatus).toBe('listed');
    expect(view.get(8)).not.toHaveProperty('pathsStatus');
    // No groups: no entry has lanes, final ones included.
    await setGroups(queueId, []);
    const after = await lanesById(queueId);
    expect(after.get(7)).toBeUndefined();
    expect(after.get(8)).toBeUndefined();
  });

  it('a batch under test shows the lanes of its PRs in the chain', async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: GROUPS, minBatch: 2, maxBatch: 2 });
    await mq.enqueue(queueId, 1, commitPaths(path, base, { 'services/api/x.ts': 'x\n' }, 'PR 1'));
    await mq.enqueue(queueId, 2, commitPaths(path, base, { 'docs/y.md': 'y\n' }, 'PR 2'));
    await http().post(`/merge-queues/${queueId}/resume`).set(owner.auth).expect(200);
    const batch = await until('a batch of both PRs', async () => {
      const chain = (await http().get(`/merge-queues/${queueId}/chain`).set(owner.auth).expect(200)).body.data;
      return (chain.batches as { prNumbers: number[]; lanes?: string[]; entries: { number: number; lanes?: string[]; pathsStatus?: string }[] }[]).find(
        (b) => b.prNumbers.length === 2,
      );
    });
    // In the groups' order, not the PRs'.
    expect(batch.lanes).toEqual(['api', 'docs']);
    // And each of its entries with its own lanes and where they come from.
    expect(batch.entries.map((e) => [e.number, e.lanes, e.pathsStatus])).toEqual([
      [1, ['api'], 'listed'],
      [2, ['docs'], 'listed'],
    ]);
  });

  it('path groups set on a queue that holds entries: the worker asks the paths of those queued before, and their lanes follow', async () => {
    const { path, base, queueId } = await localQueue({});
    const heads = {
      1: commitPaths(path, base, { 'services/api/a.ts': 'a\n' }, 'PR 1'),
      2: commitPaths(path, base, { 'apps/web/b.ts': 'b\n' }, 'PR 2'),
      3: commitPaths(path, base, { 'docs/c.md': 'c\n', 'services/api/c.ts': 'c\n' }, 'PR 3'),
    };
    for (const [n, head] of Object.entries(heads)) await mq.enqueue(queueId, Number(n), head);
    await setGroups(queueId, GROUPS);
    const settled = await until('the worker kept the paths of the entries queued before the groups', async () => {
      const lanes = Object.fromEntries(await lanesById(queueId));
      return [1, 2, 3].every((n) => lanes[n]?.length !== EVERY_LANE.length) ? lanes : undefined;
    });
    expect(settled).toEqual({ 1: ['api'], 2: ['web'], 3: ['api', 'docs'] });
    const rows = await prisma.mergeQueueEntry.findMany({ where: { queueId }, orderBy: { number: 'asc' }, select: { changedPaths: true } });
    expect(rows.map((r) => r.changedPaths)).toEqual([['services/api/a.ts'], ['apps/web/b.ts'], ['docs/c.md', 'services/api/c.ts']]);
  });

  it('the job that was to ask the paths is lost: once it is overdue the paths sweep asks them, and looks at no queue once none lacks paths', async () => {
    const { path, base, queueId } = await localQueue({});
    const without = await localQueue({});
    await mq.enqueue(queueId, 1, commitPaths(path, base, { 'services/api/a.ts': 'a\n' }, 'PR 1'));
    await mq.enqueue(queueId, 2, commitPaths(path, base, { 'apps/web/b.ts': 'b\n' }, 'PR 2'));
    await mq.enqueue(without.queueId, 1, commitPaths(without.path, without.base, { 'docs/c.md': 'c\n' }, 'PR 1'));
    // The PATCH's job is lost (as if Redis lost it): taken off the BullMQ queue before a worker runs it.
    const { left, lost } = await setGroupsLosingTheJob(queueId, GROUPS);
    expect([...left.values()].map((d) => [d.lanes, d.pathsStatus])).toEqual([
      [EVERY_LANE, 'pending'],
      [EVERY_LANE, 'pending'],
    ]);
    expect(lost).toBe(1);
    const processor = suite.worker.get(MergeQueuesProcessor);
    // The metric shows the two PRs in every lane for want of their paths (and no PR of the queue without groups).
    const pending = async () => {
      const line = (await app.get(MetricsService).scrape()).split('\n').find((l) => l.startsWith('dpa_merge_queue_entries_paths_pending '));
      return Number(line?.split(' ')[1]);
    };
    const before = await pending();
    expect(before).toBe(2);
    // The job is on its way as far as the sweep knows (scheduled a moment ago): it is left alone.
    expect((await processor.sweepPaths()).asked).not.toContain(queueId);
    expect([...(await lanesById(queueId)).values()]).toEqual([EVERY_LANE, EVERY_LANE]);
    // Two sweep intervals later it is overdue: the sweep asks.
    const overdue = later(2);
    const first = await processor.sweepPaths(overdue);
    expect(first.asked).toContain(queueId);
    // A queue without path groups asks nothing, whatever its entries keep.
    expect(first.asked).not.toContain(without.queueId);
    const settled = await until("the sweep's job asked the paths", async () => {
      const lanes = Object.fromEntries(await lanesById(queueId));
      return lanes[1]?.length === 1 && lanes[2]?.length === 1 ? lanes : undefined;
    });
    expect(settled).toEqual({ 1: ['api'], 2: ['web'] });
    expect([...(await pathsStatusById(queueId)).values()]).toEqual(['listed', 'listed']);
    expect(await pending()).toBe(before - 2);
    // The job that asked everything dropped the queue's claim (taken when the sweep scheduled it).
    await until('the claim dropped', async () => !(await suite.worker.get(PathsAsks).claimed()).has(queueId));
    expect((await processor.sweepPaths(overdue)).asked).not.toContain(queueId);
  });

  it('GitHub: a paths sweep job the provider fails is tried once, and the sweep leaves the queue alone for five intervals', async () => {
    const groups = [
      { name: 'api', paths: ['api-*'] },
      { name: 'web', paths: ['web-*'] },
    ];
    const { path, main, queue } = await suite.newQueue();
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    await mq.enqueue(queue.id, 1, commit(path, main, { 'api-1.ts': 'api 1\n' }, 'PR 1'));
    await setGroupsLosingTheJob(queue.id, groups);
    const processor = suite.worker.get(MergeQueuesProcessor);
    const failed: number[] = [];
    const onFailed = (job: Job | undefined) => {
      if (isAskJob(job, queue.id)) failed.push(job!.attemptsMade);
    };
    processor.worker.on('failed', onFailed);
    emulator.knobs.gitFailures = 1_000;
    try {
      expect((await processor.sweepPaths(later(2))).asked).toContain(queue.id);
      await until('the sweep job failed', async () => failed.length > 0 && (await askJobs(queue.id)).length === 0);
      // One attempt, not the three of a job scheduled by a request.
      expect(failed).toEqual([1]);
      const used = 1_000 - emulator.knobs.gitFailures;
      expect(used).toBeGreaterThan(0);
      // Tried once: nothing asked it again, and the sweep leaves the queue alone until five intervals passed.
      expect((await processor.sweepPaths(later(2))).asked).not.toContain(queue.id);
      expect((await processor.sweepPaths(later(4))).asked).not.toContain(queue.id);
      expect(1_000 - emulator.knobs.gitFailures).toBe(used);
      expect((await lanesById(queue.id)).get(1)).toEqual(['api', 'web']);
      emulator.knobs.gitFailures = 0;
      expect((await processor.sweepPaths(later(6))).asked).toContain(queue.id);
    } finally {
      emulator.knobs.gitFailures = 0;
      processor.worker.off('failed', onFailed);
    }
    const settled = await until('the next sweep job asked the paths', async () => {
      const lanes = (await lanesById(queue.id)).get(1);
      return lanes?.length === 1 ? lanes : undefined;
    });
    expect(settled).toEqual(['api']);
  });

  it('paths kept for an older head are never used: groups removed, the head moved, groups back: every lane until the worker asks the new head', async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: GROUPS });
    const entry = await mq.enqueue(queueId, 9, commitPaths(path, base, { 'services/api/a.ts': 'a\n' }, 'PR 9'));
    expect((await mq.details(queueId, entry.id)).lanes).toEqual(['api']);
    await setGroups(queueId, []);
    // Without groups a new head asks nothing: the row still keeps the old head's paths.
    const webHead = commitPaths(path, base, { 'apps/web/b.ts': 'b\n' }, 'PR 9, pushed again');
    await http()
      .patch(`/merge-queues/${queueId}/entries/${entry.id}`)
      .set(owner.auth)
      .send({ data: { headSha: webHead } })
      .expect(200);
    const back = await beforeTheWorker(async () => {
      await setGroups(queueId, GROUPS);
      return mq.details(queueId, entry.id);
    });
    expect(back.lanes).toEqual(EVERY_LANE);
    const settled = await until('the worker asked the new head', async () => {
      const lanes = (await lanesById(queueId)).get(9);
      return lanes?.length === 1 ? lanes : undefined;
    });
    expect(settled).toEqual(['web']);
    expect(await prisma.mergeQueueEntry.findUniqueOrThrow({ where: { id: entry.id }, select: { changedPaths: true, pathsHead: true } })).toEqual({
      changedPaths: ['apps/web/b.ts'],
      pathsHead: webHead,
    });
  });

  it('a new head for an entry that is gone is refused before any provider call', async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: GROUPS });
    const entry = await mq.enqueue(queueId, 10, commitPaths(path, base, { 'services/api/a.ts': 'a\n' }, 'PR 10'));
    await http().delete(`/merge-queues/${queueId}/entries/${entry.id}`).set(owner.auth).expect(200);
    // The repository is gone too: a provider call would fail; the entry's state answers first.
    execFileSync('rm', ['-rf', path]);
    const final = await http()
      .patch(`/merge-queues/${queueId}/entries/${entry.id}`)
      .set(owner.auth)
      .send({ data: { headSha: 'a'.repeat(40) } });
    expect(final.status).toBe(422);
    expect(final.body.code).toBe('dpa:MergeQueue:ENTRY_FINAL');
    const missing = await http()
      .patch(`/merge-queues/${queueId}/entries/01900000-0000-7000-8000-000000000000`)
      .set(owner.auth)
      .send({ data: { headSha: 'a'.repeat(40) } });
    expect(missing.status).toBe(404);
  });

  it('refuses path groups it cannot honour (400 for the shape, 422 for rules across fields) naming the field, and changes nothing', async () => {
    const { queueId } = await localQueue({ pathGroups: GROUPS });
    const cases: [unknown, RegExp][] = [
      [[{ name: 'API', paths: ['a/'] }], /pathGroups\.0\.name/],
      [[{ name: 'api', paths: [] }], /pathGroups\.0\.paths/],
      [
        [
          { name: 'api', paths: ['a/'] },
          { name: 'api', paths: ['b/'] },
        ],
        /pathGroups\.1\.name "api" is used twice/,
      ],
      [[{ name: 'api', paths: ['a/', '!a/b'] }], /pathGroups\.0\.paths\.1 must not be a negation/],
      [[{ name: 'api', paths: ['/etc/'] }], /pathGroups\.0\.paths\.0 must be relative/],
      [[{ name: 'api', paths: ['a/../../b'] }], /pathGroups\.0\.paths\.0 must not hold \. or \.\. segments/],
      [Array.from({ length: 17 }, (_, i) => ({ name: `g${i}`, paths: ['x'] })), /pathGroups/],
      [[{ name: 'api', paths: ['a'.repeat(201)] }], /pathGroups\.0\.paths/],
      [[{ name: 'api', paths: ['+(a*)'] }], /pathGroups\.0\.paths\.0 must not use extglobs/],
      [[{ name: 'api', paths: ['{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}'] }], /pathGroups\.0\.paths\.0 expands to more than 32 alternatives/],
      [[{ name: 'api', paths: ['a/', '**/**/**/**/**/x'] }], /pathGroups\.0\.paths\.1 must hold at most 4 \*\* segments/],
      [[{ name: 'api', paths: ['a/**/**/**/**/b/'] }], /pathGroups\.0\.paths\.0 must hold at most 4 \*\* segments \(a trailing \/ counts as one\)/],
      [
        Array.from({ length: 16 }, (_, g) => ({ name: `g${g}`, paths: Array.from({ length: 50 }, (_, p) => `${g}/${p}/{a,b}`) })),
        /pathGroups expand to 1600 alternatives \(braces included\), more than the 1000 a queue may hold/,
      ],
      ['services/', /pathGroups/],
      [null, /pathGroups/],
    ];
    for (const [pathGroups, named] of cases) {
      const res = await http().patch(`/merge-queues/${queueId}`).set(owner.auth).send({ data: { pathGroups } });
      expect([400, 422]).toContain(res.status);
      expect(res.body.requestId).toEqual(expect.any(String));
      expect(res.body.code).toMatch(/^dpa:(MergeQueue|Request|Validation):[A-Z_]+$/);
      expect([res.body.message, ...(res.body.details?.[0]?.items ?? [])].join('\n')).toMatch(named);
    }
    const chain = (await http().get(`/merge-queues/${queueId}/chain`).set(owner.auth).expect(200)).body.data;
    expect(chain.pathGroups).toEqual(GROUPS);
  });

  it('the worst allowed path groups and paths never stall the API: /health/live never waits a quarter of the match deadline while they are matched, and past the deadline the PR is in every lane with the reason', async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: WORST_GROUPS });
    // 3,000 paths (the most LOCAL_GIT lists) of 1,019 characters (under the 1,024 matched): three
    // shared directories and a file of 254 characters each, of a and b.
    const dirs = [1, 2, 3].map((i) => abSegment(i, 254)).join('/');
    const paths = Array.from({ length: 3_000 }, (_, i) => `${dirs}/${abSegment(100 + i, 250)}-${String(i).padStart(4, '0')}`);
    expect(Math.max(...paths.map((p) => p.length))).toBeLessThanOrEqual(PATH_MATCH_LIMITS.maxPathLength);
    const head = commitMany(path, base, paths, 'PR 1: the worst paths');
    // When the API matched (PathMatching.lanes, wrapped to note its start and end: it still runs).
    const matching = app.get(PathMatching);
    const spans: { from: number; to: number }[] = [];
    const lanes = matching.lanes.bind(matching);
    matching.lanes = async (...args) => {
      const span = { from: Date.now(), to: Infinity };
      spans.push(span);
      try {
        return await lanes(...args);
      } finally {
        span.to = Date.now();
      }
    };
    const lives: { at: number; ms: number }[] = [];
    let enqueued = false;
    const poll = (async () => {
      while (!enqueued) {
        const at = Date.now();
        await http().get('/health/live').expect(200);
        lives.push({ at, ms: Date.now() - at });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const started = Date.now();
    let entry: MqEntry;
    try {
      entry = await mq.enqueue(queueId, 1, head);
    } finally {
      enqueued = true;
      matching.lanes = lanes;
      await poll;
    }
    const tookMs = Date.now() - started;
    const [span] = spans;
    const during = lives.filter((l) => l.at >= span.from && l.at + l.ms <= span.to);
    const slowest = Math.max(...during.map((l) => l.ms));
    console.log(
      `worst allowed groups (${WORST_GROUPS.length} x ${WORST_GROUPS[0].paths.length} patterns, ${PATH_MATCH_LIMITS.maxQueueAlternatives} alternatives) and paths (${paths.length} of ${paths[0].length} characters): ` +
        `enqueue ${tookMs} ms, matching ${span.to - span.from} ms (deadline ${matching.deadlineMs} ms); /health/live answered ${during.length} times while matching, in at most ${slowest} ms`,
    );
    // The deadline ended the match: every lane, with the reason.
    expect((await mq.details(queueId, entry.id)).lanes).toEqual(WORST_GROUPS.map((g) => g.name));
    const chain = (await http().get(`/merge-queues/${queueId}/chain`).set(owner.auth).expect(200)).body.data;
    expect(chain.waiting[0].lanesReason).toBe(`matching the changed paths took longer than ${matching.deadlineMs} ms: in every lane`);
    expect(span.to - span.from).toBeGreaterThanOrEqual(matching.deadlineMs);
    // The API answered all along while matching ran: no stall. A loop held by the match would hold
    // a probe for the whole deadline (2 s); the bound is a quarter of it, which leaves room for two
    // Jest workers and other load on two cores (100 ms and 250 ms were each hit once there).
    expect(during.length).toBeGreaterThanOrEqual(5);
    expect(slowest).toBeLessThan(matching.deadlineMs / 4);
    // Kept: how many paths, not the paths (3,000 are more than an entry keeps).
    expect(await prisma.mergeQueueEntry.findUniqueOrThrow({ where: { id: entry.id }, select: { changedPaths: true, pathsCount: true } })).toEqual({
      changedPaths: null,
      pathsCount: 3_000,
    });
  }, 120_000);

  it('a path longer or deeper than the limits puts its PR in every lane with the reason, never a 500', async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: GROUPS });
    const deep = `services/api/${'d/'.repeat(PATH_MATCH_LIMITS.maxPathDepth)}x.ts`;
    const long = `services/api/${'l'.repeat(210)}/${'m'.repeat(210)}/${'n'.repeat(210)}/${'o'.repeat(210)}/${'p'.repeat(210)}.ts`;
    expect(long.length).toBeGreaterThan(PATH_MATCH_LIMITS.maxPathLength);
    const deepPr = await mq.enqueue(queueId, 1, commitPaths(path, base, { [deep]: 'x\n' }, 'PR 1: deep'));
    const longPr = await mq.enqueue(queueId, 2, commitPaths(path, base, { [long]: 'x\n', 'services/api/a.ts': 'a\n' }, 'PR 2: long'));
    const fine = await mq.enqueue(queueId, 3, commitPaths(path, base, { 'services/api/a.ts': 'a\n' }, 'PR 3'));
    const lanesOf = async (e: MqEntry) => (await mq.details(queueId, e.id)).lanes;
    expect([await lanesOf(deepPr), await lanesOf(longPr), await lanesOf(fine)]).toEqual([EVERY_LANE, EVERY_LANE, ['api']]);
    const reasons = Object.fromEntries(
      ((await http().get(`/merge-queues/${queueId}/chain`).set(owner.auth).expect(200)).body.data.waiting as { number: number; lanesReason?: string }[]).map(
        (e) => [e.number, e.lanesReason],
      ),
    );
    expect(reasons[1]).toMatch(/is 131 segments deep, more than the 128 matched: in every lane$/);
    expect(reasons[2]).toMatch(new RegExp(`is ${long.length} characters long, more than the 1024 matched: in every lane$`));
    expect(reasons[3]).toBeUndefined();
  });

  it('an entry keeps at most the documented number of paths (their count and lanes always), and views and writes that answer never read them', async () => {
    const { path, base, queueId } = await localQueue({ pathGroups: GROUPS });
    const over = Array.from({ length: KEPT_PATHS_LIMITS.maxPaths + 1 }, (_, i) => `services/api/f-${i}.ts`);
    const atLimit = over.slice(1);
    const big = await mq.enqueue(queueId, 1, commitMany(path, base, over, 'PR 1: one path more than kept'));
    const kept = await mq.enqueue(queueId, 2, commitMany(path, base, atLimit, 'PR 2: as many as kept'));
    const [bigDetails, keptDetails] = [await mq.details(queueId, big.id), await mq.details(queueId, kept.id)];
    expect([bigDetails.lanes, bigDetails.pathsStatus, keptDetails.lanes, keptDetails.pathsStatus]).toEqual([['api'], 'listed', ['api'], 'listed']);
    expect([bigDetails.pathsCount, keptDetails.pathsCount]).toEqual([KEPT_PATHS_LIMITS.maxPaths + 1, KEPT_PATHS_LIMITS.maxPaths]);
    const rows = await prisma.mergeQueueEntry.findMany({ where: { queueId }, orderBy: { number: 'asc' }, select: { changedPaths: true, pathsCount: true } });
    expect(rows.map((r) => [Array.isArray(r.changedPaths) ? r.changedPaths.length : null, r.pathsCount])).toEqual([
      [null, KEPT_PATHS_LIMITS.maxPaths + 1],
      [KEPT_PATHS_LIMITS.maxPaths, KEPT_PATHS_LIMITS.maxPaths],
    ]);
    // What views read (GET /merge-queues, GET /merge-queues/{id}) and what writes answer with: no paths.
    const view = await readQueueView(prisma, owner.organizationId, queueId);
    const listed = await renderQueue(prisma, view!.row);
    for (const entry of [...view!.entries, ...listed.entries]) expect(entry).not.toHaveProperty('changedPaths');
    const patched = await http()
      .patch(`/merge-queues/${queueId}/entries/${kept.id}`)
      .set(owner.auth)
      .send({ data: { priority: 1 } })
      .expect(200);
    expect(patched.body.data).not.toHaveProperty('pathsStatus');
    expect((await mq.details(queueId, kept.id)).pathsStatus).toBe('listed');
    // New groups: the entry that kept its paths is matched again from them; the other is listed again.
    await setGroups(queueId, [{ name: 'all', paths: ['**'] }]);
    const settled = await until('the worker matched both again', async () => {
      const entries = [...(await mq.detailsByNumber(queueId)).values()];
      return entries.every((e) => e.pathsStatus === 'listed') ? entries.map((e) => e.lanes) : undefined;
    });
    expect(settled).toEqual([['all'], ['all']]);
  });

  it('GitHub: the compare API gives the paths from the merge base; a PR of 300 files or more (a list GitHub cuts) is in every lane', async () => {
    const files = { 'api-main.ts': 'api\n', 'web-index.ts': 'web\n', 'README.md': 'hello\n' };
    const groups = [
      { name: 'api', paths: ['api-*'] },
      { name: 'web', paths: ['web-*'] },
      { name: 'docs', paths: ['*.md'] },
    ];
    const { path, main, queue } = await suite.newQueue({ files, settings: { pathGroups: groups } });
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    // main moves on in the docs after the PRs branched: not their change.
    git(path, 'update-ref', 'refs/heads/main', commit(path, main, { 'README.md': 'hello 2\n' }, 'docs move on'));
    const api = await mq.enqueue(queue.id, 1, commit(path, main, { 'api-main.ts': 'api 1\n', 'api-new.ts': 'n\n' }, 'PR 1'));
    expect((await mq.details(queue.id, api.id)).lanes).toEqual(['api']);
    expect((await entryRow(api.id)).changedPaths).toEqual(['api-main.ts', 'api-new.ts']);
    const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`web-page-${String(i).padStart(3, '0')}.ts`, `${i}\n`]));
    const justUnder = await mq.enqueue(queue.id, 2, commit(path, main, many(299), 'PR 2'));
    expect((await mq.details(queue.id, justUnder.id)).lanes).toEqual(['web']);
    expect((await entryRow(justUnder.id)).changedPaths).toHaveLength(299);
    const cut = await mq.enqueue(queue.id, 3, commit(path, main, many(300), 'PR 3'));
    expect((await mq.details(queue.id, cut.id)).lanes).toEqual(['api', 'web', 'docs']);
    expect((await entryRow(cut.id)).changedPaths).toBeNull();
    const statusOf = async (e: MqEntry) => (await mq.details(queue.id, e.id)).pathsStatus;
    expect([await statusOf(api), await statusOf(justUnder), await statusOf(cut)]).toEqual(['listed', 'listed', 'unlisted']);
    // The planner takes the lanes of the listed PRs; those of the PR whose list GitHub cut are not known.
    expect(await plannerLanes(queue.id)).toEqual({ 1: ['api'], 2: ['web'], 3: undefined });
    // Two commits of 299 and 300 files through the emulator's git: slow on a loaded machine.
  }, 90_000);

  it('GitHub: the worker asks the paths of entries queued before the groups, waiting out a rate limit without using up its attempts', async () => {
    const files = { 'api-main.ts': 'api\n', 'web-index.ts': 'web\n' };
    const groups = [
      { name: 'api', paths: ['api-*'] },
      { name: 'web', paths: ['web-*'] },
    ];
    const { path, main, queue } = await suite.newQueue({ files });
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    await mq.enqueue(queue.id, 1, commit(path, main, { 'api-main.ts': 'api 1\n' }, 'PR 1'));
    await mq.enqueue(queue.id, 2, commit(path, main, { 'web-index.ts': 'web 2\n' }, 'PR 2'));
    // Five answers of 429 with Retry-After: 1 (more than the job's 3 attempts): each puts the job back a second.
    Object.assign(emulator.knobs, { gitFailures: 5, gitFailureStatus: 429, gitFailureRetryAfter: '1' });
    try {
      await setGroups(queue.id, groups);
      const settled = await until(
        'the worker asked the paths through the rate limit',
        async () => {
          const lanes = Object.fromEntries(await lanesById(queue.id));
          return lanes[1]?.length === 1 && lanes[2]?.length === 1 ? lanes : undefined;
        },
        30_000,
      );
      expect(settled).toEqual({ 1: ['api'], 2: ['web'] });
      // And the planner state has them (the worker's answer went through the queue's writer).
      expect(await plannerLanes(queue.id)).toEqual({ 1: ['api'], 2: ['web'] });
      expect(emulator.knobs.gitFailures).toBe(0);
    } finally {
      Object.assign(emulator.knobs, { gitFailures: 0, gitFailureStatus: undefined, gitFailureRetryAfter: undefined });
    }
  }, 45_000);

  it('GitHub: a provider that fails while the paths are asked answers 502 and queues nothing', async () => {
    const { path, main, queue } = await suite.newQueue({ settings: { pathGroups: GROUPS } });
    await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    const head = commit(path, main, { 'x.txt': 'x\n' }, 'PR 1');
    emulator.knobs.gitFailures = 10;
    try {
      const res = await http()
        .post(`/merge-queues/${queue.id}/entries`)
        .set(owner.auth)
        .send({ data: { number: 1, headSha: head, url: 'https://example.test/pr/1' } });
      expect(res.status).toBe(502);
      expect(res.body.code).toMatch(/^dpa:/);
    } finally {
      emulator.knobs.gitFailures = 0;
    }
    expect((await mq.get(queue.id)).entries).toHaveLength(0);
    const entry = await mq.enqueue(queue.id, 1, head);
    expect((await mq.details(queue.id, entry.id)).lanes).toEqual(EVERY_LANE);
  });
});
