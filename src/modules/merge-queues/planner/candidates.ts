import { holdsRunner } from './chain';
import { applyEarlyChecks } from './checks';
import { type Ctx, entriesOf, issue, liveAncestors, nextId, setBatchStatus, setEntryStatus } from './step';
import type { BatchState } from './types';
import { resetEvidence, withdraw } from './withdrawal';

/*
 * Building a candidate: each batch in `preparing` goes prepare -> publish -> startCi, one
 * operation at a time. A batch built on another waits until the candidate ahead exists. A merge
 * conflict while preparing blocks the conflicting entry with a readable reason and withdraws the
 * batch (it never ran CI), so its other PRs are planned again at once.
 */

/** Issues the next operation of every preparing batch that has none in flight. */
export function advanceCandidates(ctx: Ctx): void {
  const { s } = ctx;
  let inUse = s.batches.filter((b) => holdsRunner(b, s.config.requiredChecks) && !unstarted(b)).length;
  for (const b of s.batches) {
    if (b.status !== 'preparing' || b.operation !== null) continue;
    if (b.candidateSha === null) {
      // Parts of an early bisection may outnumber the free runners (bisection.ts
      // bisectFailedTip): a batch starts only while fewer than maxParallel started ones hold a runner.
      if (inUse >= s.config.maxParallel) continue;
      if (b.parentId === null) {
        if (b.baseSha !== s.baseSha) continue;
      } else {
        const parent = ctx.batchById.get(b.parentId);
        if (!parent || parent.candidateSha === null) continue;
        b.baseSha = parent.candidateSha;
      }
      if (b.baseSha === null) continue;
      inUse += 1;
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
      applyEarlyChecks(ctx, b);
    }
  }
}

/** A batch created but not yet building its candidate: it will hold a runner once it starts. */
function unstarted(b: BatchState): boolean {
  return b.status === 'preparing' && b.operation === null && b.candidateSha === null;
}

/** `prepare` succeeded: the candidate exists (a success without a candidate withdraws the batch). */
export function candidatePrepared(ctx: Ctx, b: BatchState, candidateSha: string | undefined): void {
  if (!candidateSha) return withdraw(ctx, b, 'prepare reported no candidate');
  b.candidateSha = candidateSha;
}

/** `prepare` failed on a merge conflict: the conflicting entry waits for a new head. */
export function blockConflictingEntry(ctx: Ctx, b: BatchState, entryId: string, reason: string): void {
  const e = ctx.entryById.get(entryId);
  if (e && e.batchId === b.id && e.status === 'testing') {
    e.batchId = null;
    e.block = `Merge conflict while building candidate ${b.id}: ${reason}`;
    resetEvidence(e);
    setEntryStatus(ctx, e, 'blocked');
  }
}
