import { Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { QueueName, UsageImportsJob } from '@/common/queues/queue-names';
import type { UsageImportsPayloads } from './usage-import.producer';
import { UsageImportRunner } from './usage-import.runner';

/**
 * Usage imports. A worker killed mid-import (SIGKILL, OOM) leaves its job active with a lock that
 * is no longer renewed: after `lockDuration` the stalled-job check (every `stalledInterval`) puts
 * it back to wait and any worker resumes it from the Postgres checkpoint. Being resumable, a
 * stall is no reason to fail the job, hence the high `maxStalledCount` (config: jobs.workers).
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
}
