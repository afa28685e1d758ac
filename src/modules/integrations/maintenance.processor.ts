import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { JobHandlers, NoData, PayloadsOf } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { MaintenanceJob, QueueName } from '@/common/queues/queue-names';
import type { RepeatableJob } from '@/common/queues/repeatable-jobs';
import { OAuthStatePurgeService } from './oauth-state-purge.service';

/** What each job of the maintenance queue carries: nothing (a repeatable purge). */
export type MaintenancePayloads = PayloadsOf<typeof MaintenanceJob, { [MaintenanceJob.PurgeExpiredOAuthStates]: NoData }>;

/** The maintenance queue: housekeeping of the integrations (today only expired OAuth states). */
@Processor(QueueName.Maintenance)
export class MaintenanceProcessor extends JobProcessor<MaintenancePayloads> {
  readonly handlers: JobHandlers<MaintenancePayloads> = {
    [MaintenanceJob.PurgeExpiredOAuthStates]: async () => ({ deleted: await this.oauthStates.purgeExpiredOAuthStates(new Date()) }),
  };

  constructor(
    private readonly oauthStates: OAuthStatePurgeService,
    @InjectQueue(QueueName.Maintenance) queue: Queue,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(QueueName.Maintenance, config, queue);
  }

  protected repeatableJobs(): RepeatableJob[] {
    return [{ id: MaintenanceJob.PurgeExpiredOAuthStates, repeat: { every: 3_600_000 } }];
  }
}
