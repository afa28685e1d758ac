/**
 * `npm run bench:merge-queue-engine`: the merge-queue engine end to end on one machine: the built
 * API (dist/main.js) and ONE worker (dist/worker.js), LOCAL_GIT bare repositories whose PR
 * branches each add a file of their own (no conflicts), queues with two required checks, and the
 * benchmark acting as CI: it reports every required check `success` as soon as a batch is
 * `testing` with a candidate. It prints:
 *   1. land latency: from the response to the last required check's report to the base ref moving
 *      (p50, p99, max; target p50 < 300 ms, p99 < 1 s), on a queue that tests one PR at a time
 *      (maxBatch 1, maxParallel 1: every land is started by a check report), with where the time
 *      goes (from the event trail and BullMQ's event stream);
 *   2. PRs landed per minute for one queue of 200 PRs (default settings: adaptive batches,
 *      speculation), and for 20 queues of 20 PRs at once; each queue is filled while paused and
 *      timed from `resume` to the base ref holding its last PR; afterwards every PR must be on the
 *      first-parent history of main exactly once and every entry `merged`, or the bench throws;
 *   3. the planner at 100, 250, 500 and 1,000 waiting entries (a paused queue filled through the
 *      API): the enqueue request time (one event transaction), the pure reducer step in process,
 *      the state's JSON size and Postgres's pg_column_size("plannerState").
 * Each figure ends with a line on how it grows, computed from the numbers measured.
 *
 * How the bench observes: the base ref is read from the bare repository's loose ref file (packed-
 * refs as fallback) every millisecond or two by a worker thread, which stamps each move; CI learns
 * of candidates by polling the MergeQueueBatch rows (one indexed query every BENCH_CI_POLL_MS), as a
 * webhook would tell it, rather than GET /merge-queues/{id} in a tight loop, which would take the
 * cores the worker needs; the reports themselves go through POST .../checks like any CI's.
 *
 *   4. the fleet (issue 22): 500 queues, 5 busy (20 PRs each) and 495 idle, TWO worker processes:
 *      land latency, the sweep's time per pass (BullMQ's event stream, sweep every
 *      BENCH_SWEEP_INTERVAL_MS), Postgres WAL bytes per landed PR and per event
 *      (pg_current_wal_lsn() differences: server-wide, so other databases' writes count too).
 * The planner phase also prints the WAL bytes of one enqueue event (median of per-request
 * pg_current_wal_lsn() differences). The reducer step is the build's own: its
 * dist/modules/merge-queues/planner, loaded in process.
 *
 * BENCH_COMPARE_DIST=<root of another checkout of this repository, built there with `npm run build`>
 * runs the phases for both builds in one run, under the same load, and prints them side by side.
 * Each build's API and worker(s) start from its own root (dist/main.js, dist/worker.js, cwd = that
 * root), on a fresh database of its own on the same Postgres server (BENCH_DATABASE, and
 * BENCH_DATABASE with `_compare` appended, each migrated with its own checkout's prisma/migrations)
 * and on the same Redis under a queue prefix of its own; the compare build's API listens on
 * BENCH_PORT + 1. Both builds are up for the whole run. The planner phase alternates them request
 * by request (this, other, other, this, ...); the landing phases and the fleet, each one continuous
 * run, go once per build back to back, the build that goes first alternating from one phase to the
 * next. A build's processes stop after its fleet run, so that its sweep over the fleet's queues does
 * not run beside the other build's fleet. Each table is then printed as one row per figure
 * (figure | this build <rev> | compare build <rev> | this / compare), <rev> being the checkout's
 * `git rev-parse --short HEAD` (with +changes when its tracked files differ from HEAD), followed by
 * each build's lines on how its figures grow. Without BENCH_COMPARE_DIST, this build alone.
 *
 * Environment: BENCH_PHASES (latency,single,parallel,planner,fleet; BENCH_LATENCY_ONLY=1 is
 * BENCH_PHASES=latency), BENCH_LATENCY_PRS (100), BENCH_QUEUE_PRS (200), BENCH_PARALLEL_QUEUES (20),
 * BENCH_PARALLEL_PRS (20), BENCH_PLANNER_SIZES (100,250,500,1000), BENCH_PLANNER_SIDE_ROUNDS (60:
 * after the fill, enqueue requests alternate between a queue at the smallest size and the filled
 * one, each removed again, so the two p50s are measured side by side under the same load; the phase
 * runs ANALYZE every 100 enqueues, as autovacuum would: the test server has it off),
 * BENCH_PLANNER_STATUSES=1 (the planner phase's queues post commit statuses, as queues on GitHub
 * do), BENCH_PLANNER_PATH_GROUPS=1 (they have path groups, so every enqueue asks git for the PR's
 * changed paths, one `git diff` before the event, and keeps its lanes), BENCH_FLEET_QUEUES (500),
 * BENCH_FLEET_BUSY (5), BENCH_FLEET_PRS (20), BENCH_SWEEP_INTERVAL_MS (2000), BENCH_CI_POLL_MS (5),
 * BENCH_PHASE_TIMEOUT_S (240), BENCH_PORT (3921), BENCH_QUEUE_PREFIX (random; the compare build's
 * has -compare appended), BENCH_DATABASE (used when DATABASE_URL is unset: dropped and re-created),
 * DATABASE_URL (this build's database, kept), REDIS_URL, BENCH_COMPARE_DIST (above).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PrismaPg } from '@prisma/adapter-pg';
import { QueueEvents, Queue as BullQueue } from 'bullmq';
import { Pool } from 'pg';
import { migrate } from '@/common/prisma/migration-runner';
import { QueueName } from '@/common/queues/queue-names';
import { PrismaClient } from '@/generated/prisma/client';
import { createBenchOwnerKey } from '../support';
import type { MergeQueueEvent, MergeQueueState, reduceMergeQueue } from '@/modules/merge-queues/planner';
import { buildIfStale } from '@tools/workspace/build';
import { ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';
import { productionEnv, waitForOk } from '../http-drive';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const LATENCY_PRS = num('BENCH_LATENCY_PRS', 100);
const QUEUE_PRS = num('BENCH_QUEUE_PRS', 200);
const PARALLEL_QUEUES = num('BENCH_PARALLEL_QUEUES', 20);
const PARALLEL_PRS = num('BENCH_PARALLEL_PRS', 20);
const PLANNER_SIZES = (process.env.BENCH_PLANNER_SIZES ?? '100,250,500,1000')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const CI_POLL_MS = num('BENCH_CI_POLL_MS', 5);
const PHASE_TIMEOUT_MS = num('BENCH_PHASE_TIMEOUT_S', 240) * 1000;
const PORT = num('BENCH_PORT', 3921);
const DATABASE = process.env.BENCH_DATABASE ?? 'delivery_platform_bench_merge_queue_engine';
const COMPARE_ROOT = process.env.BENCH_COMPARE_DIST ? resolve(process.env.BENCH_COMPARE_DIST) : undefined;
const REQUIRED_CHECKS = ['build', 'test'];
// BENCH_LATENCY_ONLY=1 is BENCH_PHASES=latency.
const PHASES = new Set((process.env.BENCH_LATENCY_ONLY === '1' ? 'latency' : (process.env.BENCH_PHASES ?? 'latency,single,parallel,planner,fleet')).split(','));
const FLEET_QUEUES = num('BENCH_FLEET_QUEUES', 500);
const FLEET_BUSY = num('BENCH_FLEET_BUSY', 5);
const FLEET_PRS = num('BENCH_FLEET_PRS', 20);
const SWEEP_INTERVAL_MS = num('BENCH_SWEEP_INTERVAL_MS', 2_000);
/** Requests measured around each planner size (the ones just before it is reached). */
const ENQUEUE_WINDOW = 20;
const SIDE_ROUNDS = num('BENCH_PLANNER_SIDE_ROUNDS', 60);
/**
 * BENCH_PLANNER_STATUSES=1: the planner phase's queues post commit statuses, as queues on GitHub do
 * (their code source is made a GitHub one before their first event; paused, they never reach
 * GitHub, and the worker's posts of the statuses each event decides fail and are dropped).
 */
const PLANNER_STATUSES = process.env.BENCH_PLANNER_STATUSES === '1';
/** BENCH_PLANNER_PATH_GROUPS=1: the planner phase's queues have two lanes (PRs with an even and an odd number). */
const PLANNER_SETTINGS: Record<string, unknown> =
  process.env.BENCH_PLANNER_PATH_GROUPS === '1'
    ? {
        pathGroups: [
          { name: 'even', paths: ['pr-*[02468].txt'] },
          { name: 'odd', paths: ['pr-*[13579].txt'] },
        ],
      }
    : {};
/** Reducer repetitions per planner size and event kind. */
const REDUCER_REPS = 30;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out = (line = '') => process.stdout.write(`${line}\n`);

// ---------------------------------------------------------------------------------------------
// Figures

function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
const median = (values: number[]) => quantile(values, 0.5);
const ms = (v: number) => (Number.isFinite(v) ? (v >= 100 ? v.toFixed(0) : v.toFixed(1)) : '–');
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** "grows like n^k" from the first and last point, with a word for k. */
function growth(sizes: number[], values: number[]): string {
  const [n0, n1, v0, v1] = [sizes[0], sizes[sizes.length - 1], values[0], values[values.length - 1]];
  if (!(v0 > 0 && v1 > 0) || n1 === n0) return 'not measurable';
  const k = Math.log(v1 / v0) / Math.log(n1 / n0);
  const word = k < 0.25 ? 'about flat' : k < 0.8 ? 'sub-linear' : k < 1.25 ? 'about linear' : k < 1.75 ? 'super-linear' : 'about quadratic or worse';
  return `${word}: x${(v1 / v0).toFixed(1)} for x${(n1 / n0).toFixed(1)} entries (~n^${k.toFixed(2)})`;
}

// ---------------------------------------------------------------------------------------------
// Repositories

interface Repo {
  path: string;
  main: string;
  /** heads[n - 1] is PR n's head. */
  heads: string[];
}

/** A bare repository: main with README.md (its name: every repository's commits differ), and `prs` PR commits on it, PR n adding pr-n.txt (one git fast-import). */
function createRepo(dir: string, name: string, prs: number): Repo {
  const path = join(dir, `${name}.git`);
  execFileSync('git', ['init', '--bare', '-q', '-b', 'main', path]);
  const who = 'Bench <bench@example.invalid> 1700000000 +0000';
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const parts = [`commit refs/heads/main\nmark :1\ncommitter ${who}\n${data('initial')}M 100644 inline README.md\n${data(`${name}\n`)}\n`];
  for (let n = 1; n <= prs; n++) {
    parts.push(
      `commit refs/heads/pr/${n}\nmark :${n + 1}\ncommitter ${who}\n${data(`PR ${n}`)}from :1\nM 100644 inline pr-${n}.txt\n${data(`change ${n}\n`)}\n`,
    );
  }
  const marks = join(dir, `${name}.marks`);
  execFileSync('git', ['--git-dir', path, 'fast-import', '--quiet', `--export-marks=${marks}`], { input: parts.join('') });
  const byMark = new Map(
    readFileSync(marks, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string]),
  );
  return { path, main: byMark.get(':1') as string, heads: Array.from({ length: prs }, (_, i) => byMark.get(`:${i + 2}`) as string) };
}

/** The PR numbers merged on main's first-parent line, oldest first. */
function firstParentMerges(repo: string): number[] {
  const log = execFileSync('git', ['--git-dir', repo, 'log', '--first-parent', '--format=%s', 'main'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return log
    .split('\n')
    .filter((s) => s.startsWith('Merge #'))
    .map((s) => Number(s.slice('Merge #'.length).split(' ')[0]))
    .reverse();
}

// ---------------------------------------------------------------------------------------------
// The base-ref watcher: a worker thread reads each repository's refs/heads/main every ~1 ms and
// stamps every change, so a busy main thread does not delay the observation.

const WATCHER = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const repos = new Map();
function read(path) {
  try { return fs.readFileSync(path + '/refs/heads/main', 'utf8').trim(); } catch {}
  try {
    const line = fs.readFileSync(path + '/packed-refs', 'utf8').split('\\n').find((l) => l.endsWith(' refs/heads/main'));
    return line ? line.split(' ')[0] : null;
  } catch { return null; }
}
parentPort.on('message', (m) => {
  if (m.watch) repos.set(m.watch, read(m.watch));
  if (m.unwatch) repos.delete(m.unwatch);
  if (m.stop) process.exit(0);
});
function loop() {
  for (const [path, last] of repos) {
    const sha = read(path);
    if (sha && sha !== last) { repos.set(path, sha); parentPort.postMessage({ repo: path, sha, at: Date.now() }); }
  }
  setTimeout(loop, 1);
}
loop();
`;

interface Move {
  sha: string;
  at: number;
}

class BaseWatcher {
  private readonly thread = new Worker(WATCHER, { eval: true });
  readonly moves = new Map<string, Move[]>();

  constructor() {
    this.thread.on('message', (m: { repo: string; sha: string; at: number }) => this.moves.get(m.repo)?.push({ sha: m.sha, at: m.at }));
  }

  watch(repo: string): void {
    this.moves.set(repo, []);
    this.thread.postMessage({ watch: repo });
  }

  unwatch(repo: string): void {
    this.thread.postMessage({ unwatch: repo });
  }

  async stop(): Promise<void> {
    await this.thread.terminate();
  }
}

// ---------------------------------------------------------------------------------------------
// The API, and the benchmark's CI

class Api {
  requests = 0;

  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async call<T>(method: string, path: string, data?: unknown): Promise<T> {
    this.requests++;
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, ...(data !== undefined && { 'content-type': 'application/json' }) },
      body: data === undefined ? undefined : JSON.stringify({ data }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 400)}`);
    return (JSON.parse(text) as { data: T }).data;
  }
}

interface Report {
  queueId: string;
  batchId: string;
  /** When the last required check's POST was sent, and when its response arrived (t0). */
  lastSent: number;
  t0: number;
  postMs: number[];
}

/** Answers every required check `success` as soon as a batch of a watched queue is `testing` with a candidate. */
const reportKey = (queueId: string, sha: string) => `${queueId} ${sha}`;

class Ci {
  private readonly queues = new Set<string>();
  private readonly seen = new Set<string>();
  private stopped = false;
  private loop?: Promise<void>;
  error?: Error;
  /** By queue id and candidate sha (`reportKey`). */
  readonly reports = new Map<string, Report>();

  constructor(
    private readonly pool: Pool,
    private readonly api: Api,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        if (this.queues.size > 0) {
          const { rows } = await this.pool.query<{ id: string; queueId: string; headSha: string }>(
            `SELECT "id", "queueId", "headSha" FROM "MergeQueueBatch" WHERE "queueId" = ANY($1) AND "status" = 'testing' AND "headSha" IS NOT NULL`,
            [[...this.queues]],
          );
          for (const row of rows) {
            if (this.seen.has(row.id)) continue;
            this.seen.add(row.id);
            void this.report(row.queueId, row.id, row.headSha).catch((error: Error) => (this.error ??= error));
          }
        }
        await sleep(CI_POLL_MS);
      }
    })();
  }

  watch(queueId: string): void {
    this.queues.add(queueId);
  }

  unwatch(queueId: string): void {
    this.queues.delete(queueId);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async report(queueId: string, batchId: string, headSha: string): Promise<void> {
    const postMs: number[] = [];
    let lastSent = 0;
    for (const name of REQUIRED_CHECKS) {
      lastSent = Date.now();
      await this.api.call('POST', `/merge-queues/${queueId}/batches/${batchId}/checks`, {
        name,
        state: 'success',
        sha: headSha,
        url: `https://ci.example.invalid/${batchId}/${name}`,
      });
      postMs.push(Date.now() - lastSent);
    }
    this.reports.set(reportKey(queueId, headSha), { queueId, batchId, lastSent, t0: Date.now(), postMs });
  }
}

/** BullMQ's event stream of the merge-queues queue: when executors were added, started and finished, and kicks ignored. */
class ExecutorEvents {
  private readonly events: QueueEvents;
  private readonly addedAt = new Map<string, number>();
  pickups: number[] = [];
  runs = 0;
  ignoredKicks = 0;
  added = 0;
  /** Sweep jobs (the job scheduler's: "repeat:sweep:<ms>"): active -> completed, ms. */
  sweeps: number[] = [];
  private readonly sweepActiveAt = new Map<string, number>();

  constructor(connection: { url: string }, prefix: string) {
    this.events = new QueueEvents(QueueName.MergeQueues, { connection, prefix, autorun: true });
    // Stream ids are "<milliseconds>-<sequence>", stamped by Redis when the event happened.
    const at = (id: string) => Number(id.split('-')[0]);
    const executor = (jobId: string) => jobId.startsWith('execute-');
    const sweep = (jobId: string) => jobId.startsWith('repeat:sweep:');
    this.events.on('active', ({ jobId }, id) => void (sweep(jobId) && this.sweepActiveAt.set(jobId, at(id))));
    this.events.on('completed', ({ jobId }, id) => {
      const started = this.sweepActiveAt.get(jobId);
      if (started === undefined) return;
      this.sweepActiveAt.delete(jobId);
      this.sweeps.push(at(id) - started);
    });
    this.events.on('added', ({ jobId }, id) => {
      if (!executor(jobId)) return;
      this.added++;
      this.addedAt.set(jobId, at(id));
    });
    this.events.on('active', ({ jobId }, id) => {
      if (!executor(jobId)) return;
      const added = this.addedAt.get(jobId);
      // A delayed kick (retry after a failure) becomes active later on purpose: only count immediate ones.
      if (added !== undefined) this.pickups.push(at(id) - added);
      this.addedAt.delete(jobId);
    });
    this.events.on('delayed', ({ jobId }) => {
      if (executor(jobId)) this.addedAt.delete(jobId);
    });
    this.events.on('completed', ({ jobId }) => {
      if (executor(jobId)) this.runs++;
    });
    this.events.on('duplicated', ({ jobId }) => {
      if (executor(jobId)) this.ignoredKicks++;
    });
  }

  async ready(): Promise<void> {
    await this.events.waitUntilReady();
  }

  reset(): void {
    this.sweeps = [];
    this.pickups = [];
    this.runs = 0;
    this.ignoredKicks = 0;
    this.added = 0;
  }

  close(): Promise<void> {
    return this.events.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The landing phases

interface QueueUnderTest {
  id: string;
  repo: Repo;
  prs: number;
}

interface Land {
  queueId: string;
  sha: string;
  movedAt: number;
  /** The base moved before this one (the previous land, or the phase's start). */
  previousAt: number;
  report?: Report;
  prs: number;
}

/**
 * Where a land's time went, from the event trail. An event row's createdAt is stamped by the
 * process when it writes the row, inside its transaction: after the row lock, the state load, the
 * reduce and the state write, just before the commit.
 */
interface Breakdown {
  /** last check POST sent -> its event row written (HTTP, auth, rate limit, BEGIN, lock, load, reduce, write) */
  sentToWritten: number[];
  /** the check's event row written -> its POST answered, t0 (commit, executor kick, the batch read, the response) */
  writtenToResponse: number[];
  /** the land's issuing event written -> operationStarted written (commit, kick/pickup, waiting behind other operations, then the markRunning transaction up to its row) */
  issuedToStarted: number[];
  /** operationStarted written -> the base ref moved (its commit, then `git update-ref`) */
  startedToMoved: number[];
  /** the base ref moved -> the land's outcome event written (the delivering transaction) */
  movedToRecorded: number[];
  /** lands whose executor was busy with another operation (or performed others first) when the land was issued */
  waitedBehind: number;
  /** kinds of the operations lands waited behind (in flight at the issue, or performed before the land) */
  waitedKinds: Map<string, number>;
  /** events (one transaction each) and operations per land */
  eventsPerLand: number;
  operationsPerLand: number;
}
interface PhaseResult {
  name: string;
  queues: number;
  prs: number;
  seconds: number;
  lands: Land[];
  breakdown: Breakdown;
  pickups: number[];
  executorRuns: number;
  ignoredKicks: number;
  executorKicks: number;
  load: number;
}

/** A checkout whose dist/ the bench runs. */
interface Build {
  role: 'this build' | 'compare build';
  root: string;
  /** `git rev-parse --short HEAD` of the checkout, with +changes when its tracked files differ from HEAD. */
  rev: string;
}
const labelOf = (build: Build) => `${build.role} ${build.rev}`;

/** One build under test: its API and workers, its database, its queue prefix, its repositories, its CI. */
interface Bench {
  build: Build;
  /** Starts the lines a phase prints as it goes: '' for one build, its label when two are compared. */
  tag: string;
  api: Api;
  pool: Pool;
  prisma: PrismaClient;
  organizationId: string;
  ci: Ci;
  watcher: BaseWatcher;
  executor: ExecutorEvents;
  dir: string;
  /** The build's own reducer, from its dist/. */
  reduce: typeof reduceMergeQueue;
  /** The environment its API and workers start with, and those processes. */
  env: NodeJS.ProcessEnv;
  processes: ChildProcess[];
  results: { landing: PhaseResult[]; planner?: PlannerResult; fleet?: FleetResult };
}

async function createQueue(bench: Bench, name: string, prs: number, settings: Record<string, unknown>, postsStatuses = false): Promise<QueueUnderTest> {
  const repo = createRepo(bench.dir, name, prs);
  const source = await bench.prisma.codeSource.create({
    data: { organizationId: bench.organizationId, provider: 'LOCAL_GIT', foreignId: repo.path, nameWithOwner: repo.path, url: `file://${repo.path}` },
  });
  const queue = await bench.api.call<{ id: string }>('POST', '/merge-queues', {
    codeSourceId: source.id,
    baseRef: 'main',
    requiredChecks: REQUIRED_CHECKS,
    checkTimeoutSeconds: 3600,
    ...settings,
  });
  if (postsStatuses) await bench.prisma.codeSource.update({ where: { id: source.id }, data: { provider: 'GITHUB' } });
  return { id: queue.id, repo, prs };
}

/** Enqueues PR n. */
async function enqueue(bench: Bench, queue: QueueUnderTest, n: number): Promise<void> {
  await bench.api.call('POST', `/merge-queues/${queue.id}/entries`, {
    number: n,
    headSha: queue.repo.heads[n - 1],
    url: `https://example.invalid/pr/${n}`,
    title: `PR ${n}`,
  });
}

async function enqueueAll(bench: Bench, queue: QueueUnderTest): Promise<void> {
  for (let n = 1; n <= queue.prs; n++) await enqueue(bench, queue, n);
}

/** Fills the queues while paused, resumes them together and lets the CI answer until every PR merged. */
async function runLandingPhase(bench: Bench, name: string, queues: QueueUnderTest[]): Promise<PhaseResult> {
  const { api, pool, ci, watcher, executor } = bench;
  for (const q of queues) await api.call('POST', `/merge-queues/${q.id}/pause`);
  // Fill a few queues at a time: enqueueing is not what this phase measures.
  for (let i = 0; i < queues.length; i += 4) await Promise.all(queues.slice(i, i + 4).map((q) => enqueueAll(bench, q)));
  for (const q of queues) {
    watcher.watch(q.repo.path);
    ci.watch(q.id);
  }
  await sleep(50);
  executor.reset();
  const startedAt = Date.now();
  await Promise.all(queues.map((q) => api.call('POST', `/merge-queues/${q.id}/resume`)));
  const total = queues.reduce((s, q) => s + q.prs, 0);
  const ids = queues.map((q) => q.id);
  let lastProgress = Date.now();
  for (;;) {
    if (ci.error) throw ci.error;
    const { rows } = await pool.query<{ merged: string; other: string }>(
      `SELECT count(*) FILTER (WHERE "status" = 'merged') AS merged, count(*) FILTER (WHERE "status" NOT IN ('merged', 'queued', 'testing', 'merging')) AS other FROM "MergeQueueEntry" WHERE "queueId" = ANY($1)`,
      [ids],
    );
    const merged = Number(rows[0].merged);
    if (Number(rows[0].other) > 0) throw new Error(`${name}: ${rows[0].other} entries ended neither merged nor live (blocked, failed or removed)`);
    if (merged === total) break;
    if (Date.now() - startedAt > PHASE_TIMEOUT_MS) throw new Error(`${name}: only ${merged} of ${total} PRs merged after ${PHASE_TIMEOUT_MS / 1000} s`);
    if (Date.now() - lastProgress > 5_000) {
      lastProgress = Date.now();
      out(`  ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${merged} / ${total} merged`);
    }
    await sleep(20);
  }
  await sleep(30); // the watcher stamps the last move within a couple of milliseconds
  for (const q of queues) {
    ci.unwatch(q.id);
    watcher.unwatch(q.repo.path);
  }
  const load = loadavg()[0];
  const result = {
    pickups: executor.pickups,
    executorRuns: executor.runs,
    ignoredKicks: executor.ignoredKicks,
    executorKicks: executor.added,
  };

  // Every PR on main's first-parent line exactly once, every entry merged, nothing live.
  const lands: Land[] = [];
  let endAt = startedAt;
  for (const q of queues) {
    const merges = firstParentMerges(q.repo.path);
    const counts = new Map<number, number>();
    for (const n of merges) counts.set(n, (counts.get(n) ?? 0) + 1);
    const missing = Array.from({ length: q.prs }, (_, i) => i + 1).filter((n) => counts.get(n) !== 1);
    if (missing.length > 0 || merges.length !== q.prs)
      throw new Error(
        `${name}: main of ${q.repo.path} does not hold every PR exactly once (${merges.length} merges; wrong: #${missing.slice(0, 10).join(', #')})`,
      );
    const view = await api.call<{ status: string; entries: { status: string }[]; batches: { status: string }[] }>('GET', `/merge-queues/${q.id}`);
    const live = view.entries.filter((e) => e.status !== 'merged');
    if (live.length > 0 || view.batches.some((b) => !['landed', 'withdrawn'].includes(b.status)))
      throw new Error(`${name}: queue ${q.id} still shows live entries or batches`);
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "MergeQueueEntry" WHERE "queueId" = $1 AND "status" = 'merged'`, [q.id]);
    if (Number(rows[0].n) !== q.prs) throw new Error(`${name}: queue ${q.id} has ${rows[0].n} merged entries, expected ${q.prs}`);
    const head = execFileSync('git', ['--git-dir', q.repo.path, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    const moves = watcher.moves.get(q.repo.path) ?? [];
    if (moves.length === 0 || moves[moves.length - 1].sha !== head) throw new Error(`${name}: the watcher did not see main of ${q.repo.path} reach ${head}`);
    const { rows: landed } = await pool.query<{ headSha: string; prs: number }>(
      `SELECT "headSha", cardinality("prNumbers") AS prs FROM "MergeQueueBatch" WHERE "queueId" = $1 AND "status" = 'landed'`,
      [q.id],
    );
    const prsOf = new Map(landed.map((b) => [b.headSha, b.prs]));
    let previousAt = startedAt;
    for (const move of moves) {
      lands.push({
        queueId: q.id,
        sha: move.sha,
        movedAt: move.at,
        previousAt,
        report: ci.reports.get(reportKey(q.id, move.sha)),
        prs: prsOf.get(move.sha) ?? 0,
      });
      previousAt = move.at;
    }
    endAt = Math.max(endAt, moves[moves.length - 1].at);
  }
  const unmatched = lands.filter((l) => !l.report).length;
  if (unmatched > 0) throw new Error(`${name}: ${unmatched} base moves are not a candidate the CI reported on`);
  return { name, queues: queues.length, prs: total, seconds: (endAt - startedAt) / 1000, lands, breakdown: await breakdown(pool, ids, lands), ...result, load };
}

async function breakdown(pool: Pool, queueIds: string[], lands: Land[]): Promise<Breakdown> {
  const { rows } = await pool.query<{
    queueId: string;
    type: string;
    detail: Record<string, unknown>;
    operations: { id: string; kind: string; batchId: string }[];
    at: Date;
  }>(
    `SELECT "queueId", "type", "detail", "operations", "createdAt" AS at FROM "MergeQueueEvent" WHERE "queueId" = ANY($1) ORDER BY "queueId", "revision", "createdAt"`,
    [queueIds],
  );
  const { rows: batches } = await pool.query<{ id: string; headSha: string }>(
    `SELECT "id", "headSha" FROM "MergeQueueBatch" WHERE "queueId" = ANY($1) AND "status" = 'landed'`,
    [queueIds],
  );
  const { rows: opCount } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "MergeQueueOperation" WHERE "queueId" = ANY($1)`, [queueIds]);
  const shaOf = new Map(batches.map((b) => [b.id, b.headSha]));
  const result: Breakdown = {
    sentToWritten: [],
    writtenToResponse: [],
    issuedToStarted: [],
    startedToMoved: [],
    movedToRecorded: [],
    waitedBehind: 0,
    waitedKinds: new Map(),
    eventsPerLand: rows.length / lands.length,
    operationsPerLand: Number(opCount[0].n) / lands.length,
  };
  const byQueue = new Map<string, typeof rows>();
  for (const row of rows) byQueue.set(row.queueId, [...(byQueue.get(row.queueId) ?? []), row]);
  const landOf = new Map(lands.map((l) => [reportKey(l.queueId, l.sha), l]));
  const OUTCOMES = ['operationSucceeded', 'operationFailed', 'operationUnknown'];
  for (const [queueId, events] of byQueue) {
    const kindOf = new Map(events.flatMap((e) => e.operations.map((o) => [o.id, o.kind] as const)));
    for (const [i, event] of events.entries()) {
      for (const op of event.operations) {
        if (op.kind !== 'land') continue;
        const land = landOf.get(reportKey(queueId, shaOf.get(op.batchId) ?? ''));
        if (!land) continue;
        const startedIndex = events.findIndex((e, j) => j > i && e.type === 'operationStarted' && e.detail.operationId === op.id);
        const recorded = events.find((e, j) => j > i && OUTCOMES.includes(e.type) && e.detail.operationId === op.id);
        if (startedIndex < 0 || !recorded) continue;
        const started = events[startedIndex];
        result.issuedToStarted.push(started.at.getTime() - event.at.getTime());
        result.startedToMoved.push(land.movedAt - started.at.getTime());
        result.movedToRecorded.push(recorded.at.getTime() - land.movedAt);
        // The operation in flight when the land was issued (started, no outcome yet), and those started before the land.
        const finished = new Set(
          events
            .slice(0, i + 1)
            .filter((e) => OUTCOMES.includes(e.type))
            .map((e) => e.detail.operationId),
        );
        const inFlight = events.slice(0, i).filter((e) => e.type === 'operationStarted' && !finished.has(e.detail.operationId));
        const before = events.slice(i + 1, startedIndex).filter((e) => e.type === 'operationStarted');
        const waited = [...inFlight, ...before].map((e) => kindOf.get(e.detail.operationId as string) ?? '?');
        if (waited.length > 0) result.waitedBehind++;
        for (const kind of waited) result.waitedKinds.set(kind, (result.waitedKinds.get(kind) ?? 0) + 1);
        if (event.type === 'checkReported' && land.report) {
          result.sentToWritten.push(event.at.getTime() - land.report.lastSent);
          result.writtenToResponse.push(land.report.t0 - event.at.getTime());
        }
      }
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// The planner at size

interface PlannerPoint {
  size: number;
  enqueueP50: number;
  enqueueP95: number;
  reduceEnqueue: number;
  reducePlan: number;
  jsonRoundTrip: number;
  jsonChars: number;
  columnBytes: number;
  /** WAL bytes of one enqueue event (median over the window). */
  walP50: number;
}

function timeIt(reps: number, fn: () => void): number {
  fn(); // warm
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const started = performance.now();
    fn();
    times.push(performance.now() - started);
  }
  return median(times);
}

/** Enqueue requests alternated between a queue at the smallest size and one at the largest (each entry removed again, unmeasured). */
interface SideBySide {
  sizes: [number, number];
  p50: [number, number];
  p95: [number, number];
  rounds: number;
  load: string;
}

/** One step per round (see `interleave`). */
async function* runSideBySide(bench: Bench, large: QueueUnderTest): AsyncGenerator<void, SideBySide> {
  const small = await createQueue(bench, 'planner-small', PLANNER_SIZES[0], PLANNER_SETTINGS, PLANNER_STATUSES);
  await bench.api.call('POST', `/merge-queues/${small.id}/pause`);
  await enqueueAll(bench, small);
  await analyze(bench);
  const times: [number[], number[]] = [[], []];
  const queues = [small, large];
  for (let r = 0; r < SIDE_ROUNDS; r++) {
    yield;
    for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const q = queues[i];
      const started = performance.now();
      const entry = await bench.api.call<{ id: string }>('POST', `/merge-queues/${q.id}/entries`, {
        number: 1_000_000 + r,
        headSha: q.repo.heads[0],
        url: 'https://example.invalid/pr/side',
        title: 'side by side',
      });
      times[i].push(performance.now() - started);
      await bench.api.call('DELETE', `/merge-queues/${q.id}/entries/${entry.id}`);
    }
  }
  return {
    sizes: [small.prs, large.prs],
    p50: [median(times[0]), median(times[1])],
    p95: [quantile(times[0], 0.95), quantile(times[1], 0.95)],
    rounds: SIDE_ROUNDS,
    load: loadavg()
      .map((l) => l.toFixed(1))
      .join(' '),
  };
}

/** What autovacuum's analyze would do (the test server runs without autovacuum). */
async function analyze(bench: Bench): Promise<void> {
  await bench.pool.query('ANALYZE "MergeQueueEntry", "MergeQueueBatch", "MergeQueue"');
}

interface PlannerResult {
  points: PlannerPoint[];
  side: SideBySide | null;
  /** Load averages at the end of the phase. */
  load: string;
}

/** One step per measured enqueue request (see `interleave`). */
async function* runPlannerPhase(bench: Bench): AsyncGenerator<void, PlannerResult> {
  const largest = PLANNER_SIZES[PLANNER_SIZES.length - 1];
  const queue = await createQueue(bench, 'planner', largest, PLANNER_SETTINGS, PLANNER_STATUSES);
  await bench.api.call('POST', `/merge-queues/${queue.id}/pause`);
  const points: PlannerPoint[] = [];
  const times: number[] = [];
  const wal: number[] = [];
  const lsn = async () => (await bench.pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  const walDiff = async (from: string) =>
    Number((await bench.pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes', [from])).rows[0].bytes);
  for (let n = 1; n <= largest; n++) {
    yield;
    const walFrom = await lsn();
    const started = performance.now();
    await enqueue(bench, queue, n);
    times.push(performance.now() - started);
    wal.push(await walDiff(walFrom));
    // The test server runs without autovacuum; production's would have analyzed the table by now
    // (its threshold is 50 rows + 10%), and the planner's plans depend on it (before and after alike).
    if (n % 100 === 0) await analyze(bench);
    if (n % 250 === 0) out(`  ${bench.tag}${n} / ${largest} entries`);
    if (!PLANNER_SIZES.includes(n)) continue;
    // The state as the repository assembles it: the document with the rows the state holds (before issue 22 the document held them all).
    const { rows } = await bench.pool.query<{ state: MergeQueueState; bytes: number }>(
      `SELECT q."plannerState" || jsonb_build_object(
         'entries', (SELECT coalesce(jsonb_agg(e."planner" ORDER BY e."plannerSeq"), '[]'::jsonb) FROM "MergeQueueEntry" e WHERE e."queueId" = q."id" AND e."planner" IS NOT NULL),
         'batches', (SELECT coalesce(jsonb_agg(b."planner" ORDER BY b."plannerSeq"), '[]'::jsonb) FROM "MergeQueueBatch" b WHERE b."queueId" = q."id" AND b."planner" IS NOT NULL)
       ) AS state, pg_column_size(q."plannerState") AS bytes FROM "MergeQueue" q WHERE q."id" = $1`,
      [queue.id],
    );
    const state = rows[0].state;
    const waiting = state.entries.filter((e) => e.status === 'queued').length;
    if (waiting !== n || state.status !== 'paused')
      throw new Error(`planner: expected ${n} waiting entries in a paused queue, found ${waiting} (${state.status})`);
    const json = JSON.stringify(state);
    let k = 0;
    const enqueueEvent = (): MergeQueueEvent => ({
      type: 'enqueue',
      at: Date.now(),
      entry: { id: randomUUID(), number: 1_000_000 + k++, headSha: randomBytes(20).toString('hex'), url: 'https://example.invalid/pr/x', title: 'x' },
    });
    const reduceEnqueue = timeIt(REDUCER_REPS, () => void bench.reduce(state, enqueueEvent()));
    // The planning pass over all of them: resume plans the chain (batches, prepare operations).
    const reducePlan = timeIt(REDUCER_REPS, () => {
      const step = bench.reduce(state, { type: 'resume', at: Date.now() });
      if (step.operations.length === 0) throw new Error('planner: resume planned nothing');
    });
    // What every event transaction does with the state besides reducing: parse it and write it back.
    const jsonRoundTrip = timeIt(REDUCER_REPS, () => void JSON.stringify(JSON.parse(json)));
    const window = times.slice(-ENQUEUE_WINDOW);
    points.push({
      size: n,
      enqueueP50: median(window),
      enqueueP95: quantile(window, 0.95),
      reduceEnqueue,
      reducePlan,
      jsonRoundTrip,
      jsonChars: json.length,
      columnBytes: Number(rows[0].bytes),
      walP50: median(wal.slice(-ENQUEUE_WINDOW)),
    });
  }
  const side = SIDE_ROUNDS > 0 && PLANNER_SIZES.length > 1 ? yield* runSideBySide(bench, queue) : null;
  return {
    points,
    side,
    load: loadavg()
      .map((l) => l.toFixed(1))
      .join(' '),
  };
}

/**
 * Runs the builds' stepped phases in turn, one step of each at a time, the first of each turn
 * alternating (this, other, other, this, ...), so that both see the same load; one alone runs to its end.
 */
async function interleave<T>(runs: AsyncGenerator<void, T>[]): Promise<T[]> {
  const results: T[] = [];
  let live = runs.map((run, i) => ({ run, i }));
  for (let turn = 0; live.length > 0; turn++) {
    for (const step of turn % 2 === 0 ? live : [...live].reverse()) {
      const next = await step.run.next();
      if (!next.done) continue;
      results[step.i] = next.value;
      live = live.filter((other) => other !== step);
    }
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// The fleet (issue 22): many queues, few busy

interface FleetResult {
  landing: PhaseResult;
  queues: number;
  busy: number;
  walBytes: number;
  events: number;
  sweeps: number[];
  load: string;
}

async function runFleetPhase(bench: Bench): Promise<FleetResult> {
  const busy: QueueUnderTest[] = [];
  for (let i = 0; i < FLEET_QUEUES; i++) {
    const prs = i < FLEET_BUSY ? FLEET_PRS : 0;
    const q = await createQueue(bench, `fleet-${i}`, prs, {});
    if (prs > 0) busy.push(q);
    if ((i + 1) % 100 === 0) out(`  ${i + 1} / ${FLEET_QUEUES} queues created`);
  }
  const lsn = async () => (await bench.pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  const from = await lsn();
  const eventsBefore = Number(
    (await bench.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "MergeQueueEvent" WHERE "queueId" = ANY($1)`, [busy.map((q) => q.id)])).rows[0].n,
  );
  const landing = await runLandingPhase(bench, `fleet: ${FLEET_QUEUES} queues, ${FLEET_BUSY} busy x ${FLEET_PRS} PRs`, busy);
  const sweeps = [...bench.executor.sweeps];
  const walBytes = Number(
    (await bench.pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes', [from])).rows[0].bytes,
  );
  const events =
    Number(
      (await bench.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "MergeQueueEvent" WHERE "queueId" = ANY($1)`, [busy.map((q) => q.id)])).rows[0].n,
    ) - eventsBefore;
  return {
    landing,
    queues: FLEET_QUEUES,
    busy: FLEET_BUSY,
    walBytes,
    events,
    sweeps,
    load: loadavg()
      .map((l) => l.toFixed(1))
      .join(' '),
  };
}

// ---------------------------------------------------------------------------------------------
// Output: each table is built once from a build's results, then printed for that build alone or,
// figure by figure, for both builds side by side.

/** A table cell: its text and the figures in it, which a comparison divides (none: context, not compared). */
interface Cell {
  text: string;
  values: number[];
}
const cell = (text: string, ...values: number[]): Cell => ({ text, values });

/** A row per phase or size (its `key`, under `keyColumn`; `name` in a comparison's figure names), a column per figure. */
interface Table {
  keyColumn?: string;
  columns: string[];
  /** The columns' names in a comparison, where the columns' own would be ambiguous. */
  figureNames?: string[];
  rows: { key: string; name?: string; cells: Cell[] }[];
}

interface Section {
  /** What is the same for every build: the heading, the lines before the table. */
  heading: string;
  intro: string[];
  table: Table;
  /** Figures the notes give in words, compared as rows of their own. */
  figures: { name: string; cell: Cell }[];
  /** The lines after the table, drawn from the build's figures. */
  notes: string[];
}

function printSection(section: Section): void {
  out(section.heading);
  for (const line of section.intro) out(line);
  const { keyColumn, columns, rows } = section.table;
  const header = keyColumn ? [keyColumn, ...columns] : columns;
  out(`| ${header.join(' | ')} |`);
  out(`|${'---|'.repeat(header.length)}`);
  for (const row of rows) out(`| ${[...(keyColumn ? [row.key] : []), ...row.cells.map((c) => c.text)].join(' | ')} |`);
  for (const line of section.notes) out(line);
}

/** this / compare for each figure of the cell; '–' where the compare build's is 0 or either is not a number. */
function ratio(a: Cell, b: Cell): string {
  return a.values.map((v, i) => (Number.isFinite(v) && Number.isFinite(b.values[i]) && b.values[i] !== 0 ? (v / b.values[i]).toFixed(2) : '–')).join(' / ');
}

function printComparison(benches: Bench[], reports: Section[][]): void {
  const labels = benches.map((b) => labelOf(b.build));
  for (const [s, section] of reports[0].entries()) {
    const [a, b] = reports.map((report) => report[s]);
    out(section.heading);
    for (const line of section.intro) out(line);
    out(`| figure | ${labels.join(' | ')} | this / compare |`);
    out('|---|---|---|---|');
    for (const [r, row] of a.table.rows.entries()) {
      const name = row.name ?? row.key;
      for (const [c, column] of (a.table.figureNames ?? a.table.columns).entries()) {
        const [x, y] = [row.cells[c], b.table.rows[r].cells[c]];
        out(`| ${name ? `${name}: ` : ''}${column} | ${x.text} | ${y.text} | ${ratio(x, y)} |`);
      }
    }
    for (const [f, figure] of a.figures.entries())
      out(`| ${figure.name} | ${figure.cell.text} | ${b.figures[f].cell.text} | ${ratio(figure.cell, b.figures[f].cell)} |`);
    for (const [i, report] of reports.entries()) {
      if (report[s].notes.length === 0) continue;
      out(`\n${labels[i]}:`);
      for (const line of report[s].notes) out(line.replace(/^\n+/, ''));
    }
  }
}

function fleetSection(f: FleetResult): Section {
  const r = f.landing;
  const own = r.lands.map((l) => l.movedAt - (l.report as Report).t0);
  const [p50, p99, sweepP50, sweepMax] = [median(own), quantile(own, 0.99), median(f.sweeps), Math.max(...f.sweeps)];
  const [perPr, perEvent] = [f.walBytes / r.prs, f.walBytes / Math.max(1, f.events)];
  return {
    heading: `\n## Fleet: ${f.queues} queues, ${f.busy} busy x ${r.prs / f.busy} PRs, ${f.queues - f.busy} idle, 2 worker processes\n`,
    intro: [
      `WAL is server-wide (pg_current_wal_lsn): writes of other databases on the same server during the phase count too${COMPARE_ROOT ? " (the other build's included)" : ''}.\n`,
    ],
    table: {
      columns: [
        'PRs landed',
        'seconds',
        'land latency p50 / p99 (ms, own report -> base moved)',
        'sweep passes',
        'sweep time per pass p50 / max (ms)',
        'events (txs)',
        'WAL bytes per landed PR',
        'WAL bytes per event',
      ],
      rows: [
        {
          key: '',
          cells: [
            cell(`${r.prs}`, r.prs),
            cell(r.seconds.toFixed(1), r.seconds),
            cell(`${ms(p50)} / ${ms(p99)}`, p50, p99),
            cell(`${f.sweeps.length}`, f.sweeps.length),
            cell(`${ms(sweepP50)} / ${ms(sweepMax)}`, sweepP50, sweepMax),
            cell(`${f.events}`, f.events),
            cell(perPr.toFixed(0), perPr),
            cell(perEvent.toFixed(0), perEvent),
          ],
        },
      ],
    },
    figures: [],
    notes: [`\nLoad at the end of the phase: ${f.load}.`],
  };
}

function landingSections(results: PhaseResult[]): Section[] {
  const ownOf = (r: PhaseResult) => r.lands.map((l) => l.movedAt - (l.report as Report).t0);
  const landableOf = (r: PhaseResult) => r.lands.map((l) => l.movedAt - Math.max((l.report as Report).t0, l.previousAt));
  const head = results[0];
  const [p50, p99] = [median(ownOf(head)), quantile(ownOf(head), 0.99)];
  const landableP50 = results.map((r) => median(landableOf(r)));
  const latency: Section = {
    heading: '\n## Land latency: last required check answered -> base ref moved (target p50 < 300 ms, p99 < 1 s)\n',
    intro: [
      '"own report" is from the response to the batch\'s own last check; "landable" starts at the later of that and the previous land (a speculative batch that passed early waits for the batch ahead by design).\n',
    ],
    table: {
      keyColumn: 'phase',
      columns: ['lands', 'PRs/land', 'own report p50', 'p99', 'max', 'landable p50', 'p99', 'max', 'load avg'],
      figureNames: ['lands', 'PRs/land', 'own report p50', 'own report p99', 'own report max', 'landable p50', 'landable p99', 'landable max', 'load avg'],
      rows: results.map((r) => {
        const [own, landable] = [ownOf(r), landableOf(r)];
        const figures = [median(own), quantile(own, 0.99), Math.max(...own), median(landable), quantile(landable, 0.99), Math.max(...landable)];
        return {
          key: r.name,
          cells: [
            cell(`${r.lands.length}`, r.lands.length),
            cell((r.prs / r.lands.length).toFixed(1), r.prs / r.lands.length),
            ...figures.map((v) => cell(ms(v), v)),
            cell(r.load.toFixed(1)),
          ],
        };
      }),
    },
    figures: [],
    notes: [
      `\nTarget (${head.name}): p50 ${ms(p50)} ms ${p50 < 300 ? 'met' : 'NOT met'}, p99 ${ms(p99)} ms ${p99 < 1000 ? 'met' : 'NOT met'}.`,
      `How it grows: landable p50 ${results.map((r, i) => `${ms(landableP50[i])} ms (${r.name})`).join(', ')}: x${(landableP50[landableP50.length - 1] / landableP50[0]).toFixed(1)} from one queue testing one PR to ${results[results.length - 1].queues} queues at once.`,
    ],
  };

  const where: Section = {
    heading:
      "\n## Where a land's time goes (medians, ms; from the event trail: an event row is stamped when its transaction writes it, after lock, load, reduce and state write; pickup from BullMQ's event stream)\n",
    intro: [],
    table: {
      keyColumn: 'phase',
      columns: [
        'last check POST sent -> check event written',
        '-> POST answered',
        'land issued -> operationStarted written',
        'lands that waited behind other operations',
        'operationStarted -> base moved',
        'base moved -> outcome written',
        'executor pickup, added -> active (p50 / p99)',
        'executor runs',
        'kicks ignored (job existed)',
        'events (txs) per land',
        'operations per land',
      ],
      rows: results.map((r) => {
        const b = r.breakdown;
        const kinds = [...b.waitedKinds].map(([k, n]) => `${n} ${k}`).join(', ');
        const withP99 = (values: number[]) => cell(`${ms(median(values))} (p99 ${ms(quantile(values, 0.99))})`, median(values), quantile(values, 0.99));
        const [pickupP50, pickupP99] = [median(r.pickups), quantile(r.pickups, 0.99)];
        return {
          key: r.name,
          cells: [
            cell(ms(median(b.sentToWritten)), median(b.sentToWritten)),
            cell(ms(median(b.writtenToResponse)), median(b.writtenToResponse)),
            withP99(b.issuedToStarted),
            cell(`${b.waitedBehind} of ${b.issuedToStarted.length}${kinds ? ` (${kinds})` : ''}`, b.waitedBehind),
            withP99(b.startedToMoved),
            cell(ms(median(b.movedToRecorded)), median(b.movedToRecorded)),
            cell(`${ms(pickupP50)} / ${ms(pickupP99)}`, pickupP50, pickupP99),
            cell(`${r.executorRuns}`, r.executorRuns),
            cell(`${r.ignoredKicks} of ${r.executorKicks + r.ignoredKicks}`, r.ignoredKicks),
            cell(b.eventsPerLand.toFixed(1), b.eventsPerLand),
            cell(b.operationsPerLand.toFixed(1), b.operationsPerLand),
          ],
        };
      }),
    },
    figures: [],
    notes: [],
  };

  const perMinute = (r: PhaseResult) => (r.prs / r.seconds) * 60;
  const single = results.find((r) => r.queues === 1 && r.name !== head.name);
  const parallel = results.find((r) => r.queues > 1);
  const throughput: Section = {
    heading: '\n## Throughput: PRs landed per minute (each queue filled while paused, timed from resume to the base holding its last PR)\n',
    intro: [],
    table: {
      keyColumn: 'phase',
      columns: ['queues x PRs', 'seconds', 'PRs landed / min', 'lands / min', 'PRs / min per queue'],
      rows: results.map((r) => {
        const lands = (r.lands.length / r.seconds) * 60;
        return {
          key: r.name,
          cells: [
            cell(`${r.queues} x ${r.prs / r.queues}`),
            cell(r.seconds.toFixed(1), r.seconds),
            cell(perMinute(r).toFixed(0), perMinute(r)),
            cell(lands.toFixed(0), lands),
            cell((perMinute(r) / r.queues).toFixed(0), perMinute(r) / r.queues),
          ],
        };
      }),
    },
    figures: [],
    notes: [],
  };
  if (single && parallel) {
    const [a, b] = [perMinute(single), perMinute(parallel)];
    throughput.notes.push(
      `How it grows: ${parallel.queues} queues together land x${(b / a).toFixed(2)} the PRs per minute of one queue (${b.toFixed(0)} against ${a.toFixed(0)}); each of them lands ${(b / parallel.queues).toFixed(0)} per minute, x${(b / parallel.queues / a).toFixed(2)} a lone queue's rate. One worker runs ${4} executors at a time (MergeQueuesProcessor concurrency) on ${cpus().length} cores.`,
    );
  }
  return [latency, where, throughput];
}

function plannerSection({ points, side, load }: PlannerResult): Section {
  const lanes = PLANNER_SETTINGS.pathGroups ? ', with path groups (a git diff per enqueue)' : '';
  const [first, last] = [points[0], points[points.length - 1]];
  const enqueueGrowth = last.enqueueP50 / first.enqueueP50;
  const section: Section = {
    heading: `\n## Planner at size: a paused queue with N waiting entries${PLANNER_STATUSES ? ' that posts commit statuses (as on GitHub)' : ''}${lanes}\n`,
    intro: [],
    table: {
      keyColumn: 'waiting entries',
      columns: [
        'enqueue request p50 / p95 (ms, the event transaction over HTTP)',
        'WAL bytes per enqueue event (p50)',
        'reducer: enqueue step (ms)',
        'reducer: planning step on resume (ms)',
        'JSON parse + stringify of the state (ms)',
        'state JSON',
        'pg_column_size("plannerState")',
      ],
      rows: points.map((p) => ({
        key: `${p.size}`,
        name: `${p.size} waiting entries`,
        cells: [
          cell(`${ms(p.enqueueP50)} / ${ms(p.enqueueP95)}`, p.enqueueP50, p.enqueueP95),
          cell(p.walP50.toFixed(0), p.walP50),
          cell(p.reduceEnqueue.toFixed(2), p.reduceEnqueue),
          cell(p.reducePlan.toFixed(2), p.reducePlan),
          cell(p.jsonRoundTrip.toFixed(2), p.jsonRoundTrip),
          cell(`${kb(p.jsonChars)} (${(p.jsonChars / p.size).toFixed(0)} chars/entry)`, p.jsonChars),
          cell(kb(p.columnBytes), p.columnBytes),
        ],
      })),
    },
    figures: [
      { name: `enqueue p50 at ${last.size} vs ${first.size} waiting entries (target: within 1.5x)`, cell: cell(`x${enqueueGrowth.toFixed(2)}`, enqueueGrowth) },
    ],
    notes: [
      `\nEnqueue p50 at ${last.size} vs ${first.size} waiting entries: x${enqueueGrowth.toFixed(2)} (target: within 1.5x); WAL per event ${last.walP50.toFixed(0)} vs ${first.walP50.toFixed(0)} bytes.`,
    ],
  };
  if (side) {
    const sideGrowth = side.p50[1] / side.p50[0];
    for (const i of [0, 1])
      section.figures.push({
        name: `side by side: enqueue p50 / p95 at ${side.sizes[i]} waiting entries (ms)`,
        cell: cell(`${ms(side.p50[i])} / ${ms(side.p95[i])}`, side.p50[i], side.p95[i]),
      });
    section.figures.push({
      name: `side by side: p50 at ${side.sizes[1]} vs ${side.sizes[0]} (target: within 1.5x)`,
      cell: cell(`x${sideGrowth.toFixed(2)}`, sideGrowth),
    });
    section.notes.push(
      `\nSide by side (${side.rounds} enqueue requests each, alternated, each entry removed again; load ${side.load}): p50 ${ms(side.p50[0])} at ${side.sizes[0]} waiting entries, ${ms(side.p50[1])} at ${side.sizes[1]} (p95 ${ms(side.p95[0])} / ${ms(side.p95[1])}): x${sideGrowth.toFixed(2)} (target: within 1.5x).`,
    );
  }
  const sizes = points.map((p) => p.size);
  section.notes.push(
    '\nHow it grows (first to last size):',
    `- enqueue request: ${growth(
      sizes,
      points.map((p) => p.enqueueP50),
    )}`,
    `- reducer enqueue step: ${growth(
      sizes,
      points.map((p) => p.reduceEnqueue),
    )}`,
    `- reducer planning step: ${growth(
      sizes,
      points.map((p) => p.reducePlan),
    )}`,
    `- state JSON: ${growth(
      sizes,
      points.map((p) => p.jsonChars),
    )}`,
    `- pg_column_size: ${growth(
      sizes,
      points.map((p) => p.columnBytes),
    )}`,
    `\nLoad at the end of the phase: ${load}.`,
  );
  return section;
}

// ---------------------------------------------------------------------------------------------
// The builds

function describeBuild(role: Build['role'], root: string): Build {
  for (const file of ['dist/main.js', 'dist/worker.js', 'dist/modules/merge-queues/planner/index.js'])
    if (!existsSync(join(root, file))) throw new Error(`${root} has no ${file}: build it first (npm run build there)`);
  const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();
  const changed = git('status', '--porcelain', '--untracked-files=no') !== '';
  return { role, root, rev: `${git('rev-parse', '--short', 'HEAD')}${changed ? '+changes' : ''}` };
}

/** Starts a worker from the build's root and waits until it says so. */
async function startWorker(bench: Pick<Bench, 'build' | 'env' | 'processes'>): Promise<void> {
  const worker = spawn(process.execPath, ['dist/worker.js'], { cwd: bench.build.root, env: bench.env, stdio: ['ignore', 'pipe', 'inherit'] });
  bench.processes.push(worker);
  let output = '';
  worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  while (!output.includes('worker started')) {
    if (worker.exitCode !== null) throw new Error(`a worker of ${labelOf(bench.build)} exited`);
    await sleep(50);
  }
}

/** SIGTERM, and SIGKILL if it has not exited 10 s later. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(late);
}

/**
 * Starts a build under test (index 0: this checkout, 1: the compare build): a fresh database of its
 * own migrated with its checkout's migrations, its API and one worker from its root, its CI. What
 * it creates is undone by `cleanups`, run last first.
 */
async function startBench(
  build: Build,
  index: number,
  shared: { postgresServerUrl: string; redisUrl: string; prefix: string; watcher: BaseWatcher; cleanups: (() => Promise<unknown>)[] },
): Promise<Bench> {
  const { redisUrl, cleanups } = shared;
  const databaseUrl =
    index === 0 && process.env.DATABASE_URL
      ? process.env.DATABASE_URL
      : await ensureDatabase(shared.postgresServerUrl, index === 0 ? DATABASE : `${DATABASE}_compare`, { fresh: true });
  await migrate(databaseUrl, undefined, join(build.root, 'prisma', 'migrations'));
  const prefix = index === 0 ? shared.prefix : `${shared.prefix}-compare`;
  const port = PORT + index;
  const dir = mkdtempSync(join(tmpdir(), 'bench-mqe-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  cleanups.push(() => prisma.$disconnect());
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  cleanups.push(() => pool.end());
  const executor = new ExecutorEvents({ url: redisUrl }, prefix);
  cleanups.push(async () => {
    await executor.close();
    const queue = new BullQueue(QueueName.MergeQueues, { connection: { url: redisUrl }, prefix });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  });
  const processes: ChildProcess[] = [];
  cleanups.push(() => Promise.all(processes.map(stopProcess)));

  const organization = await prisma.organization.create({ data: { name: `bench-mqe-${randomUUID()}` } });
  const { token } = await createBenchOwnerKey(prisma, organization.id);
  // As in production (NODE_ENV=production), with LOCAL_GIT on under the bench's directory (production
  // turns it off by default and wants its root) and the per-key budget raised so that the bench
  // measures the engine, not 429s.
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    PORT: String(port),
    ...productionEnv(),
    GIT_LOCAL_ENABLED: 'true',
    GIT_LOCAL_ROOT: dir,
    RATE_LIMIT_PER_PRINCIPAL: '10000000',
    LOG_LEVEL: 'warn',
    MERGE_QUEUE_MAX_PER_ORGANIZATION: String(FLEET_QUEUES + 100),
    // The planner phase's side-by-side requests add one entry to a queue at the largest size.
    MERGE_QUEUE_MAX_LIVE_ENTRIES: String(Math.max(1000, ...PLANNER_SIZES) + 10),
    MERGE_QUEUE_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
  };
  processes.push(spawn(process.execPath, ['dist/main.js'], { cwd: build.root, env, stdio: ['ignore', 'ignore', 'inherit'] }));
  await startWorker({ build, env, processes });
  await waitForOk(`http://127.0.0.1:${port}/merge-queues`, { Authorization: `Bearer ${token}` });
  await executor.ready();
  const api = new Api(`http://127.0.0.1:${port}`, token);
  const ci = new Ci(pool, api);
  ci.start();
  cleanups.push(() => ci.stop());
  const planner = createRequire(__filename)(join(build.root, 'dist', 'modules', 'merge-queues', 'planner')) as { reduceMergeQueue: typeof reduceMergeQueue };
  const tag = COMPARE_ROOT ? `${labelOf(build)}: ` : '';
  out(`› ${tag}API and one worker up (${cpus().length} cores, load ${loadavg()[0].toFixed(1)}); required checks: ${REQUIRED_CHECKS.join(', ')}`);
  return {
    build,
    tag,
    api,
    pool,
    prisma,
    organizationId: organization.id,
    ci,
    watcher: shared.watcher,
    executor,
    dir,
    reduce: planner.reduceMergeQueue,
    env,
    processes,
    results: { landing: [] },
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const wallStart = Date.now();
  const services = await provideServices();
  const watcher = new BaseWatcher();
  const cleanups: (() => Promise<unknown>)[] = [() => services.stop(), () => watcher.stop()];
  try {
    buildIfStale();
    const builds = [describeBuild('this build', ROOT), ...(COMPARE_ROOT ? [describeBuild('compare build', COMPARE_ROOT)] : [])];
    const shared = {
      postgresServerUrl: services.postgresServerUrl,
      redisUrl: process.env.REDIS_URL ?? services.redisUrl,
      prefix: process.env.BENCH_QUEUE_PREFIX ?? `dpa-bench-mqe-${randomUUID().slice(0, 8)}`,
      watcher,
      cleanups,
    };
    const benches: Bench[] = [];
    for (const [index, build] of builds.entries()) benches.push(await startBench(build, index, shared));
    if (COMPARE_ROOT) out(`› ${builds.map((b) => `${labelOf(b)} (${b.root})`).join(' against ')}`);

    let turn = 0;
    /** Runs a phase once per build, back to back; the build that goes first alternates from one phase to the next. */
    const eachBuild = async (run: (bench: Bench) => Promise<void>) => {
      for (const bench of turn++ % 2 === 0 ? benches : [...benches].reverse()) await run(bench);
    };
    if (PHASES.has('latency'))
      await eachBuild(async (bench) => {
        out(`› ${bench.tag}latency: 1 queue, ${LATENCY_PRS} PRs, one PR per candidate and one candidate at a time (maxBatch 1, maxParallel 1)`);
        const queue = await createQueue(bench, 'latency', LATENCY_PRS, { maxBatch: 1, maxParallel: 1 });
        bench.results.landing.push(await runLandingPhase(bench, `1 queue, ${LATENCY_PRS} PRs, serial`, [queue]));
      });
    if (PHASES.has('single'))
      await eachBuild(async (bench) => {
        out(`› ${bench.tag}throughput: 1 queue, ${QUEUE_PRS} PRs, default settings`);
        bench.results.landing.push(await runLandingPhase(bench, `1 queue, ${QUEUE_PRS} PRs`, [await createQueue(bench, 'single', QUEUE_PRS, {})]));
      });
    if (PHASES.has('parallel'))
      await eachBuild(async (bench) => {
        out(`› ${bench.tag}throughput: ${PARALLEL_QUEUES} queues x ${PARALLEL_PRS} PRs at once, default settings`);
        const parallel: QueueUnderTest[] = [];
        for (let i = 0; i < PARALLEL_QUEUES; i++) parallel.push(await createQueue(bench, `parallel-${i}`, PARALLEL_PRS, {}));
        bench.results.landing.push(await runLandingPhase(bench, `${PARALLEL_QUEUES} queues x ${PARALLEL_PRS} PRs`, parallel));
      });
    if (PHASES.has('planner')) {
      out(`› planner: a paused queue filled to ${PLANNER_SIZES.join(', ')} entries${COMPARE_ROOT ? ', the builds taking turns request by request' : ''}`);
      const planners = await interleave(benches.map(runPlannerPhase));
      for (const [i, bench] of benches.entries()) bench.results.planner = planners[i];
    }
    if (PHASES.has('fleet'))
      await eachBuild(async (bench) => {
        out(`› ${bench.tag}fleet: ${FLEET_QUEUES} queues (${FLEET_BUSY} busy x ${FLEET_PRS} PRs), a second worker process`);
        await startWorker(bench);
        bench.results.fleet = await runFleetPhase(bench);
        // Its sweep over the fleet's queues is not to run beside the other build's fleet.
        await Promise.all(bench.processes.map(stopProcess));
      });

    const reports = benches.map(({ results: { landing, planner, fleet } }) => [
      ...(landing.length > 0 ? landingSections(landing) : []),
      ...(planner && planner.points.length > 0 ? [plannerSection(planner)] : []),
      ...(fleet ? [fleetSection(fleet)] : []),
    ]);
    if (COMPARE_ROOT) printComparison(benches, reports);
    else reports[0].forEach(printSection);
    const requests = benches.map((b) => `${b.api.requests} API requests${COMPARE_ROOT ? ` (${labelOf(b.build)})` : ''}`);
    out(`\nWall time: ${((Date.now() - wallStart) / 1000).toFixed(0)} s; ${requests.join(', ')}.`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

runOrExplain(main);
