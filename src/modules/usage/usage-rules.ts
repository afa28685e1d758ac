/**
 * The rules of CI usage imports, as plain functions: how a job's runner and minutes are counted,
 * where an incremental import stops, and what the import endpoint tells the caller about waiting.
 * No Nest, Prisma or I/O here.
 */
import type { CiRunnerOs } from '@/generated/prisma/enums';
import type { WorkflowJob, WorkflowRun } from '@/modules/git-providers/git-provider.port';

/** Workflow runs per provider page (GitHub's maximum): one page is one checkpoint. */
export const RUNS_PER_PAGE = 100;
/** Jobs per provider page (GitHub's maximum). */
export const JOBS_PER_PAGE = 100;
/** Runs whose jobs one import fetches at once (each holding one page at a time, in a PageSlots slot). */
export const JOB_FETCH_CONCURRENCY = 16;
/**
 * The most JSON values (objects, arrays and the members between commas) one page may hold: a real
 * page of 100 runs or jobs has about 25,000. Counted before parsing, so a page's parsed size
 * stays proportional to this, not to what a provider can pack into USAGE_IMPORT_MAX_PAGE_BYTES.
 */
export const MAX_JSON_VALUES_PER_PAGE = 250_000;
/**
 * An incremental import re-reads runs created this long before the previous successful import
 * started: runs still in progress then may have gained jobs (re-runs) since.
 */
export const INCREMENTAL_OVERLAP_MS = 24 * 3_600_000;
/** Attempts of an import job against transient provider failures (exponential backoff from 2 s). */
export const IMPORT_ATTEMPTS = 8;
export const IMPORT_BACKOFF_MS = 2_000;

/**
 * How long an import waits after the provider's rate limit, the `hits`-th time in a row: what the
 * provider asked, but at least 5 s doubling per consecutive hit up to an hour, so a provider that
 * answers 429 with `Retry-After: 0` again and again cannot make the worker loop.
 */
export function rateLimitDelaySeconds(retryAfterSeconds: number, hits: number): number {
  return Math.max(retryAfterSeconds, Math.min(3600, 5 * 2 ** Math.min(hits, 20)));
}

/** GitHub's runner families, from a job's labels; a `self-hosted` label wins. */
export function runnerOs(job: Pick<WorkflowJob, 'labels' | 'runnerGroupName'>): CiRunnerOs {
  const labels = job.labels.map((label) => label.toLowerCase());
  if (labels.includes('self-hosted')) return 'SELF_HOSTED';
  if (labels.some((label) => label.startsWith('windows'))) return 'WINDOWS';
  if (labels.some((label) => label.startsWith('macos'))) return 'MACOS';
  return 'UBUNTU';
}

/** A job's duration, and the minutes GitHub bills for it: each job rounded up to the whole minute; self-hosted runners are free. */
export function jobMinutes(job: Pick<WorkflowJob, 'startedAt' | 'completedAt' | 'labels' | 'runnerGroupName'>): {
  durationSeconds: number;
  billableMinutes: number;
} {
  const started = job.startedAt ? Date.parse(job.startedAt) : NaN;
  const completed = job.completedAt ? Date.parse(job.completedAt) : NaN;
  const durationSeconds = Number.isFinite(started) && Number.isFinite(completed) && completed > started ? Math.round((completed - started) / 1000) : 0;
  const billableMinutes = runnerOs(job) === 'SELF_HOSTED' ? 0 : Math.ceil(durationSeconds / 60);
  return { durationSeconds, billableMinutes };
}

/**
 * The runs of a page an import keeps, and whether the walk ends here. Pages are newest first, so
 * the first run created before `since` (the incremental lower bound) ends the import.
 */
export function runsToImport(runs: WorkflowRun[], hasMore: boolean, since: Date | null): { runs: WorkflowRun[]; last: boolean } {
  const kept = since ? runs.filter((run) => Date.parse(run.createdAt) >= since.getTime()) : runs;
  return { runs: kept, last: !hasMore || runs.length === 0 || kept.length < runs.length };
}

/** Where an import that follows a successful one (started at `previousStart`) may stop. */
export function incrementalSince(previousStart: Date | null | undefined): Date | null {
  return previousStart ? new Date(previousStart.getTime() - INCREMENTAL_OVERLAP_MS) : null;
}

/** Seconds the caller should wait before asking again: the cooldown, or the provider's reset when later. */
export function retryAfterSeconds(now: number, cooldownSeconds: number, rateLimitedUntil: Date | null): number {
  const reset = rateLimitedUntil ? Math.ceil((rateLimitedUntil.getTime() - now) / 1000) : 0;
  return Math.max(cooldownSeconds, reset, 0);
}

/** BullMQ ids: one job per import, deduplicated per code source while it waits, runs or is delayed. */
export function importJobId(importId: string): string {
  return `usage-import-${importId}`;
}

export function codeSourceDeduplicationId(codeSourceId: string): string {
  return `usage-import-source-${codeSourceId}`;
}

/**
 * Why an import that has spent `runningMs` in workers and read `bytesRead` from the provider must
 * stop, or undefined while both are under their caps.
 */
export function budgetExhausted(
  spent: { runningMs: number; bytesRead: number },
  caps: { deadlineMs: number; maxBytes: number },
): 'DEADLINE_EXCEEDED' | 'BYTES_LIMIT_REACHED' | undefined {
  if (spent.runningMs >= caps.deadlineMs) return 'DEADLINE_EXCEEDED';
  if (spent.bytesRead > caps.maxBytes) return 'BYTES_LIMIT_REACHED';
  return undefined;
}
