import { Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { QueueName, UsageImportsJob } from '@/common/queues/queue-names';
import type { UsageImportJobData, UsageImportsPayloads } from './usage-import.producer';
import { UsageImportRunner } from './usage-import.runner';

/** What BullMQ fails a job with when it has stalled more than `maxStalledCount` times. */
const STALLED_TOO_OFTEN = /stalled more than allowable limit/;

/**
 * Usage imports. A worker killed mid-import (SIGKILL, OOM) leaves its job active with a lock that
 * is no longer renewed: after `lockDuration` the stalled-job check (every `stalledInterval`) puts
 * it back to wait and any worker resumes it from the Postgres checkpoint. But an import that kills
 * its worker again and again (out of memory on the same page) would take down every worker in
 * turn: past USAGE_IMPORT_MAX_STALLS stalls BullMQ fails the job instead (config: jobs.workers),
 * and this processor records why on the import's row (`dpa:Usage:STALLED`).
 */
@Processor(QueueName.UsageImports)
export class UsageImportsProcessor extends JobProcessor<UsageImportsPayloads> {
  readonly handlers: JobHandlers<UsageImportsPayloads> = {
    [UsageImportsJob.ImportCodeSource]: (job) => this.runner.run(job, job.token),
  };

  constructor(
    private readonly runner: UsageImportRunner,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(QueueName.UsageImports, config);
  }

  override async onApplicationBootstrap(): Promise<void> {
    await super.onApplicationBootstrap();
    this.worker.on('failed', (job: Job | undefined, error: Error) => {
      if (!job || job.name !== UsageImportsJob.ImportCodeSource || !STALLED_TOO_OFTEN.test(error.message)) return;
      this.runner
        .stalledOut(job as Job<UsageImportJobData>, error.message)
        .catch((failure: unknown) => this.logger.error({ err: failure }, 'usage import stall not recorded'));
    });
  }
}
