import {
  createMergeQueueState,
  estimateMergeTimes,
  InvariantMonitor,
  isFinalBatch,
  type MergeQueueEvent,
  type MergeQueueOperation,
  type MergeQueueState,
  type PlannerConfig,
  reduceMergeQueue,
} from '@/modules/merge-queues/planner';
import { holdsRunner } from '@/modules/merge-queues/planner/runners';
import { aheadOfBarrier, chainBarrier } from '@/modules/merge-queues/planner/order';
import { batchOutcome } from '@/modules/merge-queues/planner/step';
import type { BatchState } from '@/modules/merge-queues/planner/types';
import { hashInts, mulberry32 } from './prng';
import type { Policy } from './policy';
import { MINUTE, type CiRun, type Scenario, type World } from './world';
import { failFirstTests } from '@/modules/merge-queues/planner';
import type { CheckFailure } from '@/modules/merge-queues/planner/types';

/** The simulator's top-level directories, one path group each when the scenario reports failing tests. */
const DIRECTORIES = 8;

/** What this executor reads of the scenario and of a CI run beyond pass/fail (world.ts may not model it yet). */
type TestReporting = { reportsTests?: boolean };
type RunTests = { failedTests?: { test: string; file?: string; target?: string }[] };

/**
 * The failing tests a run names, as CI would report them: the world's failing tests where it
 * models them, else one test per failed test area, whose file sits in that area's directory.
 */
export function failuresOfRun(run: CiRun): Omit<CheckFailure, 'check'>[] {
  const tests = (run as CiRun & RunTests).failedTests;
  if (tests) return tests.map((t) => ({ test: t.test, ...(t.file !== undefined && { file: t.file }), ...(t.target !== undefined && { target: t.target }) }));
  return run.failedAreas.map((a) => ({ test: `area ${a}`, file: `d${a}/area.test.ts` }));
}

/**
 * Starting estimates that do not know the benchmark's answer (the planner's defaults equal the
 * central scenario: p=3%, E[CI]=27 min): a pessimistic round failure rate above every p tested and
 * a round CI duration; the planner has to learn the real values from what it observes.
 */
const NEUTRAL_START: Partial<PlannerConfig> = { initialFailureRate: 0.1, initialCiDurationMs: 30 * MINUTE };

/**
 * Time from an executor crash to the reconciling readBack: the lease expires (MERGE_QUEUE_LEASE_MS,
 * 15 s) and BullMQ re-runs the stalled job (its stalled check runs every 30 s). Until this model the
 * unknown outcome came at once, so a crash cost nothing and the crash row equalled the plain one to
 * the last digit.
 */
export const CRASH_RECOVERY_MS = 45_000;

type Ev = MergeQueueEvent extends infer E ? (E extends { at: number } ? Omit<E, 'at'> : never) : never;

/**
 * "Our" policy: the real planner, with this class as its executor. Operations are performed
 * against the simulated git and CI and their outcomes fed back as events; with a crash rate set,
 * some operations end `unknown` (performed or not, at random) to exercise reconciliation.
 */
export class PlannerPolicy implements Policy {
  readonly name: string;
  state: MergeQueueState;
  readonly monitor = new InvariantMonitor();
  private readonly queue: MergeQueueOperation[] = [];
  private readonly runs = new Map<string, CiRun>();
  private readonly candidateOf = new Map<string, string>();
  private readonly published = new Set<string>();
  private readonly ciStarted = new Set<string>();
  private readonly crash: () => number;
  private draining = false;
  private readonly fixing = new Set<string>();
  steps = 0;
  unknownOutcomes = 0;
  /** The scenario reports failing tests: runs name them, entries carry their lanes (the PR's directory). */
  private readonly reportsTests: boolean;
  /** Candidates are deterministic: the same parent and the same PR heads give the same commit. */
  private readonly built = new Map<string, string>();
  /**
   * Diagnostics only (diagnose.ts --oracle-heavy): before every event each waiting or testing
   * entry's heavy probability is set from the world's answer (0.95 slow, 0.01 not), an upper bound
   * on what learning CI weights could tell the planner.
   */
  oracleHeavy = false;
  /** Lanes (world.ts Scenario.lanes): this planner runs one lane and lands onto the moving base. */
  lane: number | null = null;
  /** Lanes: this planner runs the PRs that span lanes (LanesPolicy) and lands them with World.landSpan. */
  spanning = false;
  /** Diagnostics (diagnose.ts): time a bisection barrier held the chain, and time no chain batch was live while PRs waited. */
  readonly diag = { barrierMs: 0, chainIdleMs: 0, lastAt: 0, idleBarrierMs: 0, idleOtherMs: 0, idleEmptyMs: 0 };
  /** Diagnostics: idle runner time outside a bisection, and chain-idle time, by why the chain did not grow. */
  readonly idleWhy: Record<string, number> = {};
  readonly chainIdleWhy: Record<string, number> = {};
  /** Diagnostics: each batch's role and how it ended (the reason it was withdrawn, or its status). */
  readonly batchEnd = new Map<string, { role: string; end: string }>();

  constructor(
    private readonly world: World,
    config: Partial<PlannerConfig> = {},
    name = 'ours',
  ) {
    this.name = name;
    this.reportsTests = (world.scenario as Scenario & TestReporting).reportsTests === true;
    const groups = this.reportsTests ? { pathGroups: Array.from({ length: DIRECTORIES }, (_, d) => ({ name: `d${d}`, paths: [`d${d}/`] })) } : {};
    this.state = createMergeQueueState({
      baseSha: world.baseSha,
      config: { historyLimit: 30, ...NEUTRAL_START, ...groups, ...config },
    });
    this.crash = mulberry32(hashInts([world.seed, 9]));
    this.scheduleTick();
  }

  violations(): number {
    return this.monitor.violations.length;
  }

  /** The base moved under this planner (LanesPolicy: a spanning PR landed in its lane, or it is to test one on the real base). */
  moveBase(sha: string): void {
    if (this.state.baseSha !== sha) this.send({ type: 'baseMoved', baseSha: sha });
  }

  arrive(n: number): void {
    this.send({
      type: 'enqueue',
      entry: { id: `pr${n}`, number: n, headSha: `h${n}.0`, url: `https://git.example/pulls/${n}` },
    });
    // The engine gives an entry its lanes once its changed paths are matched (here at once): the
    // path group of the PR's directory.
    if (this.reportsTests) this.giveLanes(`pr${n}`, [`d${this.world.pr(n).directory}`]);
    const estimate = estimateMergeTimes(this.state, this.world.now).find((e) => e.number === n);
    if (estimate) this.world.pr(n).eta = estimate.estimatedMergeAt;
  }

  private giveLanes(id: string, lanes: string[]): void {
    this.state = { ...this.state, entries: this.state.entries.map((e) => (e.id === id && e.lanes === undefined ? { ...e, lanes } : e)) };
  }

  private scheduleTick(): void {
    this.world.events.schedule(this.world.now + 5 * MINUTE, () => {
      if (this.world.prs.every((p) => p.mergedAt !== null || p.failedAt !== null)) return;
      this.send({ type: 'tick' });
      this.scheduleTick();
    });
  }

  private send(event: Ev): void {
    const prev = this.state;
    if (this.oracleHeavy) {
      for (const e of prev.entries) {
        if (e.status === 'queued' || e.status === 'testing') e.heavyProbability = this.world.pr(e.number).slow ? 0.95 : 0.01;
      }
    }
    this.noteTime(prev);
    const result = reduceMergeQueue(prev, { ...event, at: this.world.now } as MergeQueueEvent);
    this.steps += 1;
    this.monitor.observe(prev, result.state, result.operations, result.transitions);
    this.state = result.state;
    for (const t of result.transitions) {
      if (t.subject !== 'batch' || !['landed', 'failed', 'withdrawn'].includes(t.to)) continue;
      const b = result.state.batches.find((x) => x.id === t.id);
      this.batchEnd.set(t.id, { role: b?.role ?? '?', end: t.to === 'withdrawn' ? reasonClass(b?.failureReason ?? '') : t.to });
    }
    if (result.state !== prev) {
      const before = new Map(prev.entries.map((e) => [e.id, e.status]));
      for (const e of result.state.entries) {
        if (e.status === 'failed' && before.get(e.id) !== 'failed') this.world.fail(e.number);
      }
    }
    this.queue.push(...result.operations);
    this.drain();
  }

  private noteTime(s: MergeQueueState): void {
    // Measured up to the last arrival, like the runner time in diagnose.ts.
    const now = Math.min(this.world.now, this.world.lastArrival);
    const dt = now - this.diag.lastAt;
    this.diag.lastAt = Math.max(this.diag.lastAt, now);
    if (dt <= 0) return;
    const barrier = chainBarrier(s.entries) !== null;
    if (barrier) this.diag.barrierMs += dt;
    const idle = (this.world.scenario.runners - this.world.busyRunners) * dt;
    const queued = s.entries.some((e) => e.status === 'queued' && !e.setAside);
    if (!queued) this.diag.idleEmptyMs += idle;
    else if (barrier) this.diag.idleBarrierMs += idle;
    else {
      this.diag.idleOtherMs += idle;
      if (idle > 0) {
        const why = whyChainStopped(s);
        this.idleWhy[why] = (this.idleWhy[why] ?? 0) + idle;
      }
    }
    const waiting = s.entries.some((e) => e.status === 'queued' && !e.setAside && e.suspectGroup === null);
    const chainLive = s.batches.some((b) => b.role === 'chain' && !isFinalBatch(b));
    if (waiting && !chainLive) {
      this.diag.chainIdleMs += dt;
      const why = `${whyChainStopped(s)}; runners idle ${this.world.scenario.runners - this.world.busyRunners}`;
      this.chainIdleWhy[why] = (this.chainIdleWhy[why] ?? 0) + dt;
    }
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let op = this.queue.shift(); op; op = this.queue.shift()) this.execute(op);
    } finally {
      this.draining = false;
    }
  }

  private execute(op: MergeQueueOperation): void {
    const risky = op.kind === 'prepare' || op.kind === 'publish' || op.kind === 'startCi' || op.kind === 'land';
    if (risky && this.world.scenario.crashRate > 0 && this.crash() < this.world.scenario.crashRate) {
      if (this.crash() < 0.5) this.perform(op, false);
      this.unknownOutcomes += 1;
      // The executor died with the operation in flight: the next one takes the queue's lease once
      // it expired and only then records the operation `unknown` (and reads back).
      this.world.events.schedule(this.world.now + CRASH_RECOVERY_MS, () => this.send({ type: 'operationUnknown', operationId: op.id }));
      return;
    }
    const outcome = this.perform(op, true);
    if (outcome) this.send(outcome);
  }

  private perform(op: MergeQueueOperation, report: boolean): Ev | null {
    const w = this.world;
    switch (op.kind) {
      case 'prepare': {
        const numbers = op.heads.map((h) => h.number);
        // A lane planner's batch with a PR that spans lanes (LanesPolicy, the host rule) is built on
        // its parent merged with the base as it is now, which holds its other lanes' PRs.
        const onBase = this.lane !== null && numbers.some((n) => w.pr(n).lanes.length > 1);
        const key = `${op.baseSha}|${numbers.map((n) => `${n}:${w.pr(n).headVersion}`).join(',')}`;
        const again = onBase ? undefined : this.built.get(key);
        const built = again !== undefined ? ({ ok: true, sha: again } as const) : onBase ? w.buildOnBase(op.baseSha, numbers) : w.build(op.baseSha, numbers);
        if (built.ok && !onBase) this.built.set(key, built.sha);
        if (!built.ok) {
          const head = op.heads.find((h) => h.number === built.pr);
          // One fix per head: a screen and then the chain may both meet the same conflict.
          const fixKey = `${built.pr}:${w.pr(built.pr).headVersion}`;
          if (report && !this.fixing.has(fixKey)) {
            this.fixing.add(fixKey);
            w.scheduleFix(built.pr, () => {
              const pr = w.pr(built.pr);
              this.send({ type: 'headUpdated', entryId: `pr${built.pr}`, headSha: `h${built.pr}.${pr.headVersion}` });
            });
          }
          return {
            type: 'operationFailed',
            operationId: op.id,
            reason: `#${built.pr} conflicts with #${built.withPr}`,
            conflictEntryId: head?.entryId,
          };
        }
        this.candidateOf.set(op.batchId, built.sha);
        return { type: 'operationSucceeded', operationId: op.id, candidateSha: built.sha };
      }
      case 'publish':
        this.published.add(`${op.batchId}:${op.candidateSha}`);
        return { type: 'operationSucceeded', operationId: op.id };
      case 'startCi': {
        const batch = this.state.batches.find((b) => b.id === op.batchId);
        const own = batch ? batch.prNumbers : [];
        const tag = `${batch?.role === 'part' ? 'probe ' : batch?.role === 'screen' ? 'screen ' : ''}${op.batchId} [${own.join(',')}]`;
        this.ciStarted.add(`${op.batchId}:${op.candidateSha}`);
        const onDone: CiRun['onDone'] = (r, passed) => {
          const failures = !passed && this.reportsTests ? failuresOfRun(r) : [];
          this.send({
            type: 'checkReported',
            batchId: op.batchId,
            candidateSha: r.sha,
            name: 'ci',
            state: passed ? 'success' : 'failure',
            ...(failures.length > 0 && { failures }),
          });
        };
        // The tests to run first (fail-first hints), for a world that models them.
        const failFirst = batch && this.reportsTests ? failFirstTests(this.state, batch) : [];
        const start = w.startCi as (sha: string, tag: string, done: CiRun['onDone'], options?: { failFirst?: CheckFailure[] }) => CiRun;
        const run = start.call(w, op.candidateSha, tag, onDone, { failFirst });
        this.runs.set(op.batchId, run);
        return { type: 'operationSucceeded', operationId: op.id };
      }
      case 'land':
        if (
          this.spanning
            ? w.landSpan(op.candidateSha)
            : this.lane !== null
              ? w.landLane(op.candidateSha, this.lane)
              : w.land(op.candidateSha, op.expectedBaseSha)
        )
          return { type: 'operationSucceeded', operationId: op.id };
        return { type: 'operationFailed', operationId: op.id, reason: 'base moved', baseSha: w.baseSha };
      case 'readBack': {
        const sha = this.candidateOf.get(op.batchId) ?? null;
        return {
          type: 'operationSucceeded',
          operationId: op.id,
          readBack: {
            baseSha: w.baseSha,
            candidateSha: sha,
            candidateLanded: sha !== null && w.isLanded(sha),
            published: sha !== null && this.published.has(`${op.batchId}:${sha}`),
            ciStarted: sha !== null && this.ciStarted.has(`${op.batchId}:${sha}`),
          },
        };
      }
      case 'cleanup': {
        const run = this.runs.get(op.batchId);
        if (run) {
          w.cancelCi(run);
          this.runs.delete(op.batchId);
        }
        return { type: 'operationSucceeded', operationId: op.id };
      }
    }
  }
}

/** Diagnostics: a withdrawal reason without its PR and batch numbers. */
export function reasonClass(reason: string): string {
  return reason.replace(/#\d+(, #\d+)*/g, '#N').replace(/\bb\d+\b/g, 'bN');
}

/** Diagnostics: why the chain, as planNewBatches sees this state, does not take the waiting PRs now. */
function whyChainStopped(s: MergeQueueState): string {
  const required = s.config.requiredChecks;
  const live = s.batches.filter((b) => !isFinalBatch(b));
  if (live.some((b) => b.status === 'merging' || b.status === 'reconciling')) {
    if (live.some((b) => b.role === 'part' && b.status === 'merging')) return 'probe landing by itself';
  }
  const waiting = s.entries.filter((e) => e.status === 'queued' && !e.setAside);
  const normal = waiting.filter((e) => e.suspectGroup === null && !(e.failuresAlone > 0 && !e.cleared));
  const takeable = aheadOfBarrier(normal, chainBarrier(s.entries));
  if (takeable.length === 0) return normal.length === 0 ? 'only solo retries wait (probe share)' : 'barrier: nothing ahead of it';
  const root = live.find((b) => b.role === 'chain' && b.parentId === null && b.baseSha === s.baseSha);
  let len = 0;
  let tip: BatchState | null = null;
  for (let c = root ?? null; c;) {
    tip = c;
    len += 1;
    c = live.find((k) => k.parentId === c!.id) ?? null;
  }
  const staleRoot = live.some((b) => b.role === 'chain' && b.parentId === null && b.baseSha !== s.baseSha);
  if (tip && batchOutcome(tip, required) === 'failed') return 'chain tip failed behind a batch still testing';
  if (!root && staleRoot) return 'stale chain root not yet withdrawn';
  if (len > 0 && Math.pow(1 - Math.min(0.999, s.stats.batchFailureRate), len) < s.config.minChainSuccess) return `speculation depth (chain ${len})`;
  const heldRunners = live.filter((b) => holdsRunner(b, required)).length;
  if (heldRunners >= s.config.maxParallel) return 'maxParallel held (preparing/queued CI)';
  return `speculation does not pay (chain ${len}${tip && batchOutcome(tip, required) === 'passed' ? ', tip passed' : ''})`;
}

/**
 * Lanes (docs/merge-queue.md, "Tried and not kept"): one planner per lane (world.ts
 * Scenario.lanes), sharing the runners and the base branch; a lane lands onto a base other lanes
 * moved with no new test, which only disjoint paths justify. A PR that spans lanes
 * (Scenario.spanRate) keeps issue 16's order in each of them: the PRs behind it in its lanes wait
 * for it, and it is handed to a planner of its own once every PR ahead of it in its lanes has
 * merged or failed and no other spanning PR is in flight. That planner tests it on the real base
 * (its lanes are still, so what lands meanwhile is another lane's) and lands it
 * (World.landSpan); its lanes then build on the base that holds it. Without spanning PRs this is
 * the upper bound of the fifth round.
 */
export class LanesPolicy implements Policy {
  readonly name = 'ours';
  readonly lanes: PlannerPolicy[];
  /** The planner of PRs that span lanes. */
  readonly span: PlannerPolicy;
  /** PRs that arrived and were not handed to a planner yet, in arrival order. */
  private readonly held: number[] = [];
  /** By lane: the PRs touching it that arrived and have not finished, in arrival order. */
  private readonly open: number[][];
  /** Spanning PRs handed to `span` that have not finished. */
  private readonly inFlight = new Set<number>();
  /** Diagnostics: PRs that spanned lanes, and the time PRs were held behind one. */
  readonly spanStats = { spanning: 0, heldMs: 0 };
  private readonly heldSince = new Map<number, number>();

  /** Every spanning PR released under the host rule, with its host lane: the lane whose planner runs it. */
  readonly hosted = new Map<number, number>();

  constructor(
    private readonly world: World,
    config: Partial<PlannerConfig> = {},
    /**
     * `barrier`: a spanning PR waits until every PR ahead of it in all its lanes finished and is
     * tested alone on the real base. `host`: it waits only for its other lanes to drain, then joins
     * the chain of the lane with the most work ahead of it (its host), built on that chain merged
     * with the current base; its other lanes wait until it finished.
     */
    readonly spanRule: 'barrier' | 'host' = 'barrier',
  ) {
    const count = world.scenario.lanes ?? 1;
    this.lanes = Array.from({ length: count }, (_, i) => Object.assign(new PlannerPolicy(world, config, `lane ${i}`), { lane: i }));
    this.span = Object.assign(new PlannerPolicy(world, config, 'spanning'), { spanning: true });
    this.open = Array.from({ length: count }, () => []);
    // Released after the event that finished them, not inside the planner's own step.
    world.onFinished = () => world.events.schedule(world.now, () => this.release());
  }

  /** Diagnostics of lane 0 only (diagnose.ts reads them). */
  get diag(): PlannerPolicy['diag'] {
    return this.lanes[0].diag;
  }

  get batchEnd(): PlannerPolicy['batchEnd'] {
    return this.lanes[0].batchEnd;
  }

  arrive(n: number): void {
    const pr = this.world.pr(n);
    for (const l of pr.lanes) this.open[l].push(n);
    if (pr.lanes.length > 1) this.spanStats.spanning += 1;
    this.held.push(n);
    this.heldSince.set(n, this.world.now);
    this.release();
  }

  private finished(n: number): boolean {
    const pr = this.world.pr(n);
    return pr.mergedAt !== null || pr.failedAt !== null;
  }

  /** Hands every held PR whose turn came to its planner. */
  private release(): void {
    for (const n of [...this.inFlight]) {
      if (!this.finished(n)) continue;
      this.inFlight.delete(n);
      const host = this.hosted.get(n);
      // Its lanes were still while it was tested; they build on the base that holds it now (its
      // host lane's planner landed it and knows).
      if (this.world.pr(n).mergedAt !== null) {
        for (const l of this.world.pr(n).lanes) if (l !== host) this.lanes[l].moveBase(this.world.baseSha);
      }
    }
    for (let l = 0; l < this.open.length; l++) this.open[l] = this.open[l].filter((n) => !this.finished(n));
    for (let i = 0; i < this.held.length;) {
      const n = this.held[i];
      const pr = this.world.pr(n);
      const ahead = (l: number) => this.open[l].slice(0, this.open[l].indexOf(n));
      let go: boolean;
      let host: number | null = null;
      // A lane is still for a spanning PR ahead in it unless that PR runs in this lane's own planner.
      const still = (l: number) => ahead(l).some((m) => this.world.pr(m).lanes.length > 1 && this.hosted.get(m) !== l);
      if (pr.lanes.length === 1) go = !still(pr.lane);
      else if (this.spanRule === 'barrier') go = this.inFlight.size === 0 && pr.lanes.every((l) => ahead(l).length === 0);
      else {
        const hosts = pr.lanes.filter(
          (h) => !still(h) && !ahead(h).some((m) => this.held.includes(m)) && pr.lanes.every((l) => l === h || ahead(l).length === 0),
        );
        host = hosts.sort((a, b) => ahead(b).length - ahead(a).length || a - b)[0] ?? null;
        go = host !== null;
      }
      if (!go) {
        i += 1;
        continue;
      }
      this.held.splice(i, 1);
      this.spanStats.heldMs += this.world.now - (this.heldSince.get(n) ?? this.world.now);
      if (pr.lanes.length === 1) this.lanes[pr.lane].arrive(n);
      else if (host !== null) {
        this.inFlight.add(n);
        this.hosted.set(n, host);
        this.lanes[host].arrive(n);
      } else {
        this.inFlight.add(n);
        this.span.moveBase(this.world.baseSha);
        this.span.arrive(n);
      }
    }
  }

  violations(): number {
    return this.lanes.reduce((a, l) => a + l.violations(), 0) + this.span.violations();
  }
}
