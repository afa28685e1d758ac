import { heldOvertakenBy, landKeepsOrder } from './order';
import { batchOutcome, isFinalBatch } from './step';
import { isAllowedTransition, isReachable } from './transitions';
import type { BatchState, EntryState, MergeQueueOperation, MergeQueueState, StatusTransition } from './types';
import { FINAL_ENTRY_STATUSES } from './types';

/** Status a batch or entry has when the reducer creates it (no transition is recorded for that). */
const INITIAL_STATUS = { queue: 'idle', batch: 'preparing', entry: 'queued' } as const;

/**
 * Checks one reducer step. Returns human-readable violations (empty when the step is sound):
 * lands only of candidates that passed every required check on the current base, allowed status
 * transitions only, no entry lost, batch membership consistent, revision monotonic.
 *
 * `transitions` is the reducer's record of the status steps it took (`PlannerResult.transitions`).
 * With it, every status that differs between `prev` and `next` must be explained by a recorded
 * chain of single steps, each in the transition table, starting at the old status and ending at
 * the new one; a status that changed without a recorded chain, or a chain that skips a step, is a
 * violation. Without it (callers that do not pass the record) only the weaker check remains that
 * the new status is reachable from the old one in the table.
 */
export function checkStepInvariants(
  prev: MergeQueueState,
  next: MergeQueueState,
  operations: readonly MergeQueueOperation[],
  transitions?: readonly StatusTransition[],
): string[] {
  const v: string[] = [];
  if (next === prev) {
    if (operations.length > 0) v.push('operations returned without a state change');
    if (transitions && transitions.length > 0) v.push('status transitions recorded without a state change');
    return v;
  }
  if (next.revision !== prev.revision + 1) {
    v.push(`revision ${prev.revision} -> ${next.revision}`);
  }
  const steps = groupSteps(transitions);
  const checkStatus = (subject: StatusTransition['subject'], id: string, from: string | undefined, to: string): void => {
    if (!steps) {
      if (from !== undefined && !isReachable(subject, from, to)) v.push(`${subject} ${id} ${from} -> ${to}`);
      return;
    }
    const chain = steps.get(`${subject}:${id}`) ?? [];
    steps.delete(`${subject}:${id}`);
    const start = from ?? INITIAL_STATUS[subject];
    let at = start;
    for (const step of chain) {
      if (step.from !== at || !isAllowedTransition(subject, step.from, step.to)) {
        v.push(`${subject} ${id} recorded step ${step.from} -> ${step.to} while ${at}`);
      }
      at = step.to;
    }
    if (at !== to) v.push(`${subject} ${id} ${start} -> ${to}`);
  };
  checkStatus('queue', 'queue', prev.status, next.status);
  // A hold (holds.ts) keeps the queue from planning until someone resumes it.
  if (next.hold && (next.status === 'idle' || next.status === 'active')) v.push(`queue holds (${next.hold.kind}) but is ${next.status}`);
  const required = next.config.requiredChecks;
  const nextBatches = new Map(next.batches.map((b) => [b.id, b]));
  const nextEntries = new Map(next.entries.map((e) => [e.id, e]));
  const prevBatches = new Map(prev.batches.map((b) => [b.id, b]));

  for (const op of operations) {
    if (op.kind === 'prepare' || op.kind === 'land') checkCurrentEntries(op, nextBatches, nextEntries, v);
    if (op.kind !== 'land') continue;
    const b = nextBatches.get(op.batchId);
    if (!b) {
      v.push(`land of unknown batch ${op.batchId}`);
      continue;
    }
    if (b.status !== 'merging') v.push(`land issued for ${b.id} in ${b.status}`);
    if (b.candidateSha !== op.candidateSha) v.push(`land of ${b.id} names another candidate`);
    if (batchOutcome(b, required) !== 'passed') v.push(`land of ${b.id} whose checks did not all pass`);
    if (op.expectedBaseSha !== next.baseSha || b.baseSha !== next.baseSha || b.parentId !== null) {
      v.push(`land of ${b.id} whose parent is not the current base`);
    }
    // Queue order (order.ts): no land overtakes a PR a bisection holds, and a probe lands by
    // itself only when no live PR is queued ahead of it.
    if (!landKeepsOrder(next, b)) {
      const held = heldOvertakenBy(next, b).map((e) => `#${e.number}`);
      v.push(`land of ${b.id} overtakes ${held.length ? `held ${held.join(', ')}` : 'PRs queued ahead of its probe'}`);
    }
  }

  for (const b of next.batches) {
    const before = prevBatches.get(b.id);
    checkStatus('batch', b.id, before?.status, b.status);
    if (b.status === 'landed' && before && before.status !== 'landed') {
      // Against the checks its CI ran (the required ones when CI started): a configure event that
      // changes them withdraws every batch except a land already in flight.
      if (batchOutcome(b, b.checks.length ? b.checks.map((c) => c.name) : required) !== 'passed') v.push(`${b.id} landed without passing checks`);
      if (before.status !== 'merging' && before.status !== 'reconciling') {
        v.push(`${b.id} landed from ${before.status}`);
      }
      // A land confirmed by readBack was checked when it was issued; meanwhile another batch's
      // readBack may already have taught the planner the new base.
      if (before.status === 'merging' && b.baseSha !== prev.baseSha) {
        v.push(`${b.id} landed on a parent that was not the base`);
      }
    }
    checkBatchMembership(b, nextEntries, v);
  }

  const holder = new Map<string, string>();
  for (const b of next.batches) {
    // A candidate of culprit by exclusion shares its PRs with its siblings until it passes; it
    // holds none of them (checkBatchMembership checks that they stay queued).
    if (isFinalBatch(b) || (b.exclusion && !b.exclusion.adopted)) continue;
    for (const id of b.entryIds) {
      const other = holder.get(id);
      if (other) v.push(`entry ${id} in live batches ${other} and ${b.id}`);
      holder.set(id, b.id);
    }
  }

  const prevEntries = new Map(prev.entries.map((e) => [e.id, e]));
  for (const e of prev.entries) {
    if (!nextEntries.has(e.id) && !FINAL_ENTRY_STATUSES.includes(e.status)) {
      v.push(`entry ${e.id} lost while ${e.status}`);
    }
  }
  for (const e of next.entries) checkStatus('entry', e.id, prevEntries.get(e.id)?.status, e.status);
  for (const e of next.entries) {
    const before = prevEntries.get(e.id);
    if (before) checkPlaceInLine(before, e, nextBatches, required, v);
  }
  for (const e of next.entries) checkEntry(e, nextBatches, holder, v);
  if (steps) {
    for (const key of steps.keys()) v.push(`status steps recorded for ${key}, which is not in the state`);
  }
  return v;
}

/**
 * A `prepare` or `land` goes out only for PRs as they are now: none set aside, none removed or
 * updated while its batch was sealed (a land already in flight may still finish, but no new one
 * may be issued), and a prepare builds each PR's current head.
 */
function checkCurrentEntries(
  op: Extract<MergeQueueOperation, { kind: 'prepare' | 'land' }>,
  batches: Map<string, BatchState>,
  entries: Map<string, EntryState>,
  v: string[],
): void {
  const batch = batches.get(op.batchId);
  const ids = op.kind === 'prepare' ? op.heads.map((h) => h.entryId) : (batch?.entryIds ?? []);
  for (const id of ids) {
    const e = entries.get(id);
    if (!e) continue;
    if (e.setAside) v.push(`${op.kind} of ${op.batchId} includes #${e.number}, which is set aside`);
    if (e.pendingRemoval) v.push(`${op.kind} of ${op.batchId} includes #${e.number}, which was removed`);
    if (e.pendingHeadSha !== null) v.push(`${op.kind} of ${op.batchId} includes #${e.number}, which has a new head`);
  }
  if (op.kind === 'prepare') {
    for (const h of op.heads) {
      const e = entries.get(h.entryId);
      if (e && e.headSha !== h.headSha) v.push(`prepare of ${op.batchId} builds an old head of #${e.number}`);
    }
  }
}

function groupSteps(transitions: readonly StatusTransition[] | undefined): Map<string, StatusTransition[]> | null {
  if (!transitions) return null;
  const out = new Map<string, StatusTransition[]>();
  for (const t of transitions) {
    const key = `${t.subject}:${t.id}`;
    const list = out.get(key) ?? [];
    list.push(t);
    out.set(key, list);
  }
  return out;
}

/**
 * Queue order (order.ts): a live PR moves back in line only after a CI failure of its own, that is
 * when it failed alone or by exclusion (its failure count grew), or when its solo retry passed
 * (its count went back to 0 as it was cleared). Failed by exclusion (exclusion.ts) is the one
 * exception to "nothing overtakes a PR of a bisected batch": it needs a candidate that passed,
 * holding its group without it.
 */
function checkPlaceInLine(before: EntryState, e: EntryState, batches: Map<string, BatchState>, required: readonly string[], v: string[]): void {
  if (e.excludedBy && e.excludedBy !== before.excludedBy) {
    const by = batches.get(e.excludedBy);
    const proof = by?.exclusion?.excludes === e.id && !by.entryIds.includes(e.id) && batchOutcome(by, required) === 'passed';
    if (!proof) v.push(`#${e.number} failed by exclusion without a passing candidate that left it out`);
    if (e.failuresAlone !== before.failuresAlone + 1 && e.status !== 'failed') v.push(`#${e.number} failed by exclusion without counting a failure`);
  }
  if (e.position === before.position || FINAL_ENTRY_STATUSES.includes(e.status)) return;
  const failed = e.failuresAlone > before.failuresAlone;
  const retryPassed = before.failuresAlone > 0 && e.failuresAlone === 0 && e.cleared;
  if (e.position < before.position || !(failed || retryPassed))
    v.push(`#${e.number} moved in line (${before.position} -> ${e.position}) without a failure of its own`);
}

function checkBatchMembership(b: BatchState, entries: Map<string, EntryState>, v: string[]): void {
  if (new Set(b.entryIds).size !== b.entryIds.length) v.push(`batch ${b.id} repeats an entry`);
  if (b.entryIds.length === 0) v.push(`batch ${b.id} is empty`);
  if (isFinalBatch(b)) return;
  if (b.exclusion && !b.exclusion.adopted) {
    // Until it passes, a candidate of culprit by exclusion only reserves its PRs: none is in a batch.
    // (One that changed meanwhile, removed or blocked say, withdraws it at the next planning pass.)
    if (b.entryIds.includes(b.exclusion.excludes)) v.push(`exclusion candidate ${b.id} holds the PR it leaves out`);
    b.entryIds.forEach((id, i) => {
      const e = entries.get(id);
      if (!e) return v.push(`live batch ${b.id} holds unknown entry ${id}`);
      if (e.number !== b.prNumbers[i]) v.push(`batch ${b.id} prNumbers disagree with entries`);
      if (e.status === 'testing' || e.status === 'merging' || e.batchId !== null)
        v.push(`entry ${id} is ${e.status} in ${e.batchId} while reserved by exclusion candidate ${b.id}`);
    });
    return;
  }
  b.entryIds.forEach((id, i) => {
    const e = entries.get(id);
    if (!e) {
      v.push(`live batch ${b.id} holds unknown entry ${id}`);
      return;
    }
    if (e.number !== b.prNumbers[i]) v.push(`batch ${b.id} prNumbers disagree with entries`);
    if (e.batchId !== b.id) v.push(`entry ${id} in ${b.id} points at ${e.batchId}`);
    const expected = b.status === 'merging' ? ['merging'] : b.status === 'reconciling' ? ['testing', 'merging'] : ['testing'];
    if (!expected.includes(e.status)) v.push(`entry ${id} is ${e.status} inside ${b.status} ${b.id}`);
  });
}

function checkEntry(e: EntryState, batches: Map<string, BatchState>, holder: Map<string, string>, v: string[]): void {
  switch (e.status) {
    case 'queued':
    case 'blocked':
      if (e.batchId !== null) v.push(`${e.status} entry ${e.id} still points at ${e.batchId}`);
      if (holder.has(e.id)) v.push(`${e.status} entry ${e.id} is inside live batch ${holder.get(e.id)}`);
      if (e.status === 'blocked' && !e.block) v.push(`blocked entry ${e.id} has no reason`);
      return;
    case 'testing':
    case 'merging':
      if (!e.batchId || holder.get(e.id) !== e.batchId) v.push(`${e.status} entry ${e.id} not in a live batch`);
      return;
    case 'merged': {
      const b = e.batchId ? batches.get(e.batchId) : undefined;
      if (b && b.status !== 'landed') v.push(`merged entry ${e.id} in ${b.status} batch`);
      return;
    }
    default:
      if (holder.has(e.id)) v.push(`${e.status} entry ${e.id} is inside a live batch`);
  }
}

/**
 * Watches a whole run: every step's invariants plus the ones that need history (a PR never lands
 * twice, an entry id never reappears after it was final).
 */
export class InvariantMonitor {
  private readonly mergedNumbers = new Set<number>();
  private readonly finished = new Set<string>();
  readonly violations: string[] = [];

  /** Pass the reducer's `transitions` so the status steps are checked one by one (see above). */
  observe(prev: MergeQueueState, next: MergeQueueState, operations: readonly MergeQueueOperation[], transitions?: readonly StatusTransition[]): string[] {
    const found = checkStepInvariants(prev, next, operations, transitions);
    const before = new Map(prev.entries.map((e) => [e.id, e.status]));
    for (const e of next.entries) {
      if (e.status === 'merged' && before.get(e.id) !== 'merged') {
        if (this.mergedNumbers.has(e.number)) found.push(`PR #${e.number} landed twice`);
        this.mergedNumbers.add(e.number);
      }
      if (!FINAL_ENTRY_STATUSES.includes(e.status) && this.finished.has(e.id)) {
        found.push(`entry ${e.id} came back after it was final`);
      }
      if (FINAL_ENTRY_STATUSES.includes(e.status)) this.finished.add(e.id);
    }
    this.violations.push(...found);
    return found;
  }
}
