import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import {
  createMergeQueueState,
  InvariantMonitor,
  type MergeQueueEvent,
  type MergeQueueOperation,
  type MergeQueueState,
  namedBy,
  type PlannerResult,
  reduceMergeQueue,
  WHOLE_STATE_EVENTS,
  frontHolds,
  isPlainWaiting,
  windowHolds,
  windowOf,
} from './index';
import { frontOfLine, statusChanges } from '../commit-statuses/commit-statuses';

type Ev = MergeQueueEvent extends infer E ? (E extends { at: number } ? Omit<E, 'at'> : never) : never;

interface Delivery {
  op?: MergeQueueOperation;
  event?: Ev;
}

/**
 * A small model of git and CI that performs the planner's operations when they are delivered,
 * in whatever order the test picks, and answers with outcomes, unknowns and check results.
 */
class ModelWorld {
  base = 'base0';
  readonly content = new Map<string, number[]>([['base0', []]]);
  readonly ciReported = new Map<string, 'success' | 'failure'>();
  readonly ciStarted = new Set<string>();
  readonly published = new Set<string>();
  readonly bad = new Set<number>();
  readonly conflicting = new Set<number>();
  readonly landedPrs: number[] = [];
  readonly violations: string[] = [];
  private commits = 0;
  private readonly candidateOf = new Map<string, string>();

  perform(op: MergeQueueOperation): Ev {
    switch (op.kind) {
      case 'prepare': {
        const clash = op.heads.find((h) => this.conflicting.has(h.number));
        if (clash) {
          return {
            type: 'operationFailed',
            operationId: op.id,
            reason: `#${clash.number} conflicts`,
            conflictEntryId: clash.entryId,
          };
        }
        const existing = this.candidateOf.get(op.batchId);
        const sha = existing ?? `c${++this.commits}`;
        this.candidateOf.set(op.batchId, sha);
        this.content.set(sha, [...(this.content.get(op.baseSha) ?? []), ...op.heads.map((h) => h.number)]);
        return { type: 'operationSucceeded', operationId: op.id, candidateSha: sha };
      }
      case 'publish':
        this.published.add(op.candidateSha);
        return { type: 'operationSucceeded', operationId: op.id };
      case 'startCi':
        this.ciStarted.add(op.candidateSha);
        return { type: 'operationSucceeded', operationId: op.id };
      case 'land': {
        if (this.base !== op.expectedBaseSha) {
          this.violations.push(`land of ${op.candidateSha} expected base ${op.expectedBaseSha}, base is ${this.base}`);
          return { type: 'operationFailed', operationId: op.id, reason: 'base moved', baseSha: this.base };
        }
        if (this.ciReported.get(op.candidateSha) !== 'success') {
          this.violations.push(`land of ${op.candidateSha} that CI never passed`);
        }
        const content = this.content.get(op.candidateSha) ?? [];
        for (const n of content.slice(this.landedPrs.length)) {
          if (this.bad.has(n)) this.violations.push(`bad PR #${n} landed`);
          if (this.landedPrs.includes(n)) this.violations.push(`PR #${n} landed twice`);
          this.landedPrs.push(n);
        }
        this.base = op.candidateSha;
        return { type: 'operationSucceeded', operationId: op.id };
      }
      case 'readBack': {
        const sha = this.candidateOf.get(op.batchId) ?? null;
        return {
          type: 'operationSucceeded',
          operationId: op.id,
          readBack: {
            baseSha: this.base,
            candidateSha: sha,
            candidateLanded: sha !== null && this.isAncestor(sha),
            published: sha !== null && this.published.has(sha),
            ciStarted: sha !== null && this.ciStarted.has(sha),
          },
        };
      }
      case 'cleanup':
        return { type: 'operationSucceeded', operationId: op.id };
    }
  }

  private isAncestor(sha: string): boolean {
    const c = this.content.get(sha);
    const b = this.content.get(this.base);
    if (!c || !b) return false;
    return c.length <= b.length && c.every((n, i) => b[i] === n);
  }

  ciVerdict(sha: string, flake: boolean): 'success' | 'failure' {
    const content = this.content.get(sha) ?? [];
    return flake || content.some((n) => this.bad.has(n)) ? 'failure' : 'success';
  }
}

const action = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('enqueue' as const), a: fc.nat(99), b: fc.nat(99) }) },
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('deliver' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('ci' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('crash' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('replay' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('head' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('aside' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('priority' as const), a: fc.nat(999), b: fc.nat(99) }) },
  // a set-aside, removal or head update aimed at an entry of a live batch in a chosen status
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('change' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hold' as const), a: fc.nat(999), b: fc.nat(99) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), a: fc.nat(999), b: fc.nat(99) }) },
);

/** Sequences of actions with more enqueues, so that long waiting lines form, and a queue's maxParallel and maxBatch (the window tests). */
const longLines = fc.tuple(
  fc.array(
    fc.oneof({ weight: 3, arbitrary: action }, { weight: 1, arbitrary: fc.record({ kind: fc.constant('enqueue' as const), a: fc.nat(99), b: fc.nat(99) }) }),
    { minLength: 20, maxLength: 300, size: 'max' },
  ),
  fc.integer({ min: 1, max: 3 }),
  fc.integer({ min: 1, max: 3 }),
);

/** Deep equality, explained by jest's toEqual only on a difference (it is slow on thousands of states). */
function same(a: unknown, b: unknown): void {
  if (!isDeepStrictEqual(a, b)) expect(a).toEqual(b);
}

/**
 * The reducer's result over a window equals its result over the whole state: the same operations
 * and status steps, the same document and batches, the same entries for those the window holds.
 */
function sameOverWindow(part: PlannerResult, whole: PlannerResult): void {
  same(part.operations, whole.operations);
  same(part.transitions, whole.transitions);
  const { entries: partEntries, ...partRest } = part.state;
  const { entries: wholeEntries, ...wholeRest } = whole.state;
  same(partRest, wholeRest);
  const held = new Set(partEntries.map((e) => e.id));
  same(
    wholeEntries.filter((e) => held.has(e.id)),
    partEntries,
  );
}

const LIVE_BATCH_STATUSES = ['preparing', 'testing', 'ready', 'merging', 'reconciling'] as const;
const ENTRY_CHANGES = ['aside', 'remove', 'head'] as const;

/** Which (entry change, status of the batch holding the entry) pairs the sequences reached. */
const changeCoverage = new Set<string>();

class Harness {
  state: MergeQueueState;
  readonly world = new ModelWorld();
  readonly monitor = new InvariantMonitor();
  pending: Delivery[] = [];
  readonly delivered: Ev[] = [];
  readonly revisions: number[] = [];
  now = 0;
  prs = 0;

  constructor(maxParallel: number, maxBatch: number) {
    this.state = createMergeQueueState({
      baseSha: 'base0',
      // CI times on the scale of the ticks (1-40 ms), so runs are seen light and heavy and the
      // restart and speculation rules of ci-weight.ts take part in every sequence.
      config: {
        maxParallel,
        maxBatch,
        checkTimeoutMs: 50,
        historyLimit: 10_000,
        minChainSuccess: 0.1,
        initialCiDurationMs: 12,
      },
    });
  }

  /** Called with every event and its result on the whole state (the window check below). */
  observer?: (prev: MergeQueueState, event: MergeQueueEvent, result: PlannerResult) => void;

  send(event: Ev): void {
    const prev = this.state;
    const result = reduceMergeQueue(prev, { ...event, at: this.now } as MergeQueueEvent);
    this.observer?.(prev, { ...event, at: this.now } as MergeQueueEvent, result);
    const found = this.monitor.observe(prev, result.state, result.operations, result.transitions);
    if (found.length > 0) throw new Error(`${found.join('; ')} after ${JSON.stringify(event)}`);
    if (result.state.revision < prev.revision) throw new Error('revision went down');
    this.state = result.state;
    this.delivered.push(event);
    for (const op of result.operations) this.pending.push({ op });
  }

  entryAt(i: number) {
    const entries = this.state.entries;
    return entries.length === 0 ? undefined : entries[i % entries.length];
  }

  step(act: { kind: string; a: number; b: number }): void {
    const { a, b } = act;
    switch (act.kind) {
      case 'enqueue': {
        const n = ++this.prs;
        if (b < 15) this.world.bad.add(n);
        if (b >= 95) this.world.conflicting.add(n);
        this.send({ type: 'enqueue', entry: { id: `e${n}`, number: n, headSha: `h${n}`, url: 'u', priority: b % 3 } });
        return;
      }
      case 'deliver':
      case 'crash': {
        if (this.pending.length === 0) return;
        const [d] = this.pending.splice(a % this.pending.length, 1);
        if (d.event) return this.send(d.event);
        if (!d.op) return;
        if (act.kind === 'crash') {
          if (b % 2 === 0) this.world.perform(d.op);
          return this.send({ type: 'operationUnknown', operationId: d.op.id });
        }
        // The provider refuses the land for good (a protected branch): nothing moves, the queue holds.
        if (d.op.kind === 'land' && b >= 92) return this.send({ type: 'landRefused', operationId: d.op.id, reason: 'Protected branch update failed' });
        const outcome = this.world.perform(d.op);
        if (d.op.kind === 'startCi' && b < 10) this.send({ type: 'operationStarted', operationId: d.op.id });
        return this.send(outcome);
      }
      case 'ci': {
        const candidates = [...this.world.ciStarted].filter((sha) => !this.world.ciReported.has(sha));
        if (candidates.length === 0) return;
        const sha = candidates[a % candidates.length];
        const verdict = this.world.ciVerdict(sha, b < 8);
        this.world.ciReported.set(sha, verdict);
        const batch = this.state.batches.find((x) => x.candidateSha === sha);
        if (!batch) return;
        return this.send({ type: 'checkReported', batchId: batch.id, candidateSha: sha, name: 'ci', state: verdict });
      }
      case 'replay':
        if (this.delivered.length > 0) this.send(this.delivered[a % this.delivered.length]);
        return;
      case 'head': {
        const e = this.entryAt(a);
        if (e) {
          this.world.conflicting.delete(e.number);
          this.send({ type: 'headUpdated', entryId: e.id, headSha: `${e.headSha}'` });
        }
        return;
      }
      case 'remove': {
        const e = this.entryAt(a);
        if (e) this.send({ type: 'remove', entryId: e.id });
        return;
      }
      case 'aside': {
        const e = this.entryAt(a);
        if (e) this.send({ type: 'setAside', entryId: e.id, setAside: b % 2 === 0 });
        return;
      }
      case 'change': {
        const wanted = LIVE_BATCH_STATUSES[b % LIVE_BATCH_STATUSES.length];
        const change = ENTRY_CHANGES[Math.floor(b / LIVE_BATCH_STATUSES.length) % ENTRY_CHANGES.length];
        const live = this.state.batches.filter((x) => !['landed', 'failed', 'withdrawn'].includes(x.status));
        const inStatus = live.filter((x) => x.status === wanted);
        const pool = inStatus.length > 0 ? inStatus : live;
        if (pool.length === 0) return;
        const batch = pool[a % pool.length];
        const e = this.state.entries.find((x) => x.id === batch.entryIds[a % batch.entryIds.length]);
        if (!e) return;
        changeCoverage.add(`${change}:${batch.status}`);
        if (change === 'aside') return this.send({ type: 'setAside', entryId: e.id, setAside: true });
        if (change === 'remove') return this.send({ type: 'remove', entryId: e.id });
        this.world.conflicting.delete(e.number);
        return this.send({ type: 'headUpdated', entryId: e.id, headSha: `${e.headSha}'` });
      }
      case 'priority': {
        const e = this.entryAt(a);
        if (e) this.send({ type: 'setPriority', entryId: e.id, priority: b < 20 ? 100 : b % 5 });
        return;
      }
      case 'hold': {
        const kinds = ['pause', 'resume', 'disable', 'enable', 'resume', 'quarantined'] as const;
        const kind = kinds[b % kinds.length];
        if (kind === 'quarantined') {
          const op = this.pending.find((p) => p.op)?.op;
          return this.send({ type: 'quarantined', reason: 'failing', ...(op && a % 2 === 0 && { operationId: op.id }) });
        }
        this.send({ type: kind });
        return;
      }
      case 'tick':
        this.now += 1 + (b % 40);
        this.send({ type: 'tick' });
        return;
    }
  }

  /** Lets an obliging executor finish everything; the queue must then come to rest. */
  drain(): void {
    this.send({ type: 'resume' });
    this.send({ type: 'enable' });
    for (const e of this.state.entries) {
      if (e.setAside) this.send({ type: 'setAside', entryId: e.id, setAside: false });
    }
    for (let guard = 0; guard < 20_000; guard++) {
      if (this.pending.length > 0) {
        this.step({ kind: 'deliver', a: 0, b: 50 });
        continue;
      }
      const unreported = [...this.world.ciStarted].some((sha) => !this.world.ciReported.has(sha));
      if (unreported) {
        this.step({ kind: 'ci', a: 0, b: 50 });
        continue;
      }
      const live = this.state.batches.filter((x) => !['landed', 'failed', 'withdrawn'].includes(x.status));
      if (live.length === 0) return;
      this.step({ kind: 'tick', a: 0, b: 39 });
    }
    throw new Error('queue did not come to rest');
  }
}

describe('merge-queue planner properties', () => {
  it('keeps every invariant under random event sequences and always comes to rest', () => {
    let restarts = 0;
    let heavySeen = 0;
    let screensPassed = 0;
    let screensFailed = 0;
    fc.assert(
      fc.property(
        fc.array(action, { minLength: 10, maxLength: 250, size: 'max' }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        (actions, maxParallel, maxBatch) => {
          const h = new Harness(maxParallel, maxBatch);
          for (const act of actions) h.step(act);
          h.drain();
          restarts += h.state.stats.restartedBatches;
          heavySeen += h.state.entries.filter((e) => (e.heavyProbability ?? 0) > 0.5).length;
          const screens = h.state.batches.filter((b) => b.role === 'screen');
          screensPassed += screens.filter((b) => b.failureReason?.startsWith('screen passed')).length;
          screensFailed += screens.filter((b) => b.status === 'failed').length;
          expect(h.world.violations).toEqual([]);
          expect(h.monitor.violations).toEqual([]);
          for (const e of h.state.entries) {
            expect(['merged', 'removed', 'failed', 'blocked']).toContain(e.status);
            if (e.status === 'merged') expect(h.world.bad.has(e.number)).toBe(false);
          }
          for (const n of h.world.landedPrs) {
            expect(h.state.entries.find((e) => e.number === n)?.status).toBe('merged');
          }
        },
      ),
      { numRuns: 300, seed: 20240611 },
    );
    // the sequences did exercise the CI-weight rules, not only the rest of the planner
    expect(restarts).toBeGreaterThan(0);
    expect(heavySeen).toBeGreaterThan(0);
    // and look-ahead screens (screening.ts) ran, passed and failed among them
    expect(screensPassed).toBeGreaterThan(0);
    expect(screensFailed).toBeGreaterThan(0);
    // set-aside, removal and head updates each met every live batch status, merging and
    // reconciling included
    const expected = ENTRY_CHANGES.flatMap((c) => LIVE_BATCH_STATUSES.map((st) => `${c}:${st}`));
    expect(expected.filter((k) => !changeCoverage.has(k))).toEqual([]);
  });

  it('reduces a window of the state (planner/window.ts) exactly as the whole state, whenever windowHolds says so', () => {
    // What the writer does per event: load the window (every entry but the plain waiting ones,
    // the first `size` of those, the entries the event names), reduce it, write what changed. The
    // result must be the whole state's: the same operations and status steps, the same document
    // and batches, the same entries for those it holds, and the entries it left out untouched.
    let truncated = 0;
    let checked = 0;
    let planned = 0;
    let fellBack = 0;
    fc.assert(
      fc.property(longLines, fc.integer({ min: 0, max: 12 }), ([actions, maxParallel, maxBatch], margin) => {
        const h = new Harness(maxParallel, maxBatch);
        // Around the smallest window windowHolds accepts when it holds plain entries only
        // (maxParallel * maxBatch + 1; the store's windowSize is that plus 8): smaller ones
        // hold only when entries with other facts fill the line, and otherwise fall back.
        const size = Math.max(1, maxParallel * maxBatch - 2 + margin);
        h.observer = (prev, event, whole) => {
          if (WHOLE_STATE_EVENTS.includes(event.type)) return;
          const { state: window, edge } = windowOf(prev, size, namedBy([event]));
          if (edge === null) return;
          truncated += 1;
          if (!windowHolds(window, edge)) {
            fellBack += 1;
            return;
          }
          const part = reduceMergeQueue(window, event);
          if (whole.state === prev) {
            same(part.operations, whole.operations);
            same(part.transitions, whole.transitions);
            expect(part.state).toBe(window);
            return;
          }
          checked += 1;
          if (part.operations.some((o) => o.kind === 'prepare')) planned += 1;
          sameOverWindow(part, whole);
          const held = new Set(part.state.entries.map((e) => e.id));
          const wholeEntries = whole.state.entries;
          const before = new Map(prev.entries.map((e) => [e.id, e]));
          for (const e of wholeEntries) if (!held.has(e.id) && e !== before.get(e.id)) same(e, before.get(e.id));
        };
        for (const act of actions) h.step(act);
        h.drain();
      }),
      { numRuns: 60, seed: 20261127 },
    );
    // The sequences did leave entries out of windows, changed and planned over them, and met the fallback.
    expect(truncated).toBeGreaterThan(1000);
    expect(checked).toBeGreaterThan(1000);
    expect(planned).toBeGreaterThan(50);
    expect(fellBack).toBeGreaterThan(0);
  });

  it('gives the commit statuses of the whole state over a window with a front, whenever frontHolds says so', () => {
    // A queue that posts commit statuses loads a front too (the first plain waiting PRs, set aside
    // or not): what commit-statuses.ts posts for an event over that window (places, estimates,
    // every change) must be what it posts over the whole state. A small `shown` makes the front
    // matter in short sequences; the writer uses SHOWN_POSITIONS (20).
    let checked = 0;
    let posted = 0;
    let fellBack = 0;
    let asideInFront = 0;
    fc.assert(
      fc.property(longLines, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 6 }), ([actions, maxParallel, maxBatch], shown, margin) => {
        const h = new Harness(maxParallel, maxBatch);
        const size = maxParallel * maxBatch + 1 + margin;
        h.observer = (prev, event, whole) => {
          if (WHOLE_STATE_EVENTS.includes(event.type)) return;
          const { state: window, edge, frontEdge } = windowOf(prev, size, namedBy([event]), shown + margin);
          if (frontEdge === null || !windowHolds(window, edge)) return;
          const part = reduceMergeQueue(window, event);
          if (!frontHolds(window, edge, frontEdge, shown) || !frontHolds(part.state, edge, frontEdge, shown)) {
            fellBack += 1;
            return;
          }
          // The reducer's result over the larger window is the whole state's too (as in the test above).
          sameOverWindow(part, whole);
          if (whole.state !== prev) checked += 1;
          // A set-aside PR the front loaded (plain, not named by the event).
          const named = namedBy([event]);
          if (window.entries.some((e) => e.setAside && isPlainWaiting(e) && !named.ids.includes(e.id) && !named.numbers.includes(e.number))) asideInFront += 1;
          // The places and the estimates themselves (statuses round estimates to the quarter hour,
          // and the harness's CI takes milliseconds).
          for (const [w, p] of [
            [window, prev],
            [part.state, whole.state],
          ]) {
            same(frontOfLine(w, event.at, shown), frontOfLine(p, event.at, shown));
          }
          const expected = statusChanges(prev, whole.state, event.at, shown);
          posted += expected.length;
          same(statusChanges(window, part.state, event.at, shown), expected);
        };
        for (const act of actions) h.step(act);
        h.drain();
      }),
      { numRuns: 60, seed: 20261128 },
    );
    // The sequences cut fronts, put set-aside PRs in them, posted statuses and met the fallback.
    expect(checked).toBeGreaterThan(10_000);
    expect(posted).toBeGreaterThan(10_000);
    expect(asideInFront).toBeGreaterThan(1000);
    expect(fellBack).toBeGreaterThan(0);
  });

  it('never lets revision decrease and never changes state on a replayed stale event', () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 120, size: 'max' }), (actions) => {
        const h = new Harness(3, 4);
        let last = h.state.revision;
        for (const act of actions) {
          h.step(act);
          expect(h.state.revision).toBeGreaterThanOrEqual(last);
          last = h.state.revision;
        }
        const before = h.state;
        const stale = h.delivered.filter((e) => e.type === 'operationSucceeded');
        for (const e of stale) {
          const replayed = reduceMergeQueue(before, { ...e, at: h.now } as MergeQueueEvent);
          if (replayed.state !== before) {
            // a replay may only matter if its operation is still the batch's current one
            const id = (e as { operationId: string }).operationId;
            const current = before.batches.some((b) => b.operation?.id === id) || before.cleanups.some((c) => c.operationId === id);
            expect(current).toBe(true);
          }
        }
      }),
      { numRuns: 100, seed: 7 },
    );
  });
});
