import { ewma, mayExtendChain, nextBatchSize } from './batch-depth';
import { type CiDurationModel, expectedCiMs, expectedRemainingMs } from './ci-weight';
import type { BatchState, EntryState } from './merge-queue.types';
import { durationModel, heavyProbabilities } from './planner-ci-weight';
import {
  childrenOf,
  createBatch,
  type Ctx,
  entriesOf,
  isFinalBatch,
  isSealed,
  issue,
  issueCleanup,
  LIVE_ENTRY,
  nextId,
  outcome,
  releaseEntry,
  setBatchStatus,
  setEntryStatus,
  withdraw,
} from './planner-context';

// ---------------------------------------------------------------------------------------------
// Planning, run by maintain(): settle outcomes (blame, clear), land, plan new batches and
// isolation probes, move batches through their operations; and pruning of old history.

/** One consequence at a time, so each step sees the state the previous one left. */
export function settleOnce(ctx: Ctx): boolean {
  const { s } = ctx;
  for (const b of s.batches) {
    if (isFinalBatch(b) || isSealed(b)) continue;
    const root = b.parentId === null;
    const stale = root && b.baseSha !== s.baseSha;
    const result = outcome(ctx, b);
    if (stale) {
      if (b.role === 'part' && b.status === 'testing' && result === 'pending') continue;
      if (b.role === 'part' && result === 'failed') {
        blame(ctx, b);
        return true;
      }
      if (b.role === 'part' && result === 'passed') clearAndWithdraw(ctx, b, 'base moved before it could land');
      else withdraw(ctx, b, 'base moved before it could land');
      return true;
    }
    if (result === 'failed') {
      const children = childrenOf(ctx, b);
      for (const child of children) withdraw(ctx, child, `built on failing ${b.id}`);
      if (root) {
        blame(ctx, b);
        return true;
      }
      if (children.length > 0) return true;
    }
    if (result === 'passed' && b.status === 'testing') {
      setBatchStatus(ctx, b, 'ready');
      return true;
    }
    if (result === 'passed' && b.role === 'part' && s.batches.some((c) => c.role === 'chain' && !isFinalBatch(c))) {
      clearAndWithdraw(ctx, b, 'probe passed while the chain was landing');
      return true;
    }
  }
  return false;
}

function clearAndWithdraw(ctx: Ctx, b: BatchState, reason: string): void {
  for (const e of entriesOf(ctx, b)) {
    e.cleared = true;
    e.suspectGroup = null;
    // It passed on the base: its earlier solo failures were spurious.
    e.failuresAlone = 0;
  }
  withdraw(ctx, b, reason);
}

/**
 * A failed candidate built directly on the base: its own PRs are to blame. A single PR is retried
 * alone until the flaky budget is spent, then `failed`; a larger batch becomes a suspect group
 * that the planner bisects into parts.
 */
function blame(ctx: Ctx, b: BatchState): void {
  const { s } = ctx;
  setBatchStatus(ctx, b, 'failed');
  b.operation = null;
  s.stats.failedBatches += 1;
  if (b.role === 'chain') s.stats.batchFailureRate = ewma(s.stats.batchFailureRate, 0.1, 1);
  const entries = entriesOf(ctx, b).filter((e) => e.batchId === b.id && e.status === 'testing');
  if (b.role === 'part') releaseSiblingSuspects(ctx, entries);
  if (entries.length === 1) {
    const e = entries[0];
    e.failuresAlone += 1;
    e.cleared = false;
    e.suspectGroup = null;
    if (e.failuresAlone > s.config.flakyRetries) {
      s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 1);
      releaseEntry(ctx, e, 'failed');
    } else {
      releaseEntry(ctx, e, 'queued');
    }
  } else {
    const group = nextId(ctx, 'group');
    for (const e of entries) {
      e.suspectGroup = group;
      e.cleared = false;
      releaseEntry(ctx, e, 'queued');
    }
  }
  issueCleanup(ctx, b);
}

/**
 * A failing part has located a culprit of its group: the group's PRs not yet probed are no more
 * suspect than any other PR and go back to the chain instead of being probed one by one.
 */
function releaseSiblingSuspects(ctx: Ctx, failing: EntryState[]): void {
  const groups = new Set(failing.map((e) => e.suspectGroup).filter((g): g is string => g !== null));
  if (groups.size === 0) return;
  for (const e of ctx.s.entries) {
    if (e.status === 'queued' && e.suspectGroup !== null && groups.has(e.suspectGroup)) {
      e.suspectGroup = null;
      ctx.changed = true;
    }
  }
}

export function land(ctx: Ctx): void {
  const { s } = ctx;
  if (s.batches.some((b) => b.status === 'merging' || b.status === 'reconciling')) return;
  const landable = (b: BatchState) =>
    b.status === 'ready' &&
    b.parentId === null &&
    b.baseSha === s.baseSha &&
    b.candidateSha !== null &&
    outcome(ctx, b) === 'passed';
  const chainLive = s.batches.some((b) => b.role === 'chain' && !isFinalBatch(b));
  const next = chainLive
    ? s.batches.find((b) => b.role === 'chain' && landable(b))
    : s.batches.find((b) => landable(b));
  if (!next || next.candidateSha === null) return;
  setBatchStatus(ctx, next, 'merging');
  for (const e of entriesOf(ctx, next)) setEntryStatus(ctx, e, 'merging');
  issue(ctx, next, {
    id: nextId(ctx, 'operation'),
    kind: 'land',
    batchId: next.id,
    candidateSha: next.candidateSha,
    expectedBaseSha: s.baseSha,
    prNumbers: [...next.prNumbers],
  });
}

function holdsRunner(ctx: Ctx, b: BatchState): boolean {
  if (b.status === 'preparing') return true;
  if (b.status === 'testing') return outcome(ctx, b) === 'pending';
  return b.status === 'reconciling' && b.interruptedKind !== 'land' && outcome(ctx, b) === 'pending';
}

function byPlanningOrder(a: EntryState, b: EntryState): number {
  return b.priority - a.priority || a.position - b.position;
}

interface IsolationUnit {
  entries: EntryState[];
  group: boolean;
}

export function planNewBatches(ctx: Ctx): void {
  const { s } = ctx;
  const live = s.batches.filter((b) => !isFinalBatch(b));
  let free = s.config.maxParallel - live.filter((b) => holdsRunner(ctx, b)).length;
  if (free <= 0) return;
  const waiting = s.entries.filter((e) => e.status === 'queued' && !e.setAside).sort(byPlanningOrder);
  if (waiting.length === 0) return;

  const units: IsolationUnit[] = [];
  const groups = new Map<string, IsolationUnit>();
  for (const e of waiting) {
    if (e.suspectGroup !== null) {
      let unit = groups.get(e.suspectGroup);
      if (!unit) {
        unit = { entries: [], group: true };
        groups.set(e.suspectGroup, unit);
        units.push(unit);
      }
      unit.entries.push(e);
    } else if (e.failuresAlone > 0 && !e.cleared) {
      units.push({ entries: [e], group: false });
    }
  }
  const normal = waiting.filter((e) => e.suspectGroup === null && !(e.failuresAlone > 0 && !e.cleared));
  if (units.length > 0) {
    // Probes get the runners they need when nothing else waits, otherwise at most a share of
    // them, so the chain keeps landing while a failed batch is being bisected.
    const probing = live.filter((b) => b.role === 'part' && holdsRunner(ctx, b)).length;
    const cap = Math.max(1, Math.round(s.config.maxParallel * s.config.probeShare));
    const budget = normal.length === 0 ? free : Math.max(0, cap - probing);
    free -= planIsolation(ctx, units, Math.min(free, budget));
  }
  if (live.some((b) => b.role === 'part' && b.status === 'merging')) return;
  const root = live.find((b) => b.role === 'chain' && b.parentId === null && b.baseSha === s.baseSha);
  let tip: BatchState | null = null;
  let chainLength = 0;
  for (let cursor = root ?? null; cursor; ) {
    tip = cursor;
    chainLength += 1;
    // A failed candidate behind one still testing cannot land whoever is to blame: the chain
    // continues on its parent without it, as Zuul's dependent pipeline does.
    const kids = childrenOf(ctx, cursor).filter((c) => outcome(ctx, c) !== 'failed');
    cursor = kids.length > 0 ? kids[0] : null;
  }
  let queue = normal;
  while (free > 0 && queue.length > 0) {
    if (tip && outcome(ctx, tip) === 'failed') break;
    if (!mayExtendChain(chainLength, s.stats.batchFailureRate, s.config)) break;
    let size = nextBatchSize(queue.length, free, s.batchDepth, s.config.minBatch);
    let cleared = 0;
    while (cleared < queue.length && queue[cleared].cleared) cleared += 1;
    size = Math.max(size, Math.min(cleared, s.config.maxBatch));
    const taken = queue.slice(0, size);
    if (tip && !speculationPays(ctx, tip, taken)) break;
    queue = queue.slice(size);
    tip = createBatch(ctx, 'chain', taken, tip);
    chainLength += 1;
    free -= 1;
  }
}

/**
 * Whether stacking `taken` on the chain ending at `tip` is expected to land it sooner than waiting
 * for the chain to land and testing it on the new base. A candidate on the chain runs the tests of
 * every unlanded PR ahead, so behind a heavy PR it is heavy too; then waiting is often sooner
 * (and frees the runner). Estimates come from the learned CI weights (ci-weight.ts).
 */
function speculationPays(ctx: Ctx, tip: BatchState, taken: readonly EntryState[]): boolean {
  const model = durationModel(ctx);
  let chainLand = ctx.at;
  const held: string[] = [];
  for (const b of [...liveAncestors(ctx, tip), tip]) {
    held.push(...b.entryIds);
    chainLand = Math.max(chainLand, ctx.at + expectedWaitUntilPassed(ctx, b, held, model));
  }
  const own = taken.map((e) => e.heavyProbability);
  const stacked = Math.max(chainLand, ctx.at + expectedCiMs([...heavyProbabilities(ctx, held), ...own], model));
  const waited = chainLand + expectedCiMs(own, model);
  // Stacking keeps a runner busy and can be undone (restartRunsOfLandedWork), so it wins ties.
  return stacked <= waited + ctx.s.config.speculationTolerance * model.lightCiMs;
}

/** Expected time from now until batch `b` (whose candidate holds `held`) has passed. */
function expectedWaitUntilPassed(ctx: Ctx, b: BatchState, held: readonly string[], model: CiDurationModel): number {
  const result = outcome(ctx, b);
  if (result === 'passed' || b.status === 'ready' || b.status === 'merging') return 0;
  if (b.status === 'testing' && b.ciStartedAt !== null && result === 'pending') {
    const running = heavyProbabilities(ctx, b.ciContentIds);
    return expectedRemainingMs(ctx.at, b.ciStartedAt, running, model);
  }
  return expectedCiMs(heavyProbabilities(ctx, held), model);
}

/**
 * Isolation: suspect groups are split into parts tested side by side on the base, using free
 * runners (n-ary bisection); single PRs that failed alone are retried alone. Parts are probes: a
 * passing part clears its PRs, which then ride in the next chain batch; it lands by itself only
 * when no chain batch is live, so probing never invalidates the chain. Returns the parts created.
 */
function planIsolation(ctx: Ctx, units: IsolationUnit[], free: number): number {
  let created = 0;
  const budget: number[] = units.map(() => 0);
  let left = free;
  for (let i = 0; i < units.length && left > 0; i++) {
    budget[i] = 1;
    left -= 1;
  }
  let progress = true;
  while (left > 0 && progress) {
    progress = false;
    for (let i = 0; i < units.length && left > 0; i++) {
      if (units[i].group && budget[i] > 0 && budget[i] < units[i].entries.length) {
        budget[i] += 1;
        left -= 1;
        progress = true;
      }
    }
  }
  units.forEach((unit, i) => {
    const slots = budget[i];
    if (slots === 0) return;
    if (!unit.group || unit.entries.length === 1) {
      createBatch(ctx, 'part', unit.entries, null);
      created += 1;
      return;
    }
    // Always split in at least two, so a part never repeats the failed candidate; with one slot
    // only the first half starts now and the rest waits as a smaller suspect group.
    const parts = Math.max(2, slots);
    const chunks = splitEvenly(unit.entries, Math.min(parts, unit.entries.length));
    for (const chunk of chunks.slice(0, slots)) {
      createBatch(ctx, 'part', chunk, null);
      created += 1;
    }
  });
  return created;
}

function splitEvenly<T>(items: T[], parts: number): T[][] {
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < parts; i++) {
    const size = Math.floor(items.length / parts) + (i < items.length % parts ? 1 : 0);
    out.push(items.slice(start, start + size));
    start += size;
  }
  return out.filter((c) => c.length > 0);
}

/** Moves each live batch one step through prepare -> publish -> startCi. */
export function advanceOperations(ctx: Ctx): void {
  const { s } = ctx;
  for (const b of s.batches) {
    if (b.status !== 'preparing' || b.operation !== null) continue;
    if (b.candidateSha === null) {
      if (b.parentId === null) {
        if (b.baseSha !== s.baseSha) continue;
      } else {
        const parent = ctx.batchById.get(b.parentId);
        if (!parent || parent.candidateSha === null) continue;
        b.baseSha = parent.candidateSha;
      }
      if (b.baseSha === null) continue;
      issue(ctx, b, {
        id: nextId(ctx, 'operation'),
        kind: 'prepare',
        batchId: b.id,
        baseSha: b.baseSha,
        heads: entriesOf(ctx, b).map((e) => ({ entryId: e.id, number: e.number, headSha: e.headSha })),
      });
    } else if (!b.published) {
      issue(ctx, b, {
        id: nextId(ctx, 'operation'),
        kind: 'publish',
        batchId: b.id,
        candidateSha: b.candidateSha,
      });
    } else {
      b.checks = s.config.requiredChecks.map((name) => ({ name, state: 'pending' as const }));
      b.ciStartedAt = ctx.at;
      b.ciContentIds = [...liveAncestors(ctx, b).flatMap((a) => a.entryIds), ...b.entryIds];
      b.ciSeenHeavy = false;
      setBatchStatus(ctx, b, 'testing');
      issue(ctx, b, {
        id: nextId(ctx, 'operation'),
        kind: 'startCi',
        batchId: b.id,
        candidateSha: b.candidateSha,
        requiredChecks: [...s.config.requiredChecks],
      });
    }
  }
}

/** The unlanded batches `b` is built on, nearest the base first. */
function liveAncestors(ctx: Ctx, b: BatchState): BatchState[] {
  const out: BatchState[] = [];
  for (let id = b.parentId; id !== null; ) {
    const parent = ctx.batchById.get(id);
    if (!parent || parent.status === 'landed') break;
    out.unshift(parent);
    id = parent.parentId;
  }
  return out;
}

/** Drops the oldest final entries and batches beyond `historyLimit`; live ones are never dropped. */
export function prune(ctx: Ctx): void {
  const { s } = ctx;
  const limit = s.config.historyLimit;
  const finalEntries = s.entries.filter((e) => !LIVE_ENTRY.includes(e.status)).length;
  if (finalEntries > limit) {
    let drop = finalEntries - limit;
    s.entries = s.entries.filter((e) => {
      if (drop > 0 && !LIVE_ENTRY.includes(e.status)) {
        drop -= 1;
        return false;
      }
      return true;
    });
  }
  const finalBatches = s.batches.filter(isFinalBatch).length;
  if (finalBatches > limit) {
    let drop = finalBatches - limit;
    const referenced = new Set(s.entries.map((e) => e.batchId));
    s.batches = s.batches.filter((b) => {
      if (drop > 0 && isFinalBatch(b) && !referenced.has(b.id)) {
        drop -= 1;
        return false;
      }
      return true;
    });
  }
}
