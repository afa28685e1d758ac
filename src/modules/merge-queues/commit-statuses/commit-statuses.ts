import { estimateMergeTimes, type BatchState, type EntryState, liveLine, type MergeQueueState, windowSize } from '../planner';

/** GitHub's commit status states, and its limit on a description. */
export type CommitState = 'pending' | 'success' | 'failure' | 'error';
export const DESCRIPTION_MAX = 140;
/**
 * A queued PR's status names its position (and the expected merge time) only at the front of the
 * line, the first this many live PRs; behind them the text is the same whatever the position, so
 * a PR arriving or landing re-posts at most this many statuses, not one per queued PR (GitHub
 * limits content-creating requests to about 80 a minute).
 */
export const SHOWN_POSITIONS = 20;
/**
 * The expected merge time a status shows is rounded up to this step, and a status is re-posted when
 * the rounded time changes: an estimate that drifts is corrected, one that merely wobbles is not
 * re-posted (GitHub keeps at most 1000 statuses per commit and context).
 */
export const ETA_STEP_MS = 15 * 60 * 1000;

/**
 * How many plain waiting PRs an event loads for the statuses of a queue (planner/window.ts
 * frontHolds): the places shown and a margin for the PRs one request can take out of the line ahead
 * of them (the planner's window size); when an event takes out more, the whole state is reduced.
 */
export function statusFront(state: Pick<MergeQueueState, 'config'>): number {
  return SHOWN_POSITIONS + windowSize(state.config);
}

/** One commit status to post: on a PR's head commit or on a candidate commit. */
export interface CommitStatus {
  sha: string;
  state: CommitState;
  description: string;
  subject: { kind: 'entry'; number: number } | { kind: 'candidate'; batchId: string };
}

/**
 * What a person sees on the PR while the merge queue has it, one status per change (pure):
 *
 * | entry      | state   | description                                                   | link     |
 * |------------|---------|---------------------------------------------------------------|----------|
 * | queued     | pending | Queued: position 2, merge expected by 14:15 UTC                | queue    |
 * | (behind)   | pending | Queued: 20 or more PRs ahead                                   | queue    |
 * | testing    | pending | Testing with #7, #8 (batch b3)                                 | CI run   |
 * | merging    | pending | Landing on the base                                            | CI run   |
 * | merged     | success | Merged by the merge queue                                      | queue    |
 * | failed     | failure | Failed: <the batch's reason>                                   | CI run   |
 * | blocked    | error   | Blocked: <why>                                                 | queue    |
 * | removed    | error   | Removed from the merge queue (with a reason: Removed: <reason>) | queue    |
 *
 * and on a candidate commit: testing `pending` (Merge queue candidate for #7, #8), landed
 * `success`, failed `failure` with the reason, withdrawn `error` with the reason. The position
 * counts the live PRs (those in batches first, then the waiting ones in planning order); only the
 * first SHOWN_POSITIONS get it, so the statuses a change posts do not grow with the line.
 */
export function statusChanges(before: MergeQueueState, after: MergeQueueState, now = Date.now(), shown = SHOWN_POSITIONS): CommitStatus[] {
  const out: CommitStatus[] = [];
  const front = { before: frontOfLine(before, now, shown), after: frontOfLine(after, now, shown) };
  const was = new Map(before.entries.map((e) => [e.id, rendered(before, e, front.before)]));
  for (const e of after.entries) {
    const status = rendered(after, e, front.after);
    const previous = was.get(e.id);
    if (status && (!previous || previous.sha !== status.sha || previous.state !== status.state || previous.description !== status.description))
      out.push(status);
  }
  const batchesBefore = new Map(before.batches.map((b) => [b.id, b]));
  for (const b of after.batches) {
    const prev = batchesBefore.get(b.id);
    if (b.candidateSha === null || (prev && prev.status === b.status && prev.candidateSha === b.candidateSha)) continue;
    const status = candidateStatus(b);
    if (status) out.push(status);
  }
  return out;
}

/**
 * The status `subject` shows now on commit `sha` (the repair of a post the provider refused every
 * time): the latest entry of that PR with that head, or that batch's candidate; undefined when the
 * state no longer holds it (its history dropped it) or the head moved on (the new one has its own).
 */
export function currentStatus(
  state: MergeQueueState,
  subject: CommitStatus['subject'],
  sha: string,
  now = Date.now(),
  shown = SHOWN_POSITIONS,
): CommitStatus | undefined {
  if (subject.kind === 'candidate') {
    const batch = state.batches.find((b) => b.id === subject.batchId && b.candidateSha === sha);
    return batch ? candidateStatus(batch) : undefined;
  }
  const entry = [...state.entries].reverse().find((e) => e.number === subject.number && e.headSha === sha);
  return entry ? rendered(state, entry, frontOfLine(state, now, shown)) : undefined;
}

/** The front of the line: the position and expected merge time of each of the first `shown` (SHOWN_POSITIONS) live PRs. */
export interface FrontOfLine {
  shown: number;
  positions: Map<string, number>;
  etas: Map<string, number>;
}

function rendered(state: MergeQueueState, e: EntryState, front: FrontOfLine): CommitStatus | undefined {
  const subject = { kind: 'entry' as const, number: e.number };
  const batch = e.batchId ? state.batches.find((b) => b.id === e.batchId) : undefined;
  const base = { sha: e.headSha, subject };
  switch (e.status) {
    case 'queued': {
      const position = front.positions.get(e.id);
      if (position === undefined) return { sha: e.headSha, subject, state: 'pending', description: `Queued: ${front.shown} or more PRs ahead` };
      const eta = front.etas.get(e.id);
      return {
        sha: e.headSha,
        subject,
        state: 'pending',
        description: clip(
          `Queued: position ${position}${eta !== undefined ? `, merge expected by ${clock(Math.ceil(eta / ETA_STEP_MS) * ETA_STEP_MS)} UTC` : ''}`,
        ),
      };
    }
    case 'testing': {
      const others = batch ? batch.prNumbers.filter((n) => n !== e.number) : [];
      return {
        ...base,
        state: 'pending',
        description: clip(`Testing${others.length ? ` with ${others.map((n) => `#${n}`).join(', ')}` : ''}${batch ? ` (batch ${batch.id})` : ''}`),
      };
    }
    case 'merging':
      return { ...base, state: 'pending', description: 'Landing on the base' };
    case 'merged':
      return { sha: e.headSha, subject, state: 'success', description: 'Merged by the merge queue' };
    case 'failed': {
      const failed = [...state.batches].reverse().find((b) => b.entryIds.includes(e.id) && b.status === 'failed');
      return {
        sha: e.headSha,
        subject,
        state: 'failure',
        description: clip(`Failed: ${failed?.failureReason ?? 'a required check failed'}`),
      };
    }
    case 'blocked':
      return { sha: e.headSha, subject, state: 'error', description: clip(`Blocked: ${e.block ?? 'needs a person'}`) };
    case 'removed':
      return { sha: e.headSha, subject, state: 'error', description: e.block ? clip(`Removed: ${e.block}`) : 'Removed from the merge queue' };
  }
}

function candidateStatus(b: BatchState): CommitStatus | undefined {
  const sha = b.candidateSha as string;
  const subject = { kind: 'candidate' as const, batchId: b.id };
  const prs = b.prNumbers.map((n) => `#${n}`).join(', ');
  if (b.status === 'testing') return { sha, subject, state: 'pending', description: clip(`Merge queue candidate for ${prs}`) };
  if (b.status === 'landed') return { sha, subject, state: 'success', description: clip(`Landed ${prs}`) };
  if (b.status === 'failed') return { sha, subject, state: 'failure', description: clip(`Failed: ${b.failureReason ?? 'a required check failed'}`) };
  if (b.status === 'withdrawn') return { sha, subject, state: 'error', description: clip(`Withdrawn: ${b.failureReason ?? 'the queue changed'}`) };
  return undefined;
}

/** 1-based places of the first `shown` live entries (those in batches first, then the waiting in planning order), and their estimates. */
export function frontOfLine(state: MergeQueueState, now: number, shown: number): FrontOfLine {
  const line = liveLine(state);
  const positions = new Map(line.slice(0, shown).map((x, i) => [x.id, i + 1]));
  const etas = new Map<string, number>();
  if (line.some((x) => x.status === 'queued' && positions.has(x.id))) {
    for (const x of estimateMergeTimes(state, now)) if (positions.has(x.entryId)) etas.set(x.entryId, x.estimatedMergeAt);
  }
  return { shown, positions, etas };
}

/** HH:MM (UTC) of `at`. */
function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 16);
}

function clip(text: string): string {
  return text.length <= DESCRIPTION_MAX ? text : `${text.slice(0, DESCRIPTION_MAX - 1)}…`;
}
