import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import type { EventEmitter } from 'node:events';
import type { Job, Queue } from 'bullmq';
import { dependencyStatus } from '@/common/errors/dependency-errors';
import { MaintenanceJob, QueueName } from '@/common/queues/queue-names';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { RepeatableJobs } from '@/common/queues/repeatable-jobs';
import { OAuthStatePurgeService } from './oauth-state-purge.service';

/** The maintenance queue: housekeeping of the integrations (today only expired OAuth states). */
@Processor(QueueName.Maintenance)
export class MaintenanceProcessor extends WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MaintenanceProcessor.name);

  readonly handlers: JobHandlers = {
    [MaintenanceJob.PurgeExpiredOAuthStates]: async () => ({ deleted: await this.oauthStates.purgeExpiredOAuthStates(new Date()) }),
  };

  constructor(
    private readonly oauthStates: OAuthStatePurgeService,
    @InjectQueue(QueueName.Maintenance) private readonly queue: Queue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  private schedulers?: RepeatableJobs;

  /** The scheduler is kept in Redis by RepeatableJobs (re-created when Redis loses it). */
  async onApplicationBootstrap(): Promise<void> {
    this.worker.on('error', (error: Error) => dependencyStatus.down('redis (worker maintenance)', error));
    (this.worker.getBackend() as unknown as EventEmitter).on('ready', () => dependencyStatus.up('redis (worker maintenance)'));
    this.schedulers = new RepeatableJobs(this.queue, [{ id: MaintenanceJob.PurgeExpiredOAuthStates, repeat: { every: 3_600_000 } }], this.config.jobSchedulerCheckIntervalMs);
    await this.schedulers.start();
  }

  onApplicationShutdown(): void {
    this.schedulers?.stop();
  }

  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on ${QueueName.Maintenance}`);
    const result = await handler(job);
    this.logger.log({ job: job.name, jobId: job.id, result }, 'job done');
    return result;
  }
}
