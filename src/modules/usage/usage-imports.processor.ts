import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import type { Job } from 'bullmq';
import { dependencyStatus } from '@/common/errors/dependency-errors';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { QueueName, UsageImportsJob } from '@/common/queues/queue-names';
import type { UsageImportJobData } from './usage-import.producer';
import { UsageImportRunner } from './usage-import.runner';

/**
 * Usage imports. A worker killed mid-import (SIGKILL, OOM) leaves its job active with a lock that
 * is no longer renewed: after `lockDuration` the stalled-job check (every `stalledInterval`) puts
 * it back to wait and any worker resumes it from the Postgres checkpoint. Being resumable, a
 * stall is no reason to fail the job, hence the high `maxStalledCount`.
 */
@Processor(QueueName.UsageImports, { concurrency: 4, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 100 })
export class UsageImportsProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(UsageImportsProcessor.name);

  readonly handlers: JobHandlers = {
    [UsageImportsJob.ImportCodeSource]: (job) => this.runner.run(job as Job<UsageImportJobData>, job.token),
  };

  constructor(private readonly runner: UsageImportRunner) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.on('error', (error: Error) => dependencyStatus.down('redis (worker usage-imports)', error));
    (this.worker.getBackend() as unknown as EventEmitter).on('ready', () => dependencyStatus.up('redis (worker usage-imports)'));
  }

  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on ${QueueName.UsageImports}`);
    const result = await handler(job);
    this.logger.log({ job: job.name, jobId: job.id, result }, 'job done');
    return result;
  }
}
