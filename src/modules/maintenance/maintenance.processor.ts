import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
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

  /** Job schedulers are upserted by id, so any number of workers can do this at boot. */
  async onApplicationBootstrap(): Promise<void> {
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
