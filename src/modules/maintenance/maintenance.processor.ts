import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import type { Job, Queue } from 'bullmq';
import { dependencyStatus } from '@/common/errors/dependency-errors';
import { MaintenanceJob, QueueName } from '@/common/queues/queue-names';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { MaintenanceService } from './maintenance.service';

@Processor(QueueName.Maintenance)
export class MaintenanceProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(MaintenanceProcessor.name);

  readonly handlers: JobHandlers = {
    [MaintenanceJob.PurgeExpiredOAuthStates]: async () => ({ deleted: await this.maintenance.purgeExpiredOAuthStates(new Date()) }),
  };

  constructor(
    private readonly maintenance: MaintenanceService,
    @InjectQueue(QueueName.Maintenance) private readonly queue: Queue,
  ) {
    super();
  }

  /**
   * Job schedulers are upserted by id, so any number of workers can do this at boot, and again
   * whenever the queue's connection becomes ready: a Redis that restarted without its data has
   * lost the scheduler, and nothing else would re-create it before the worker restarts.
   */
  async onApplicationBootstrap(): Promise<void> {
    this.worker.on('error', (error: Error) => dependencyStatus.down('redis (worker maintenance)', error));
    (this.worker.getBackend() as unknown as EventEmitter).on('ready', () => dependencyStatus.up('redis (worker maintenance)'));
    (this.queue.getBackend() as unknown as EventEmitter).on('ready', () => {
      void this.upsertSchedulers().catch((error: unknown) => this.logger.warn({ err: error }, 'job schedulers not upserted; retried on the next reconnect'));
    });
    await this.upsertSchedulers();
  }

  async upsertSchedulers(): Promise<void> {
    await this.queue.upsertJobScheduler(MaintenanceJob.PurgeExpiredOAuthStates, { every: 3_600_000 }, { name: MaintenanceJob.PurgeExpiredOAuthStates });
  }

  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on ${QueueName.Maintenance}`);
    const result = await handler(job);
    this.logger.log({ job: job.name, jobId: job.id, result }, 'job done');
    return result;
  }
}
