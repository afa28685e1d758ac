import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import type { Job, Queue } from 'bullmq';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { dependencyStatus } from '@/common/errors/dependency-errors';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { RepeatableJobs } from '@/common/queues/repeatable-jobs';
import { DomainsJob, QueueName } from '@/common/queues/queue-names';
import { DomainExpiryService } from './verification/domain-expiry.service';
import { DomainReverificationService } from './verification/domain-reverification.service';

@Processor(QueueName.Domains)
export class DomainsProcessor extends WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
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

  private schedulers?: RepeatableJobs;

  /** The schedulers are kept in Redis by RepeatableJobs (re-created when Redis loses them). */
  async onApplicationBootstrap(): Promise<void> {
    this.worker.on('error', (error: Error) => dependencyStatus.down('redis (worker domains)', error));
    (this.worker.getBackend() as unknown as EventEmitter).on('ready', () => dependencyStatus.up('redis (worker domains)'));
    this.schedulers = new RepeatableJobs(
      this.queue,
      [
        { id: DomainsJob.ReverifyActiveDomains, repeat: { every: this.config.domains.reverifyIntervalMs }, opts: { attempts: 1 } },
        { id: DomainsJob.SweepExpiredPending, repeat: { every: this.config.domains.pendingSweepIntervalMs }, opts: { attempts: 1 } },
      ],
      this.config.jobSchedulerCheckIntervalMs,
    );
    await this.schedulers.start();
  }

  onApplicationShutdown(): void {
    this.schedulers?.stop();
  }

  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on ${QueueName.Domains}`);
    const result = await handler(job);
    this.logger.log({ job: job.name, jobId: job.id, result }, 'job done');
    return result;
  }
}
