import { noteScreenSoloFailure } from './posterior';
import { holdsRunner } from './runners';
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
    const half = Math.ceil(g.length / 2);
    pools.push(g.slice(0, half));
    if (g.length > 1 && pools.length < free) pools.push(g.slice(half));
  }
  const size = Math.max(1, s.config.screenPoolSize > 0 ? Math.min(s.config.screenPoolSize, s.config.maxBatch) : s.batchDepth);
  const fresh = waiting.filter((e) => !isScreened(e) && !e.screenGroup && e.suspectGroup === null && e.failuresAlone === 0);
  for (let i = 0; pools.length < free && i < fresh.length; i += size) pools.push(fresh.slice(i, i + size));
  return pools;
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
    noteScreenSoloFailure(ctx, e, b);
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
