import { ewma } from './ewma';
import { byPlanningOrder } from './priority';
import { createBatch, type Ctx, entriesOf, isFinalBatch, outcome, setBatchStatus, setEntryStatus } from './step';
import type { BatchState, EntryState, MergeQueueState } from './types';
import { issueCleanup, withdraw } from './withdrawal';

/*
 * Culprit by exclusion (docs/merge-queue.md, "Bisection"). Once a failed group's suspects are few
 * enough to get a runner each, the planner does not probe each suspect alone: it runs, for each
 * suspect x, one candidate on the base holding every PR of the failed group still waiting except
 * x (its suspects, the PRs its probes cleared, and the PRs released from it), in queue order.
 * With exactly one bad PR, the candidate without it is the one that passes: it lands every
 * innocent PR of the group at once, and x, which the group failed with and without which it
 * passed, counts as having failed alone (it loses its place and goes to the back of the line for
 * its solo retry, under the flaky budget). If every candidate fails (two bad PRs, or a spurious
 * failure), the group is probed as before.
 *
 * The candidates share their PRs, so until one passes they hold no entry: their PRs stay queued,
 * reserved for them (`reservedByExclusion`), and a candidate whose PRs changed (removed, set
 * aside, new head, blocked) or whose base moved is withdrawn. The one that passes adopts its PRs
 * and is from then on an ordinary isolation part that passed.
 */

/** A live candidate of culprit by exclusion that has not adopted its PRs (none passed yet). */
export function isUnadoptedExclusion(b: BatchState): boolean {
  return !!b.exclusion && !b.exclusion.adopted && !isFinalBatch(b);
}

/** The PRs that live candidates of culprit by exclusion hold (and leave out): nothing else may plan them. */
export function reservedByExclusion(s: MergeQueueState): Set<string> {
  const out = new Set<string>();
  for (const b of s.batches) {
    if (!isUnadoptedExclusion(b) || !b.exclusion) continue;
    for (const id of b.entryIds) out.add(id);
    out.add(b.exclusion.excludes);
  }
  return out;
}

/**
 * Starts one candidate per suspect of a group whose bisection has nothing else in flight, when
 * `slots` runners cover them all. Returns how many it started; 0 when the group is to be probed
 * as usual, -1 when it is to wait (a part of its bisection is still running, or too few runners
 * are free: the candidates are worth more than a probe round).
 */
export function planExclusion(ctx: Ctx, suspects: readonly EntryState[], slots: number): number {
  const { s } = ctx;
  if (s.config.exclusion === false || suspects.length < 2 || suspects.length > s.config.maxParallel) return 0;
  const tag = suspects[0].bisection;
  if (!tag || suspects.some((e) => e.bisection !== tag || e.exclusionTried)) return 0;
  // Two failing parts of one bisection: two culprits (or a spurious failure), which no single
  // exclusion explains.
  if (s.entries.some((e) => e.bisection === tag && e.suspectGroup !== null && e.suspectGroup !== suspects[0].suspectGroup)) return 0;
  const inFlight = s.batches.filter((b) => !isFinalBatch(b) && b.entryIds.some((id) => ctx.entryById.get(id)?.bisection === tag));
  // A part of the same bisection still running holds PRs that belong in every candidate.
  if (inFlight.some((b) => b.role !== 'part' || b.status !== 'ready' || outcome(ctx, b) !== 'passed')) return EXCLUSION_WAIT;
  if (slots < suspects.length) {
    // Wait for runners only when a running candidate will free one.
    const running = s.batches.some((b) => b.status === 'preparing' || (b.status === 'testing' && outcome(ctx, b) === 'pending'));
    return running ? EXCLUSION_WAIT : 0;
  }
  // Its parts that passed and wait for their turn to land ride in the candidates instead.
  for (const b of inFlight) {
    for (const e of entriesOf(ctx, b)) {
      e.cleared = true;
      e.suspectGroup = null;
    }
    withdraw(ctx, b, 'its PRs ride in the candidates of culprit by exclusion');
  }
  const rest = s.entries.filter((e) => e.bisection === tag && e.status === 'queued' && !e.setAside && e.batchId === null).sort(byPlanningOrder);
  if (suspects.some((x) => !rest.includes(x))) return 0;
  for (const x of suspects) {
    const others = rest.filter((e) => e.id !== x.id);
    const b = createBatch(ctx, 'part', [], null);
    b.entryIds = others.map((e) => e.id);
    b.prNumbers = others.map((e) => e.number);
    b.exclusion = { excludes: x.id, tag, adopted: false };
  }
  return suspects.length;
}

/** planExclusion's answer for a group that waits. */
export const EXCLUSION_WAIT = -1;

/** Whether the candidate's PRs and left-out suspect are still as they were when it was planned. */
function stillValid(ctx: Ctx, b: BatchState, tag: string): boolean {
  const x = b.exclusion ? ctx.entryById.get(b.exclusion.excludes) : undefined;
  const unchanged = (e: EntryState | undefined): boolean =>
    !!e && e.status === 'queued' && !e.setAside && e.batchId === null && e.bisection === tag && e.pendingHeadSha === null && !e.pendingRemoval;
  return unchanged(x) && x?.suspectGroup !== null && b.entryIds.every((id) => unchanged(ctx.entryById.get(id)));
}

/**
 * Applies the result of an unadopted candidate (settleOnce calls it first); returns whether it
 * changed anything.
 */
export function settleExclusion(ctx: Ctx, b: BatchState): boolean {
  const { s } = ctx;
  const ex = b.exclusion;
  if (!ex) return false;
  if (!stillValid(ctx, b, ex.tag)) {
    withdraw(ctx, b, 'culprit by exclusion: the group changed');
    return true;
  }
  if (b.parentId === null && b.baseSha !== s.baseSha) {
    withdraw(ctx, b, 'base moved before it could land');
    return true;
  }
  const result = outcome(ctx, b);
  const x = ctx.entryById.get(ex.excludes);
  if (!x) return false;
  if (result === 'failed') {
    setBatchStatus(ctx, b, 'failed');
    b.operation = null;
    b.failureReason = `culprit by exclusion: the group without #${x.number} failed too`;
    issueCleanup(ctx, b);
    const siblings = s.batches.filter((c) => c !== b && c.exclusion?.tag === ex.tag && !isFinalBatch(c));
    if (siblings.length === 0) {
      // Every candidate failed: two bad PRs, or a spurious failure. The group is probed as before.
      for (const e of s.entries) if (e.bisection === ex.tag && e.status === 'queued') e.exclusionTried = true;
    }
    return true;
  }
  // A passing report makes the batch `ready` at once (checks.ts); either way it is unadopted yet.
  if (result !== 'passed' || (b.status !== 'testing' && b.status !== 'ready')) return false;
  for (const c of s.batches) {
    if (c !== b && c.exclusion?.tag === ex.tag && isUnadoptedExclusion(c)) withdraw(ctx, c, `culprit by exclusion: #${x.number}`);
  }
  failByExclusion(ctx, x, b);
  for (const e of entriesOf(ctx, b)) {
    setEntryStatus(ctx, e, 'testing');
    e.batchId = b.id;
    e.suspectGroup = null;
    e.cleared = true;
  }
  b.exclusion = { ...ex, adopted: true };
  setBatchStatus(ctx, b, 'ready');
  return true;
}

/**
 * The group failed with `x` and passed without it (`by`): `x` failed alone, as far as the order
 * rule and the flaky budget are concerned. It goes to the back of the line for its solo retry,
 * or is `failed` once the budget is spent.
 */
function failByExclusion(ctx: Ctx, x: EntryState, by: BatchState): void {
  const { s } = ctx;
  x.failuresAlone += 1;
  x.cleared = false;
  x.suspectGroup = null;
  x.bisection = null;
  x.excludedBy = by.id;
  if (x.failuresAlone > s.config.flakyRetries) {
    s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 1);
    // queued -> failed is not a step of the table: the verdict goes through testing, as a PR
    // failed by its own probe does.
    setEntryStatus(ctx, x, 'testing');
    setEntryStatus(ctx, x, 'failed');
  } else {
    s.counters.entry += 1;
    x.position = s.counters.entry;
  }
  ctx.changed = true;
}
