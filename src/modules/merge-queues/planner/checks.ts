import { learnFromPassingRun, noteLongRuns } from './ci-weight';
import { learnFromResult } from './flakes';
import { type Ctx, isFinalBatch, outcome, setBatchStatus } from './step';
import { failureKey } from './fail-first';
import { type BatchState, type CheckFailure, MAX_CHECK_FAILURES, type MergeQueueCheckState } from './types';

/*
 * Check results: recording what CI reports on a candidate, and the timeout that fails a check
 * that never reports. A report names the commit CI tested; it counts only for the batch's current
 * candidate. A report that arrives before the batch is testing that commit (CI saw the pushed
 * candidate before its publish or startCi was recorded) is kept in the state and applied when the
 * batch starts testing it. A check report also proves that its candidate's CI started, which
 * settles an outstanding startCi. What a failed candidate means is decided in blame.ts.
 *
 * A failing result may name the failing tests (issue 40): they are kept on the batch
 * (`failures`, each with `check` = the result's check) when that result counts, the failure of a
 * required check still pending on the batch's candidate, and only then: a result for another
 * commit, for a final batch or for a check that already has its result adds nothing. Deduplicated
 * by check and test, at most MAX_CHECK_FAILURES per check (more: `failuresTruncated`). Evidence
 * only: what they weigh is blame.ts's to decide.
 */

/** The failing tests a result named (as the checkReported event carries them). */
export interface NamedFailures {
  failures?: Omit<CheckFailure, 'check'>[];
  failuresTruncated?: boolean;
}

/** Early results kept per batch at most (the oldest is dropped first). */
export const MAX_EARLY_CHECKS = 20;

/**
 * How a report naming `sha` fits batch `b`: `current` for its candidate once it is testing it (it
 * is recorded, or changes nothing when the batch is past testing or final), `early` when the batch
 * is not testing yet and `sha` is (or may turn out to be) its candidate (kept), `other` for
 * another commit than its candidate (changes nothing).
 */
export function checkReportFit(b: BatchState, sha: string): 'current' | 'early' | 'other' {
  const final = isFinalBatch(b);
  if (b.candidateSha === null) return final ? 'other' : 'early';
  if (b.candidateSha !== sha) return 'other';
  return !final && notTestingYet(b) ? 'early' : 'current';
}

/** CI has not started on the batch's candidate: it is being built or published, or its startCi was undone. */
function notTestingYet(b: BatchState): boolean {
  return b.status === 'preparing' || b.ciStartedAt === null;
}

/** Records one check report naming the commit `sha`; a passing candidate becomes ready. */
export function recordCheck(
  ctx: Ctx,
  batchId: string,
  sha: string,
  name: string,
  state: MergeQueueCheckState,
  notCounted?: string,
  named: NamedFailures = {},
): void {
  const b = ctx.batchById.get(batchId);
  // A pass on a commit that failed before, whatever became of its batch, is a re-test (flakes.ts).
  if (state === 'success' && notCounted === undefined && !appliesTo(b, sha, name) && isRecentFailure(ctx, sha, name)) {
    learnFromResult(ctx, sha, name, true, []);
  }
  if (!b) return;
  const fit = checkReportFit(b, sha);
  if (notCounted !== undefined) return noteNotCounted(ctx, b, fit, sha, name, notCounted);
  if (fit === 'early') return keepEarly(ctx, b, sha, name, state, named);
  if (fit === 'other' || isFinalBatch(b)) return;
  if (b.status !== 'testing' && b.status !== 'reconciling') return;
  // A check report on the candidate proves CI started: the startCi is done whatever its executor
  // reports later (its late outcome is then ignored).
  if (b.status === 'testing' && isUnfinishedStartCi(b)) {
    b.operation = null;
    ctx.changed = true;
  }
  applyResult(ctx, b, name, state, named);
}

/** Whether a report of `name` on `sha` would be applied to batch `b` (its pending check on its current candidate). */
function appliesTo(b: BatchState | undefined, sha: string, name: string): boolean {
  if (!b || checkReportFit(b, sha) !== 'current' || isFinalBatch(b)) return false;
  if (b.status !== 'testing' && b.status !== 'reconciling') return false;
  return b.checks.some((c) => c.name === name && c.state === 'pending');
}

function isRecentFailure(ctx: Ctx, sha: string, name: string): boolean {
  return (ctx.s.stats.recentFailures ?? []).some((f) => f.sha === sha && f.check === name);
}

function applyResult(ctx: Ctx, b: BatchState, name: string, state: MergeQueueCheckState, named: NamedFailures = {}): void {
  if (state === 'pending') return;
  const check = b.checks.find((c) => c.name === name);
  if (!check || check.state !== 'pending') return;
  check.state = state;
  ctx.changed = true;
  if (state === 'failure') {
    b.failureReason = `check ${name} failed`;
    keepFailures(b, name, named);
  }
  if (b.candidateSha !== null) learnFromResult(ctx, b.candidateSha, name, state === 'success', b.failures ?? []);
  if (b.status === 'testing' && outcome(ctx, b) === 'passed') {
    if (b.ciStartedAt !== null) learnFromPassingRun(ctx, b, ctx.at - b.ciStartedAt);
    setBatchStatus(ctx, b, 'ready');
  }
}

/**
 * A result for a required check that does not count (another source, or skipped where that is no
 * pass): the check stays pending, so the candidate waits for a real result; the note lets the
 * check timeout say why (onTick). The list is replaced, never changed in place, and bounded like
 * the early results.
 */
function noteNotCounted(ctx: Ctx, b: BatchState, fit: 'current' | 'early' | 'other', sha: string, name: string, why: string): void {
  if (fit === 'other' || isFinalBatch(b) || !ctx.s.config.requiredChecks.includes(name)) return;
  const noted = b.notCounted ?? [];
  if (noted.some((c) => c.sha === sha && c.name === name && c.why === why)) return;
  b.notCounted = [...noted, { sha, name, why }].slice(-MAX_EARLY_CHECKS);
  ctx.changed = true;
}

/**
 * Keeps a result until the batch tests `sha`. The first result per commit and check counts, as
 * on a candidate; `pending` tells nothing worth keeping. The list is replaced, never changed in
 * place (the reducer's input state is shared).
 */
function keepEarly(ctx: Ctx, b: BatchState, sha: string, name: string, state: MergeQueueCheckState, named: NamedFailures): void {
  if (state === 'pending') return;
  const kept = b.earlyChecks ?? [];
  if (kept.some((c) => c.sha === sha && c.name === name)) return;
  const failures = state === 'failure' ? boundedFailures(name, named) : undefined;
  const early = {
    sha,
    name,
    state,
    ...(failures && failures.list.length > 0 && { failures: failures.list.map(({ check: _check, ...f }) => f) }),
    ...(failures?.truncated && { failuresTruncated: true }),
  };
  b.earlyChecks = [...kept, early].slice(-MAX_EARLY_CHECKS);
  ctx.changed = true;
}

/**
 * The failing tests a result named, as the batch keeps them: each with a non-empty `test`, once per
 * test (the first wins), at most MAX_CHECK_FAILURES; `truncated` when more were named or the
 * result says it sent fewer than CI found.
 */
function boundedFailures(check: string, named: NamedFailures): { list: CheckFailure[]; truncated: boolean } {
  const seen = new Set<string>();
  const list: CheckFailure[] = [];
  let truncated = named.failuresTruncated === true;
  for (const f of named.failures ?? []) {
    if (typeof f?.test !== 'string' || f.test.length === 0) continue;
    const failure: CheckFailure = { check, test: f.test };
    for (const key of ['target', 'file', 'kind'] as const) if (typeof f[key] === 'string' && f[key] !== '') failure[key] = f[key];
    const key = failureKey(failure);
    if (seen.has(key)) continue;
    if (list.length >= MAX_CHECK_FAILURES) {
      truncated = true;
      break;
    }
    seen.add(key);
    list.push(failure);
  }
  return { list, truncated };
}

/** Adds a counted failing result's tests to the batch's (replaced, never changed in place: the reducer's input state is shared). */
function keepFailures(b: BatchState, check: string, named: NamedFailures): void {
  const { list, truncated } = boundedFailures(check, named);
  if (list.length > 0) {
    const known = new Set((b.failures ?? []).map(failureKey));
    const added = list.filter((f) => !known.has(failureKey(f)));
    if (added.length > 0) b.failures = [...(b.failures ?? []), ...added];
  }
  if (truncated) b.failuresTruncated = true;
}

/**
 * The batch has just started testing its candidate: the results CI reported early for it count
 * now, the others are dropped. Its startCi stays outstanding (its outcome follows at once and lets
 * the next planning pass act on the results; a late one is ignored, see isLateStartCi).
 */
export function applyEarlyChecks(ctx: Ctx, b: BatchState): void {
  if (!b.earlyChecks) return;
  const early = b.earlyChecks.filter((c) => c.sha === b.candidateSha);
  delete b.earlyChecks;
  ctx.changed = true;
  for (const c of early) applyResult(ctx, b, c.name, c.state, c);
}

/**
 * The heartbeat: runs still pending past the heavy threshold teach the CI weights, and a required
 * check still pending `checkTimeoutMs` after CI started counts as failed.
 */
export function onTick(ctx: Ctx): void {
  noteLongRuns(ctx);
  const { checkTimeoutMs, requiredChecks } = ctx.s.config;
  for (const b of ctx.s.batches) {
    if (b.status !== 'testing' || b.ciStartedAt === null) continue;
    if (ctx.at - b.ciStartedAt < checkTimeoutMs) continue;
    if (outcome(ctx, b) !== 'pending') continue;
    for (const name of requiredChecks) {
      const check = b.checks.find((c) => c.name === name);
      if (check && check.state === 'pending') {
        check.state = 'failure';
        const why = b.notCounted?.filter((c) => c.name === name && c.sha === b.candidateSha).at(-1)?.why;
        const within = `within ${Math.round(checkTimeoutMs / 60000)} min`;
        b.failureReason = why === undefined ? `check ${name} did not report ${within}` : `check ${name} did not count ${within}: ${why}`;
        ctx.changed = true;
      }
    }
  }
}

function isUnfinishedStartCi(b: BatchState): boolean {
  // A finished operation is cleared at once, so a startCi still recorded is unfinished.
  return b.operation?.kind === 'startCi';
}

/**
 * A startCi outcome that arrives once the batch is past `testing` (its checks already reported) is
 * stale: CI evidently ran. The operation is cleared and the outcome otherwise ignored, so neither
 * `failed` (withdraw) nor `unknown` (ready -> reconciling, not in the table) applies to it.
 */
export function isLateStartCi(ctx: Ctx, b: BatchState): boolean {
  if (b.operation?.kind !== 'startCi' || b.status === 'testing') return false;
  b.operation = null;
  ctx.changed = true;
  return true;
}
