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
 * pg_current_wal_lsn() differences). MERGE_QUEUE_LEGACY_PERSISTENCE=true (passed on to the API and
 * workers) is the "before": the whole planner state written on every event, the sweep ticking every
 * queue with CI running.
 *
 * Environment: BENCH_PHASES (latency,single,parallel,planner,fleet), BENCH_FLEET_QUEUES (500),
 * BENCH_FLEET_BUSY (5), BENCH_FLEET_PRS (20), BENCH_SWEEP_INTERVAL_MS (2000), BENCH_LATENCY_PRS (100), BENCH_QUEUE_PRS (200), BENCH_PARALLEL_QUEUES (20),
 * BENCH_PARALLEL_PRS (20), BENCH_PLANNER_SIZES (100,250,500,1000), BENCH_PLANNER_SIDE_ROUNDS (60: after the fill,
 * enqueue requests alternate between a queue at the smallest size and the filled one, each removed
 * again, so the two p50s are measured side by side under the same load; the phase runs ANALYZE every
 * 100 enqueues, as autovacuum would: the test server has it off), BENCH_CI_POLL_MS (5),
 * BENCH_PHASE_TIMEOUT_S (240), BENCH_PORT (3921), BENCH_QUEUE_PREFIX (random),
 * BENCH_DATABASE (used when DATABASE_URL is unset: dropped and re-created), REDIS_URL.
 * BENCH_FENCE_COMPARE=N (0): the latency phase runs 2N times instead, alternating a worker with the
 * executor's fence shortcuts off (MERGE_QUEUE_FENCE_SHORTCUTS=false) and on, restarted between
 * rounds, so both are measured side by side under the same load. BENCH_LATENCY_ONLY=1 skips the
 * throughput and planner phases. BENCH_PLANNER_STATUSES=1: the planner phase's queues post commit
 * statuses, as queues on GitHub do. BENCH_PLANNER_PATH_GROUPS=1: they have path groups, so every
 * enqueue asks git for the PR's changed paths (one `git diff` before the event) and keeps its lanes.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PrismaPg } from '@prisma/adapter-pg';
import { QueueEvents, Queue as BullQueue } from 'bullmq';
import { Pool } from 'pg';
import { migrate } from '@/common/prisma/migration-runner';
import { QueueName } from '@/common/queues/queue-names';
import { PrismaClient } from '@/generated/prisma/client';
import { createBenchOwnerKey } from '../support';
import { type MergeQueueEvent, type MergeQueueState, reduceMergeQueue } from '@/modules/merge-queues/planner';
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
const FENCE_COMPARE = num('BENCH_FENCE_COMPARE', 0);
const REQUIRED_CHECKS = ['build', 'test'];
// BENCH_LATENCY_ONLY=1 is BENCH_PHASES=latency.
const PHASES = new Set((process.env.BENCH_LATENCY_ONLY === '1' ? 'latency' : (process.env.BENCH_PHASES ?? 'latency,single,parallel,planner,fleet')).split(','));
const FLEET_QUEUES = num('BENCH_FLEET_QUEUES', 500);
const FLEET_BUSY = num('BENCH_FLEET_BUSY', 5);
const FLEET_PRS = num('BENCH_FLEET_PRS', 20);
const SWEEP_INTERVAL_MS = num('BENCH_SWEEP_INTERVAL_MS', 2_000);
const LEGACY = process.env.MERGE_QUEUE_LEGACY_PERSISTENCE === 'true';
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

interface Bench {
  api: Api;
  pool: Pool;
  prisma: PrismaClient;
  organizationId: string;
  ci: Ci;
  watcher: BaseWatcher;
  executor: ExecutorEvents;
  dir: string;
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

async function enqueueAll(
  bench: Bench,
  queue: QueueUnderTest,
  onRequest?: (n: number, ms: number) => Promise<void> | void,
  beforeRequest?: () => Promise<void>,
): Promise<void> {
  for (let n = 1; n <= queue.prs; n++) {
    await beforeRequest?.();
    const started = performance.now();
    await bench.api.call('POST', `/merge-queues/${queue.id}/entries`, {
      number: n,
      headSha: queue.repo.heads[n - 1],
      url: `https://example.invalid/pr/${n}`,
      title: `PR ${n}`,
    });
    await onRequest?.(n, performance.now() - started);
  }
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

async function runSideBySide(bench: Bench, large: QueueUnderTest): Promise<SideBySide> {
  const small = await createQueue(bench, 'planner-small', PLANNER_SIZES[0], PLANNER_SETTINGS, PLANNER_STATUSES);
  await bench.api.call('POST', `/merge-queues/${small.id}/pause`);
  await enqueueAll(bench, small);
  await analyze(bench);
  const times: [number[], number[]] = [[], []];
  const queues = [small, large];
  for (let r = 0; r < SIDE_ROUNDS; r++) {
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

async function runPlannerPhase(bench: Bench): Promise<{ points: PlannerPoint[]; side: SideBySide | null }> {
  const largest = PLANNER_SIZES[PLANNER_SIZES.length - 1];
  const queue = await createQueue(bench, 'planner', largest, PLANNER_SETTINGS, PLANNER_STATUSES);
  await bench.api.call('POST', `/merge-queues/${queue.id}/pause`);
  const points: PlannerPoint[] = [];
  const times: number[] = [];
  const wal: number[] = [];
  const lsn = async () => (await bench.pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  const walDiff = async (from: string) =>
    Number((await bench.pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes', [from])).rows[0].bytes);
  let walFrom = await lsn();
  await enqueueAll(
    bench,
    queue,
    async (n, requestMs) => {
      times.push(requestMs);
      wal.push(await walDiff(walFrom));
      // The test server runs without autovacuum; production's would have analyzed the table by now
      // (its threshold is 50 rows + 10%), and the planner's plans depend on it (before and after alike).
      if (n % 100 === 0) await analyze(bench);
      if (n % 250 === 0) out(`  ${n} / ${largest} entries`);
      if (!PLANNER_SIZES.includes(n)) return;
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
      const enqueue = (): MergeQueueEvent => ({
        type: 'enqueue',
        at: Date.now(),
        entry: { id: randomUUID(), number: 1_000_000 + k++, headSha: randomBytes(20).toString('hex'), url: 'https://example.invalid/pr/x', title: 'x' },
      });
      const reduceEnqueue = timeIt(REDUCER_REPS, () => void reduceMergeQueue(state, enqueue()));
      // The planning pass over all of them: resume plans the chain (batches, prepare operations).
      const reducePlan = timeIt(REDUCER_REPS, () => {
        const step = reduceMergeQueue(state, { type: 'resume', at: Date.now() });
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
    },
    async () => void (walFrom = await lsn()),
  );
  const side = SIDE_ROUNDS > 0 && PLANNER_SIZES.length > 1 ? await runSideBySide(bench, queue) : null;
  return { points, side };
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

function printFleet(f: FleetResult): void {
  const r = f.landing;
  out(
    `\n## Fleet: ${f.queues} queues, ${f.busy} busy x ${r.prs / f.busy} PRs, ${f.queues - f.busy} idle, 2 worker processes (${LEGACY ? 'BEFORE: MERGE_QUEUE_LEGACY_PERSISTENCE=true' : 'AFTER'}; load ${f.load})\n`,
  );
  const own = r.lands.map((l) => l.movedAt - (l.report as Report).t0);
  out(
    '| PRs landed | seconds | land latency p50 / p99 (ms, own report -> base moved) | sweep passes | sweep time per pass p50 / max (ms) | events (txs) | WAL bytes per landed PR | WAL bytes per event |',
  );
  out('|---|---|---|---|---|---|---|---|');
  out(
    `| ${r.prs} | ${r.seconds.toFixed(1)} | ${ms(median(own))} / ${ms(quantile(own, 0.99))} | ${f.sweeps.length} | ${ms(median(f.sweeps))} / ${ms(Math.max(...f.sweeps))} | ${f.events} | ${(f.walBytes / r.prs).toFixed(0)} | ${(f.walBytes / Math.max(1, f.events)).toFixed(0)} |`,
  );
  out('\nWAL is server-wide (pg_current_wal_lsn): writes of other databases on the same server during the phase count too.');
}

// ---------------------------------------------------------------------------------------------
// Output

function printLanding(results: PhaseResult[]): void {
  out('\n## Land latency: last required check answered -> base ref moved (target p50 < 300 ms, p99 < 1 s)\n');
  out(
    '"own report" is from the response to the batch\'s own last check; "landable" starts at the later of that and the previous land (a speculative batch that passed early waits for the batch ahead by design).\n',
  );
  out('| phase | lands | PRs/land | own report p50 | p99 | max | landable p50 | p99 | max | load avg |');
  out('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const own = r.lands.map((l) => l.movedAt - (l.report as Report).t0);
    const landable = r.lands.map((l) => l.movedAt - Math.max((l.report as Report).t0, l.previousAt));
    out(
      `| ${r.name} | ${r.lands.length} | ${(r.prs / r.lands.length).toFixed(1)} | ${ms(median(own))} | ${ms(quantile(own, 0.99))} | ${ms(Math.max(...own))} | ${ms(median(landable))} | ${ms(quantile(landable, 0.99))} | ${ms(Math.max(...landable))} | ${r.load.toFixed(1)} |`,
    );
  }
  const head = results[0];
  const own = head.lands.map((l) => l.movedAt - (l.report as Report).t0);
  const [p50, p99] = [median(own), quantile(own, 0.99)];
  out(`\nTarget (${head.name}): p50 ${ms(p50)} ms ${p50 < 300 ? 'met' : 'NOT met'}, p99 ${ms(p99)} ms ${p99 < 1000 ? 'met' : 'NOT met'}.`);
  const landableP50 = results.map((r) => median(r.lands.map((l) => l.movedAt - Math.max((l.report as Report).t0, l.previousAt))));
  out(
    `How it grows: landable p50 ${results.map((r, i) => `${ms(landableP50[i])} ms (${r.name})`).join(', ')}: x${(landableP50[landableP50.length - 1] / landableP50[0]).toFixed(1)} from one queue testing one PR to ${results[results.length - 1].queues} queues at once.`,
  );

  out(
    "\n## Where a land's time goes (medians, ms; from the event trail: an event row is stamped when its transaction writes it, after lock, load, reduce and state write; pickup from BullMQ's event stream)\n",
  );
  out(
    '| phase | last check POST sent -> check event written | -> POST answered | land issued -> operationStarted written | lands that waited behind other operations | operationStarted -> base moved | base moved -> outcome written | executor pickup, added -> active (p50 / p99) | executor runs | kicks ignored (job existed) | events (txs) per land | operations per land |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const b = r.breakdown;
    const kinds = [...b.waitedKinds].map(([k, n]) => `${n} ${k}`).join(', ');
    out(
      `| ${r.name} | ${ms(median(b.sentToWritten))} | ${ms(median(b.writtenToResponse))} | ${ms(median(b.issuedToStarted))} (p99 ${ms(quantile(b.issuedToStarted, 0.99))}) | ${b.waitedBehind} of ${b.issuedToStarted.length}${kinds ? ` (${kinds})` : ''} | ${ms(median(b.startedToMoved))} (p99 ${ms(quantile(b.startedToMoved, 0.99))}) | ${ms(median(b.movedToRecorded))} | ${ms(median(r.pickups))} / ${ms(quantile(r.pickups, 0.99))} | ${r.executorRuns} | ${r.ignoredKicks} of ${r.executorKicks + r.ignoredKicks} | ${b.eventsPerLand.toFixed(1)} | ${b.operationsPerLand.toFixed(1)} |`,
    );
  }

  out('\n## Throughput: PRs landed per minute (each queue filled while paused, timed from resume to the base holding its last PR)\n');
  out('| phase | queues x PRs | seconds | PRs landed / min | lands / min | PRs / min per queue |');
  out('|---|---|---|---|---|---|');
  for (const r of results) {
    const perMinute = (r.prs / r.seconds) * 60;
    out(
      `| ${r.name} | ${r.queues} x ${r.prs / r.queues} | ${r.seconds.toFixed(1)} | ${perMinute.toFixed(0)} | ${((r.lands.length / r.seconds) * 60).toFixed(0)} | ${(perMinute / r.queues).toFixed(0)} |`,
    );
  }
  const single = results.find((r) => r.queues === 1 && r.name !== head.name);
  const parallel = results.find((r) => r.queues > 1);
  if (single && parallel) {
    const [a, b] = [(single.prs / single.seconds) * 60, (parallel.prs / parallel.seconds) * 60];
    out(
      `How it grows: ${parallel.queues} queues together land x${(b / a).toFixed(2)} the PRs per minute of one queue (${b.toFixed(0)} against ${a.toFixed(0)}); each of them lands ${(b / parallel.queues).toFixed(0)} per minute, x${(b / parallel.queues / a).toFixed(2)} a lone queue's rate. One worker runs ${4} executors at a time (MergeQueuesProcessor concurrency) on ${cpus().length} cores.`,
    );
  }
}

function printPlanner(points: PlannerPoint[], side: SideBySide | null): void {
  const lanes = PLANNER_SETTINGS.pathGroups ? ', with path groups (a git diff per enqueue)' : '';
  out(`\n## Planner at size: a paused queue with N waiting entries${PLANNER_STATUSES ? ' that posts commit statuses (as on GitHub)' : ''}${lanes}\n`);
  out(
    `Persistence: ${LEGACY ? 'BEFORE (MERGE_QUEUE_LEGACY_PERSISTENCE=true: the whole state written on every event)' : 'AFTER (entry and batch rows written when they change)'}; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  out(
    '| waiting entries | enqueue request p50 / p95 (ms, the event transaction over HTTP) | WAL bytes per enqueue event (p50) | reducer: enqueue step (ms) | reducer: planning step on resume (ms) | JSON parse + stringify of the state (ms) | state JSON | pg_column_size("plannerState") |',
  );
  out('|---|---|---|---|---|---|---|---|');
  for (const p of points) {
    out(
      `| ${p.size} | ${ms(p.enqueueP50)} / ${ms(p.enqueueP95)} | ${p.walP50.toFixed(0)} | ${p.reduceEnqueue.toFixed(2)} | ${p.reducePlan.toFixed(2)} | ${p.jsonRoundTrip.toFixed(2)} | ${kb(p.jsonChars)} (${(p.jsonChars / p.size).toFixed(0)} chars/entry) | ${kb(p.columnBytes)} |`,
    );
  }
  out(
    `\nEnqueue p50 at ${points[points.length - 1].size} vs ${points[0].size} waiting entries: x${(points[points.length - 1].enqueueP50 / points[0].enqueueP50).toFixed(2)} (target: within 1.5x); WAL per event ${points[points.length - 1].walP50.toFixed(0)} vs ${points[0].walP50.toFixed(0)} bytes.`,
  );
  if (side) {
    out(
      `\nSide by side (${side.rounds} enqueue requests each, alternated, each entry removed again; load ${side.load}): p50 ${ms(side.p50[0])} at ${side.sizes[0]} waiting entries, ${ms(side.p50[1])} at ${side.sizes[1]} (p95 ${ms(side.p95[0])} / ${ms(side.p95[1])}): x${(side.p50[1] / side.p50[0]).toFixed(2)} (target: within 1.5x).`,
    );
  }
  const sizes = points.map((p) => p.size);
  out('\nHow it grows (first to last size):');
  out(
    `- enqueue request: ${growth(
      sizes,
      points.map((p) => p.enqueueP50),
    )}`,
  );
  out(
    `- reducer enqueue step: ${growth(
      sizes,
      points.map((p) => p.reduceEnqueue),
    )}`,
  );
  out(
    `- reducer planning step: ${growth(
      sizes,
      points.map((p) => p.reducePlan),
    )}`,
  );
  out(
    `- state JSON: ${growth(
      sizes,
      points.map((p) => p.jsonChars),
    )}`,
  );
  out(
    `- pg_column_size: ${growth(
      sizes,
      points.map((p) => p.columnBytes),
    )}`,
  );
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const wallStart = Date.now();
  const services = await provideServices();
  const databaseUrl = process.env.DATABASE_URL ?? (await ensureDatabase(services.postgresServerUrl, DATABASE, { fresh: true }));
  const redisUrl = process.env.REDIS_URL ?? services.redisUrl;
  await migrate(databaseUrl);
  buildIfStale();
  const prefix = process.env.BENCH_QUEUE_PREFIX ?? `dpa-bench-mqe-${randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), 'bench-mqe-'));
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  const children: ChildProcess[] = [];
  const watcher = new BaseWatcher();
  const executor = new ExecutorEvents({ url: redisUrl }, prefix);
  let ci: Ci | undefined;
  try {
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
      PORT: String(PORT),
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
    const api = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(api);
    let worker: ChildProcess | undefined;
    /** (Re)starts the one worker, with `extra` in its environment. */
    const startWorker = async (extra: Record<string, string> = {}) => {
      if (worker) {
        const stopped = worker;
        const exited = new Promise((r) => stopped.once('exit', r));
        stopped.kill('SIGTERM');
        await exited;
      }
      const started = spawn(process.execPath, ['dist/worker.js'], { cwd: ROOT, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'inherit'] });
      worker = started;
      children.push(started);
      let workerOutput = '';
      started.stdout?.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
      while (!workerOutput.includes('worker started')) {
        if (started.exitCode !== null) throw new Error('the worker exited');
        await sleep(50);
      }
    };
    await startWorker();
    await waitForOk(`http://127.0.0.1:${PORT}/merge-queues`, { Authorization: `Bearer ${token}` });
    await executor.ready();
    const client = new Api(`http://127.0.0.1:${PORT}`, token);
    ci = new Ci(pool, client);
    ci.start();
    const bench: Bench = { api: client, pool, prisma, organizationId: organization.id, ci, watcher, executor, dir };
    out(`› API and one worker up (${cpus().length} cores, load ${loadavg()[0].toFixed(1)}); required checks: ${REQUIRED_CHECKS.join(', ')}`);

    const results: PhaseResult[] = [];
    if (PHASES.has('latency')) {
      out(`› latency: 1 queue, ${LATENCY_PRS} PRs, one PR per candidate and one candidate at a time (maxBatch 1, maxParallel 1)`);
      if (FENCE_COMPARE > 0) {
        // Alternating rounds, so that the machine's load drifts over both settings alike.
        for (let round = 1; round <= FENCE_COMPARE; round++) {
          for (const shortcuts of ['false', 'true']) {
            await startWorker({ MERGE_QUEUE_FENCE_SHORTCUTS: shortcuts });
            out(`› latency round ${round}, fence shortcuts ${shortcuts === 'true' ? 'on' : 'off'} (load ${loadavg()[0].toFixed(1)})`);
            results.push(
              await runLandingPhase(bench, `1 queue, ${LATENCY_PRS} PRs, serial, shortcuts ${shortcuts === 'true' ? 'on' : 'off'} #${round}`, [
                await createQueue(bench, `latency-${shortcuts}-${round}`, LATENCY_PRS, { maxBatch: 1, maxParallel: 1 }),
              ]),
            );
          }
        }
        for (const shortcuts of ['off', 'on']) {
          const own = results.filter((r) => r.name.includes(`shortcuts ${shortcuts} `)).flatMap((r) => r.lands.map((l) => l.movedAt - (l.report as Report).t0));
          out(`› fence shortcuts ${shortcuts}: ${own.length} lands, own report p50 ${ms(median(own))} ms, p99 ${ms(quantile(own, 0.99))} ms`);
        }
      } else {
        results.push(
          await runLandingPhase(bench, `1 queue, ${LATENCY_PRS} PRs, serial`, [
            await createQueue(bench, 'latency', LATENCY_PRS, { maxBatch: 1, maxParallel: 1 }),
          ]),
        );
      }
    }
    if (PHASES.has('single')) {
      out(`› throughput: 1 queue, ${QUEUE_PRS} PRs, default settings`);
      results.push(await runLandingPhase(bench, `1 queue, ${QUEUE_PRS} PRs`, [await createQueue(bench, 'single', QUEUE_PRS, {})]));
    }
    if (PHASES.has('parallel')) {
      out(`› throughput: ${PARALLEL_QUEUES} queues x ${PARALLEL_PRS} PRs at once, default settings`);
      const parallel: QueueUnderTest[] = [];
      for (let i = 0; i < PARALLEL_QUEUES; i++) parallel.push(await createQueue(bench, `parallel-${i}`, PARALLEL_PRS, {}));
      results.push(await runLandingPhase(bench, `${PARALLEL_QUEUES} queues x ${PARALLEL_PRS} PRs`, parallel));
    }
    let planner: PlannerPoint[] = [];
    let side: SideBySide | null = null;
    if (PHASES.has('planner')) {
      out(`› planner: a paused queue filled to ${PLANNER_SIZES.join(', ')} entries`);
      ({ points: planner, side } = await runPlannerPhase(bench));
    }
    let fleet: FleetResult | undefined;
    if (PHASES.has('fleet')) {
      out(`› fleet: ${FLEET_QUEUES} queues (${FLEET_BUSY} busy x ${FLEET_PRS} PRs), a second worker process`);
      const second = spawn(process.execPath, ['dist/worker.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(second);
      let secondOutput = '';
      second.stdout.on('data', (chunk: Buffer) => (secondOutput += chunk.toString()));
      while (!secondOutput.includes('worker started')) {
        if (second.exitCode !== null) throw new Error('the second worker exited');
        await sleep(50);
      }
      fleet = await runFleetPhase(bench);
    }

    if (results.length > 0) printLanding(results);
    if (planner.length > 0) printPlanner(planner, side);
    if (fleet) printFleet(fleet);
    out(`\nWall time: ${((Date.now() - wallStart) / 1000).toFixed(0)} s; ${client.requests} API requests.`);
  } finally {
    await ci?.stop().catch(() => undefined);
    for (const child of children) child.kill('SIGTERM');
    await watcher.stop();
    await executor.close().catch(() => undefined);
    const queue = new BullQueue(QueueName.MergeQueues, { connection: { url: redisUrl }, prefix });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await pool.end();
    await prisma.$disconnect();
    rmSync(dir, { recursive: true, force: true });
    await services.stop();
  }
}

runOrExplain(main);
