import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import type { Job, Queue } from 'bullmq';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { dependencyStatus } from '@/common/errors/dependency-errors';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { DomainsJob, QueueName } from '@/common/queues/queue-names';
import { DomainExpiryService } from './domain-expiry.service';
import { DomainReverificationService } from './domain-reverification.service';

@Processor(QueueName.Domains)
export class DomainsProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(DomainsProcessor.name);

  readonly handlers: JobHandlers = {
    [DomainsJob.ReverifyActiveDomains]: () => this.reverification.reverifyActive(new Date()),
    [DomainsJob.SweepExpiredPending]: () => this.expiry.sweep(new Date()),
  };

  constructor(
    private readonly reverification: DomainReverificationService,
    private readonly expiry: DomainExpiryService,
    @InjectQueue(QueueName.Domains) private readonly queue: Queue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  /** As MaintenanceProcessor: the scheduler is upserted by id at boot and whenever Redis comes back. */
  async onApplicationBootstrap(): Promise<void> {
    this.worker.on('error', (error: Error) => dependencyStatus.down('redis (worker domains)', error));
    (this.worker.getBackend() as unknown as EventEmitter).on('ready', () => dependencyStatus.up('redis (worker domains)'));
    (this.queue.getBackend() as unknown as EventEmitter).on('ready', () => {
      void this.upsertSchedulers().catch((error: unknown) => this.logger.warn({ err: error }, 'job schedulers not upserted; retried on the next reconnect'));
    });
    await this.upsertSchedulers();
  }

  async upsertSchedulers(): Promise<void> {
    await this.queue.upsertJobScheduler(DomainsJob.ReverifyActiveDomains, { every: this.config.domains.reverifyIntervalMs }, { name: DomainsJob.ReverifyActiveDomains, opts: { attempts: 1 } });
    await this.queue.upsertJobScheduler(DomainsJob.SweepExpiredPending, { every: this.config.domains.pendingSweepIntervalMs }, { name: DomainsJob.SweepExpiredPending, opts: { attempts: 1 } });
  }

  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on ${QueueName.Domains}`);
    const result = await handler(job);
    this.logger.log({ job: job.name, jobId: job.id, result }, 'job done');
    return result;
  }
}
