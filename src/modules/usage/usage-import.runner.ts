import { Inject, Injectable, Logger } from '@nestjs/common';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { Integration } from '@/generated/prisma/client';
import {
  type CiUsageReader,
  PageRefusedFailure,
  ProviderFailure,
  providerFailureOf,
  type WorkflowJob,
  type WorkflowRun,
} from '@/modules/git-providers/git-provider.port';
import { IntegrationsService } from '@/modules/integrations/integrations.service';
import { PageSlots } from './page-slots';
import type { UsageImportJobData } from './usage-import.producer';
import {
  budgetExhausted,
  JOB_FETCH_CONCURRENCY,
  JOBS_PER_PAGE,
  MAX_JSON_VALUES_PER_PAGE,
  rateLimitDelaySeconds,
  RUNS_PER_PAGE,
  runsToImport,
} from './usage-rules';
import { UsageErrors } from './usage.errors';
import { type Spent, UsageRepository } from './usage.repository';

/** What a finished import job returns (BullMQ keeps it only until the job is removed). */
export interface UsageImportOutcome {
  importId: string;
  pagesDone: number;
  runsImported: number;
  jobsImported: number;
}

/** Why an attempt stopped the import for good: its deadline or its byte budget. */
class BudgetExhausted extends Error {
  constructor(
    readonly code: 'DEADLINE_EXCEEDED' | 'BYTES_LIMIT_REACHED',
    detail: string,
  ) {
    super(`${UsageErrors[code].code}: ${UsageErrors[code].message} (${detail})`);
  }
}

/** Another lane of the same page failed: this one stops. */
class LaneStopped extends Error {}

/** The time (since the last take) and the provider bytes (read by `reader` since the last take) an attempt spent. */
class Spending {
  private at = performance.now();
  private bytes = 0;
  reader?: Pick<CiUsageReader, 'bytesRead'>;

  take(): Spent {
    const now = performance.now();
    const read = this.reader?.bytesRead ?? 0;
    const spent = { ms: now - this.at, bytes: read - this.bytes };
    this.at = now;
    this.bytes = read;
    return spent;
  }
}

/**
 * `run` over `items`, at most `limit` at once. The first failure aborts `controller` (the other
 * lanes' requests are dropped) and is thrown once every lane has stopped, so nothing is written
 * after it.
 */
async function eachLimit<T>(items: T[], limit: number, controller: AbortController, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await run(item);
      } catch (error) {
        if (failure) continue;
        failure = { error };
        if (!controller.signal.aborted) controller.abort(new LaneStopped('another lane failed'));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure) throw failure.error;
}

/**
 * Runs one usage import in the worker: pages through the code source's workflow runs from the
 * checkpoint on its row and each run's jobs from the run's own checkpoint, writing every page as
 * it arrives (only the pages in flight are ever held, at most USAGE_IMPORT_PAGES_IN_FLIGHT per
 * process, each at most USAGE_IMPORT_MAX_PAGE_BYTES).
 * A provider rate limit delays the job until the reset (no attempt spent); transient failures
 * retry with backoff; refused credentials fail the import and mark the integration NEEDS_ATTENTION.
 * An import fails for good, keeping what it committed, past USAGE_IMPORT_MAX_PAGES pages of runs
 * (PAGE_LIMIT_REACHED), USAGE_IMPORT_DEADLINE_MS in workers (DEADLINE_EXCEEDED, the requests in
 * flight dropped), USAGE_IMPORT_MAX_BYTES read (BYTES_LIMIT_REACHED), or on a page larger than it
 * accepts (PAGE_TOO_LARGE): a provider a tenant controls cannot hold a worker's memory or its slot.
 */
@Injectable()
export class UsageImportRunner {
  private readonly logger = new Logger(UsageImportRunner.name);
  /** This process's pages in flight, shared by all of its imports. */
  private readonly slots: PageSlots;

  constructor(
    private readonly repository: UsageRepository,
    private readonly integrations: IntegrationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.slots = new PageSlots(config.usage.pagesInFlight);
  }

  async run(job: Job<UsageImportJobData>, token: string | undefined): Promise<UsageImportOutcome | { importId: string; skipped: string }> {
    const { importId, organizationId, codeSourceId } = job.data;
    const begun = await this.repository.begin(importId, organizationId, codeSourceId);
    if (!begun) return { importId, skipped: 'the code source was disconnected' };
    const { source, integration } = begun;
    let state = begun.row;
    const caps = this.config.usage;
    const spending = new Spending();
    const controller = new AbortController();
    const signal = controller.signal;
    let deadline: NodeJS.Timeout | undefined;
    try {
      if (!integration) throw await this.fail(job, 'The code source has lost its integration; connect it again.');
      if (integration.status !== 'ACTIVE') throw await this.fail(job, `The integration is ${integration.status}; reconnect or validate it, then import again.`);
      const before = { runningMs: Number(state.runningMs), bytesRead: Number(state.bytesRead) };
      const exhausted = budgetExhausted(before, caps);
      if (exhausted) throw this.exhausted(exhausted, before.runningMs, before.bytesRead);
      deadline = setTimeout(
        () => controller.abort(this.exhausted('DEADLINE_EXCEEDED', caps.deadlineMs, before.bytesRead + (spending.reader?.bytesRead ?? 0))),
        caps.deadlineMs - before.runningMs,
      );
      const client = await this.integrations.clientFor(integration, { maxResponseBytes: caps.maxPageBytes, maxJsonValues: MAX_JSON_VALUES_PER_PAGE });
      const reader = client.ciUsage;
      if (!reader) throw await this.fail(job, `${source.provider} code sources have no CI usage to import.`);
      spending.reader = reader;
      // One page in flight per call, in one of this process's slots; the byte budget is checked as each arrives.
      const page = <T>(fetch: () => Promise<T>): Promise<T> =>
        this.slots.with(async () => {
          const result = await fetch();
          const bytes = before.bytesRead + reader.bytesRead;
          if (budgetExhausted({ runningMs: 0, bytesRead: bytes }, caps) && !signal.aborted) controller.abort(this.exhausted('BYTES_LIMIT_REACHED', 0, bytes));
          signal.throwIfAborted();
          return result;
        }, signal);
      for (let runsPage = state.nextPage; ; runsPage++) {
        const { runs, hasMore } = await page(() => reader.workflowRunsPage(source.nameWithOwner, runsPage, RUNS_PER_PAGE, { signal }));
        const step = runsToImport(runs, hasMore, state.since);
        const byId = new Map(step.runs.map((run) => [run.id, run]));
        const pending = await this.repository.beginPage({ importId, organizationId, codeSourceId, runs: step.runs, spent: spending.take() });
        // Runs with a single page of jobs (nearly all) are written with the page's checkpoint: their
        // mapped rows (at most 100 runs × 100 jobs, cut short) wait for it; longer runs stream.
        const held: { run: WorkflowRun; jobs: WorkflowJob[] }[] = [];
        await eachLimit(pending, JOB_FETCH_CONCURRENCY, controller, async ({ id, nextJobsPage }) => {
          const run = byId.get(id);
          if (!run) return;
          for (let jobsPage = nextJobsPage; ; jobsPage++) {
            if (jobsPage > this.config.git.maxPages)
              throw new ProviderFailure('unavailable', `the provider listed more than ${this.config.git.maxPages} pages of jobs for run ${id}`);
            const { jobs, hasMore: more } = await page(() => reader.workflowRunJobsPage(source.nameWithOwner, id, jobsPage, JOBS_PER_PAGE, { signal }));
            const last = !more || jobs.length === 0;
            if (last && jobsPage === 1) {
              held.push({ run, jobs });
              break;
            }
            await this.repository.commitJobsPage({ importId, organizationId, codeSourceId, run, page: jobsPage, last, jobs, spent: spending.take() });
            if (last) break;
          }
        });
        state = await this.repository.commitPage({ importId, organizationId, codeSourceId, page: runsPage, runs: byId.size, held, spent: spending.take() });
        await job.updateProgress({ pagesDone: state.pagesDone, runsImported: state.runsImported, jobsImported: state.jobsImported });
        if (job.data.rateLimitHits) await job.updateData({ ...job.data, rateLimitHits: 0 });
        if (step.last) break;
        if (runsPage >= this.config.usage.maxPages) {
          const { code, message } = UsageErrors.PAGE_LIMIT_REACHED;
          this.logger.warn({ importId, codeSourceId, pages: runsPage }, 'usage import stopped at USAGE_IMPORT_MAX_PAGES');
          throw await this.fail(job, `${code}: ${message} (${this.config.usage.maxPages} pages, ${state.runsImported} runs imported)`, spending.take());
        }
      }
    } catch (error) {
      // A request dropped by the deadline or the byte budget fails as what dropped it.
      const cause = signal.reason instanceof BudgetExhausted ? signal.reason : error;
      throw await this.failure(cause, job, token, integration, spending.take());
    } finally {
      clearTimeout(deadline);
      if (!signal.aborted) controller.abort(new LaneStopped('the attempt ended'));
    }
    await this.repository.finish(importId, organizationId, { status: 'SUCCEEDED' }, spending.take());
    return { importId, pagesDone: state.pagesDone, runsImported: state.runsImported, jobsImported: state.jobsImported };
  }

  /**
   * Records that BullMQ failed the import's job because its worker stopped while running it more
   * often than usage imports are resumed (killed, out of memory, or blocked past the lock): the
   * job never reaches `run` again, so its row says why here. An import already ended stays as it is.
   */
  async stalledOut(job: Job<UsageImportJobData>, reason: string): Promise<void> {
    const { code, message } = UsageErrors.STALLED;
    const error = `${code}: ${message} (${reason}; its worker stopped ${job.stalledCounter} times: killed, out of memory, or blocked longer than its lock; what was committed stays imported)`;
    this.logger.warn({ importId: job.data.importId, stalls: job.stalledCounter }, 'usage import failed after repeated stalls');
    await this.repository.finish(job.data.importId, job.data.organizationId, { status: 'FAILED', error }, undefined, true);
  }

  private exhausted(code: 'DEADLINE_EXCEEDED' | 'BYTES_LIMIT_REACHED', runningMs: number, bytesRead: number): BudgetExhausted {
    return code === 'DEADLINE_EXCEEDED'
      ? new BudgetExhausted(code, `${this.config.usage.deadlineMs} ms in workers, USAGE_IMPORT_DEADLINE_MS; ${Math.round(runningMs)} ms spent`)
      : new BudgetExhausted(code, `${bytesRead} bytes read, USAGE_IMPORT_MAX_BYTES is ${this.config.usage.maxBytes}`);
  }

  /** What a failure means for the job: delayed (rate limit), failed for good, or retried with backoff. */
  private async failure(
    error: unknown,
    job: Job<UsageImportJobData>,
    token: string | undefined,
    integration: Integration | null,
    spent: Spent,
  ): Promise<Error> {
    if (error instanceof UnrecoverableError || error instanceof DelayedError) return error;
    const { importId, organizationId } = job.data;
    if (error instanceof BudgetExhausted) return this.fail(job, error.message, spent);
    const failure = providerFailureOf(error);
    if (failure instanceof PageRefusedFailure)
      return this.fail(job, `${UsageErrors.PAGE_TOO_LARGE.code}: ${UsageErrors.PAGE_TOO_LARGE.message} (${failure.reason})`, spent);
    if (failure?.kind === 'rate_limited' && token) {
      const hits = job.data.rateLimitHits ?? 0;
      const until = new Date(Date.now() + rateLimitDelaySeconds(failure.retryAfterSeconds ?? 60, hits) * 1000);
      await job.updateData({ ...job.data, rateLimitHits: hits + 1 });
      await this.repository.rateLimited(importId, organizationId, until, failure.reason, spent);
      await job.moveToDelayed(until.getTime(), token);
      this.logger.log({ importId, until: until.toISOString() }, 'usage import delayed by the provider rate limit');
      return new DelayedError();
    }
    if (failure && integration && (failure.kind === 'unauthorized' || failure.kind === 'forbidden')) {
      await this.integrations.credentialsRefused(organizationId, integration, failure.reason);
      return this.fail(
        job,
        `The git provider refused the integration's credentials (${failure.reason}); the integration needs attention: reconnect or validate it, then import again.`,
        spent,
      );
    }
    if (failure?.kind === 'not_found')
      return this.fail(job, `The git provider has no such repository, or the integration cannot see it (${failure.reason}).`, spent);
    if (failure && (failure.kind === 'rejected' || failure.kind === 'refused' || failure.kind === 'unresolved'))
      return this.fail(job, `The git provider refused the request (${failure.reason}).`, spent);
    const message = failure ? `The git provider failed (${failure.kind}: ${failure.reason})` : error instanceof Error ? error.message : String(error);
    if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) return this.fail(job, `${message}; gave up after ${job.opts.attempts ?? 1} attempts.`, spent);
    await this.repository.retrying(importId, organizationId, `${message}; retrying.`, spent);
    return error instanceof Error ? error : new Error(message);
  }

  private async fail(job: Job<UsageImportJobData>, message: string, spent?: Spent): Promise<UnrecoverableError> {
    await this.repository.finish(job.data.importId, job.data.organizationId, { status: 'FAILED', error: message }, spent);
    return new UnrecoverableError(message);
  }
}
