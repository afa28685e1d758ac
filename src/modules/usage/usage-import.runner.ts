import { Inject, Injectable, Logger } from '@nestjs/common';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { Integration } from '@/generated/prisma/client';
import { type CiUsageReader, providerFailureOf, type WorkflowJob } from '@/modules/git-providers/git-provider.port';
import { IntegrationsService } from '@/modules/integrations/integrations.service';
import type { UsageImportJobData } from './usage-import.producer';
import { JOB_FETCH_CONCURRENCY, rateLimitDelaySeconds, RUNS_PER_PAGE, runsToImport } from './usage-rules';
import { UsageErrors } from './usage.errors';
import { UsageRepository } from './usage.repository';

/** What a finished import job returns (BullMQ keeps it only until the job is removed). */
export interface UsageImportOutcome {
  importId: string;
  pagesDone: number;
  runsImported: number;
  jobsImported: number;
}

/** `run` over `items`, at most `limit` at once, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/**
 * Runs one usage import in the worker: pages through the code source's workflow runs from the
 * checkpoint on its row, fetches each run's jobs, and commits each page with its checkpoint.
 * A provider rate limit delays the job until the reset (no attempt spent); transient failures
 * retry with backoff; refused credentials fail the import and mark the integration NEEDS_ATTENTION.
 * A provider that lists more than USAGE_IMPORT_MAX_PAGES pages fails the import (PAGE_LIMIT_REACHED)
 * after the last page allowed, so a provider a tenant controls cannot keep a worker paging forever.
 */
@Injectable()
export class UsageImportRunner {
  private readonly logger = new Logger(UsageImportRunner.name);

  constructor(
    private readonly repository: UsageRepository,
    private readonly integrations: IntegrationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async run(job: Job<UsageImportJobData>, token: string | undefined): Promise<UsageImportOutcome | { importId: string; skipped: string }> {
    const { importId, organizationId, codeSourceId } = job.data;
    const begun = await this.repository.begin(importId, organizationId, codeSourceId);
    if (!begun) return { importId, skipped: 'the code source was disconnected' };
    const { source, integration } = begun;
    let state = begun.row;
    try {
      if (!integration) throw await this.fail(job, 'The code source has lost its integration; connect it again.');
      if (integration.status !== 'ACTIVE') throw await this.fail(job, `The integration is ${integration.status}; reconnect or validate it, then import again.`);
      const reader: CiUsageReader | undefined = (await this.integrations.clientFor(integration)).ciUsage;
      if (!reader) throw await this.fail(job, `${source.provider} code sources have no CI usage to import.`);
      for (let page = state.nextPage; ; page++) {
        const { runs, hasMore } = await reader.workflowRunsPage(source.nameWithOwner, page, RUNS_PER_PAGE);
        const step = runsToImport(runs, hasMore, state.since);
        const jobs: WorkflowJob[] = (await mapLimit(step.runs, JOB_FETCH_CONCURRENCY, (run) => reader.workflowRunJobs(source.nameWithOwner, run.id))).flat();
        state = await this.repository.commitPage({ importId, organizationId, codeSourceId, page, runs: step.runs, jobs });
        await job.updateProgress({ pagesDone: state.pagesDone, runsImported: state.runsImported, jobsImported: state.jobsImported });
        if (job.data.rateLimitHits) await job.updateData({ ...job.data, rateLimitHits: 0 });
        if (step.last) break;
        if (page >= this.config.usage.maxPages) {
          const { code, message } = UsageErrors.PAGE_LIMIT_REACHED;
          this.logger.warn({ importId, codeSourceId, pages: page }, 'usage import stopped at USAGE_IMPORT_MAX_PAGES');
          throw await this.fail(job, `${code}: ${message} (${this.config.usage.maxPages} pages, ${state.runsImported} runs imported)`);
        }
      }
    } catch (error) {
      throw await this.failure(error, job, token, integration);
    }
    await this.repository.finish(importId, organizationId, { status: 'SUCCEEDED' });
    return { importId, pagesDone: state.pagesDone, runsImported: state.runsImported, jobsImported: state.jobsImported };
  }

  /** What a failure means for the job: delayed (rate limit), failed for good, or retried with backoff. */
  private async failure(error: unknown, job: Job<UsageImportJobData>, token: string | undefined, integration: Integration | null): Promise<Error> {
    if (error instanceof UnrecoverableError || error instanceof DelayedError) return error;
    const { importId, organizationId } = job.data;
    const failure = providerFailureOf(error);
    if (failure?.kind === 'rate_limited' && token) {
      const hits = job.data.rateLimitHits ?? 0;
      const until = new Date(Date.now() + rateLimitDelaySeconds(failure.retryAfterSeconds ?? 60, hits) * 1000);
      await job.updateData({ ...job.data, rateLimitHits: hits + 1 });
      await this.repository.rateLimited(importId, organizationId, until, failure.reason);
      await job.moveToDelayed(until.getTime(), token);
      this.logger.log({ importId, until: until.toISOString() }, 'usage import delayed by the provider rate limit');
      return new DelayedError();
    }
    if (failure && integration && (failure.kind === 'unauthorized' || failure.kind === 'forbidden')) {
      await this.integrations.credentialsRefused(organizationId, integration, failure.reason);
      return this.fail(
        job,
        `The git provider refused the integration's credentials (${failure.reason}); the integration needs attention: reconnect or validate it, then import again.`,
      );
    }
    if (failure?.kind === 'not_found') return this.fail(job, `The git provider has no such repository, or the integration cannot see it (${failure.reason}).`);
    if (failure && (failure.kind === 'rejected' || failure.kind === 'refused' || failure.kind === 'unresolved'))
      return this.fail(job, `The git provider refused the request (${failure.reason}).`);
    const message = failure ? `The git provider failed (${failure.kind}: ${failure.reason})` : error instanceof Error ? error.message : String(error);
    if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) return this.fail(job, `${message}; gave up after ${job.opts.attempts ?? 1} attempts.`);
    await this.repository.retrying(importId, organizationId, `${message}; retrying.`);
    return error instanceof Error ? error : new Error(message);
  }

  private async fail(job: Job<UsageImportJobData>, message: string): Promise<UnrecoverableError> {
    await this.repository.finish(job.data.importId, job.data.organizationId, { status: 'FAILED', error: message });
    return new UnrecoverableError(message);
  }
}
