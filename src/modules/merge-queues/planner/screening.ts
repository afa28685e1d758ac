import { holdsRunner } from './chain';
import { durationModel, expectedCiMs } from './ci-weight';
import { byPlanningOrder } from './priority';
import { addBatch, type Ctx, entriesOf, isSealed, liveBatches, nextId, outcome, setBatchStatus } from './step';
import type { BatchState, EntryState, MergeQueueState } from './types';
import { issueCleanup, withdraw } from './withdrawal';

/*
 * Look-ahead screening. Runners that neither the chain nor the probes can use (the chain is held
 * behind a bisection barrier, the speculation depth stops it, ...) run *screens*: the base plus a
 * pool of waiting PRs that are in no batch, the next ones in planning order. A screen only informs:
 * it never lands, never holds order and never changes an entry's status (its PRs stay `queued`
 * and the chain may take them at any time). It is an ordinary CI run.
 *
 * - A passing screen marks its PRs `screened`: they get a much lower failure prior
 *   (`screenedFailureRate`), so chain batches of screened PRs are sized and stacked as batches
 *   that rarely fail (chain.ts).
 * - A failing screen of several PRs makes its waiting PRs a screening suspect group
 *   (`screenGroup`), split in two by the next screens; a failing part releases its siblings.
 * - A PR that fails alone in a screen has failed alone on the base: it loses its place (back of
 *   the line) and gets its solo retry under the flaky budget, as after a failed probe.
 * - Screens take only spare runners: the chain and probes plan as if screens did not exist, and
 *   the youngest screens are cancelled when they need the runner.
 * - A new head resets what a screen taught (withdrawal.ts resetEvidence).
 */

/** A PR whose current head passed on the base (a screen, or a probe that cleared it). */
export function isScreened(e: EntryState): boolean {
  return e.screened === true || e.cleared;
}

/** The planner's prior that `e` makes a chain candidate fail. */
export function failureProbability(s: MergeQueueState, e: EntryState): number {
  if (isScreened(e)) return s.config.screenedFailureRate;
  return s.stats.failureRate;
}

/** The entries of screen `b` still waiting in no batch (what its result can still act on). */
function waitingOf(ctx: Ctx, b: BatchState): EntryState[] {
  return entriesOf(ctx, b).filter((e) => e.screenId === b.id && e.status === 'queued' && e.batchId === null && !e.setAside);
}

/**
 * After the chain and the probes have planned: cancel the youngest screens while more batches
 * hold runners than `maxParallel`, drop screens whose PRs all left the waiting line, and start
 * screens on the runners still free.
 */
export function planScreens(ctx: Ctx): void {
  const { s } = ctx;
  const required = s.config.requiredChecks;
  for (const b of liveBatches(ctx)) {
    if (b.role === 'screen' && !isSealed(b) && waitingOf(ctx, b).length === 0) withdraw(ctx, b, 'screen: its PRs left the waiting line');
  }
  let used = liveBatches(ctx).filter((b) => holdsRunner(b, required)).length;
  const preemptable = liveBatches(ctx)
    .filter((b) => b.role === 'screen' && !isSealed(b) && holdsRunner(b, required))
    .sort((a, b) => b.position - a.position);
  for (const b of preemptable) {
    if (used <= s.config.maxParallel) break;
    withdraw(ctx, b, 'screen cancelled: the chain or a probe needs its runner');
    used -= 1;
  }
  if (!s.config.screening || used >= s.config.maxParallel) return;
  for (const pool of nextPools(ctx, s.config.maxParallel - used)) createScreen(ctx, pool);
}

/**
 * The next pools to screen, at most `free`: first the halves of each screening suspect group,
 * then fresh pools of the waiting PRs never screened, in planning order, each of the pool size.
 * Screens are bound by no queue order, so they are composed by heaviness (ci-weight.ts): a run is
 * heavy when it holds one heavy PR, so likely-heavy PRs are screened together and the others run
 * light. A suspect group is split with its heaviest PRs in the first half; fresh likely-heavy PRs
 * (`screenHeavyThreshold`) make pools of their own.
 */
function nextPools(ctx: Ctx, free: number): EntryState[][] {
  const { s } = ctx;
  const waiting = s.entries.filter((e) => e.status === 'queued' && !e.setAside && e.batchId === null && !e.screenId && !e.screenBlocked).sort(byPlanningOrder);
  const pools: EntryState[][] = [];
  const groups = new Map<string, EntryState[]>();
  for (const e of waiting) {
    if (!e.screenGroup) continue;
    const g = groups.get(e.screenGroup) ?? [];
    g.push(e);
    groups.set(e.screenGroup, g);
  }
  for (const g of groups.values()) {
    if (pools.length >= free) return pools;
    const [first, second] = splitByWeight(ctx, g);
    pools.push(first);
    if (second.length > 0 && pools.length < free) pools.push(second);
  }
  const fresh = waiting.filter((e) => !isScreened(e) && !e.screenGroup && e.suspectGroup === null && e.failuresAlone === 0);
  const heavy = fresh.filter((e) => likelyHeavy(ctx, e));
  const light = fresh.filter((e) => !likelyHeavy(ctx, e));
  const fresher: EntryState[][] = [];
  for (const line of [light, heavy]) {
    for (let i = 0, n = 0; n < free - pools.length && i < line.length; n++) {
      const size = poolSize(ctx, line.slice(i));
      fresher.push(line.slice(i, i + size));
      i += size;
    }
  }
  const first = (pool: EntryState[]) => fresh.indexOf(pool[0]);
  pools.push(...fresher.sort((a, b) => first(a) - first(b)).slice(0, free - pools.length));
  return pools;
}

/** The learned (or prior) probability that `e` makes a run heavy. */
function heavyOf(ctx: Ctx, e: EntryState): number {
  return e.heavyProbability ?? ctx.s.stats.heavyRate;
}

function likelyHeavy(ctx: Ctx, e: EntryState): boolean {
  return heavyOf(ctx, e) >= ctx.s.config.screenHeavyThreshold;
}

/**
 * Halves of a suspect group (in planning order within each half). When it holds a likely-heavy
 * PR the heaviest PRs go to the first half, so the second runs light; otherwise the halves follow
 * planning order (the chain takes PRs in that order).
 */
export function splitByWeight(ctx: Ctx, group: readonly EntryState[]): [EntryState[], EntryState[]] {
  const half = Math.ceil(group.length / 2);
  if (!group.some((e) => likelyHeavy(ctx, e))) return [group.slice(0, half), group.slice(half)];
  const heaviest = new Set([...group].sort((a, b) => heavyOf(ctx, b) - heavyOf(ctx, a)).slice(0, half));
  return [group.filter((e) => heaviest.has(e)), group.filter((e) => !heaviest.has(e))];
}

/**
 * PRs in the next fresh pool taken from the front of `line`: `screenPoolSize`, the batch depth, or
 * (`screenPoolByInformation`) the size with the most expected information per expected runner-minute.
 */
function poolSize(ctx: Ctx, line: readonly EntryState[]): number {
  const { config, batchDepth } = ctx.s;
  const cap = Math.max(1, Math.min(line.length, config.maxBatch));
  if (config.screenPoolSize > 0) return Math.min(config.screenPoolSize, cap);
  if (!config.screenPoolByInformation) return Math.max(1, Math.min(batchDepth, config.maxBatch));
  const model = durationModel(ctx);
  const weights: (number | null)[] = [];
  let best = 1;
  let bestRate = -1;
  let pass = 1;
  for (let n = 1; n <= cap; n++) {
    pass *= 1 - Math.min(0.999, Math.max(1e-6, failureProbability(ctx.s, line[n - 1])));
    weights.push(line[n - 1].heavyProbability);
    const rate = binaryEntropy(1 - pass) / expectedCiMs(weights, model);
    if (rate > bestRate) {
      best = n;
      bestRate = rate;
    }
  }
  return best;
}

/** Entropy in bits of an event of probability `p`. */
export function binaryEntropy(p: number): number {
  if (p <= 0 || p >= 1) return 0;
  return -(p * Math.log2(p) + (1 - p) * Math.log2(1 - p));
}

/** A screen on the base holding `pool`; the PRs stay queued and point at it through `screenId`. */
function createScreen(ctx: Ctx, pool: EntryState[]): BatchState {
  const b = addBatch(ctx, 'screen', pool, null);
  for (const e of pool) e.screenId = b.id;
  return b;
}

/**
 * A screen's result (settleOnce): a pass marks its PRs screened, a failure makes its waiting PRs a
 * suspect group or, for a screen of one PR, counts as a failure alone. Returns whether it acted.
 * A screen on a base that has moved still answers for its PRs: its base passed CI and landed.
 */
export function settleScreen(ctx: Ctx, b: BatchState): boolean {
  const result = outcome(ctx, b);
  if (result === 'pending') return false;
  const own = entriesOf(ctx, b).filter((e) => e.screenId === b.id);
  if (result === 'passed') {
    for (const e of own) {
      if (e.status !== 'queued' && e.status !== 'testing') continue;
      e.screened = true;
      e.screenGroup = null;
    }
    withdraw(ctx, b, 'screen passed: its PRs are screened');
    return true;
  }
  const waiting = waitingOf(ctx, b);
  // The culprit of a suspect group is in this pool: the group's other PRs are released.
  const groups = new Set(own.map((e) => e.screenGroup).filter((g): g is string => !!g));
  for (const e of ctx.s.entries) {
    if (e.screenGroup && groups.has(e.screenGroup) && !b.entryIds.includes(e.id)) e.screenGroup = null;
  }
  if (b.entryIds.length === 1 && waiting.length === 1) {
    // Failed alone on the base: it loses its place and is retried alone (a probe) under the
    // flaky budget, as after a failed probe (blame.ts).
    const e = waiting[0];
    e.failuresAlone += 1;
    e.screenGroup = null;
    e.screened = false;
    ctx.s.counters.entry += 1;
    e.position = ctx.s.counters.entry;
  } else if (waiting.length > 0) {
    const group = nextId(ctx, 'group');
    for (const e of waiting) {
      e.screenGroup = group;
      e.screened = false;
    }
  }
  for (const e of own) {
    e.screenId = null;
    if (!waiting.includes(e)) e.screenGroup = null;
  }
  setBatchStatus(ctx, b, 'failed');
  b.operation = null;
  b.failureReason = b.failureReason ?? 'screen failed';
  issueCleanup(ctx, b);
  return true;
}
