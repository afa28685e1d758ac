import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { JobHandlers, NoData, PayloadsOf } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { DomainsJob, QueueName } from '@/common/queues/queue-names';
import type { RepeatableJob } from '@/common/queues/repeatable-jobs';
import { DomainExpiryService } from './verification/domain-expiry.service';
import { DomainReverificationService } from './verification/domain-reverification.service';

/** What each job of the domains queue carries: nothing (both are repeatable sweeps). */
export type DomainsPayloads = PayloadsOf<typeof DomainsJob, { [DomainsJob.ReverifyActiveDomains]: NoData; [DomainsJob.SweepExpiredPending]: NoData }>;

/** Periodic re-verification of ACTIVE domains and the sweep of expired pending registrations. */
@Processor(QueueName.Domains)
export class DomainsProcessor extends JobProcessor<DomainsPayloads> {
  readonly handlers: JobHandlers<DomainsPayloads> = {
    [DomainsJob.ReverifyActiveDomains]: () => this.reverification.reverifyActive(new Date()),
    [DomainsJob.SweepExpiredPending]: () => this.expiry.sweep(new Date()),
  };

  constructor(
    private readonly reverification: DomainReverificationService,
    private readonly expiry: DomainExpiryService,
    @InjectQueue(QueueName.Domains) queue: Queue,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(QueueName.Domains, config, queue);
  }

  protected repeatableJobs(): RepeatableJob[] {
    return [
      { id: DomainsJob.ReverifyActiveDomains, repeat: { every: this.config.domains.reverifyIntervalMs }, opts: { attempts: 1 } },
      { id: DomainsJob.SweepExpiredPending, repeat: { every: this.config.domains.pendingSweepIntervalMs }, opts: { attempts: 1 } },
    ];
  }
}
