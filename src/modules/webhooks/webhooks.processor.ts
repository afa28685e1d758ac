import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { JobHandlers } from '@/common/queues/job-handlers';
import { QueueName, WebhooksJob } from '@/common/queues/queue-names';
import { WebhookDeliveries } from './webhook-deliveries';
import type { ApplyDeliveryJob } from './webhooks.service';

const SWEEP_EVERY_MS = 60_000;

/** Applies GitHub webhook deliveries the API stored; the periodic sweep picks up any whose job was lost and deletes old applied ones. */
@Processor(QueueName.Webhooks, { concurrency: 4 })
export class WebhooksProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(WebhooksProcessor.name);

  readonly handlers: JobHandlers = {
    [WebhooksJob.ApplyGithubDelivery]: (job) => this.deliveries.apply((job.data as ApplyDeliveryJob).deliveryRowId),
    [WebhooksJob.Sweep]: () => this.sweep(),
  };

  constructor(
    private readonly deliveries: WebhookDeliveries,
    @InjectQueue(QueueName.Webhooks) private readonly queue: Queue,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    this.worker.on('failed', (job: Job | undefined, error: Error) => {
      if (job) this.logger.warn({ err: error, job: job.name, data: job.data as unknown, attempts: job.attemptsMade }, 'webhook job failed');
    });
    await this.queue.upsertJobScheduler(WebhooksJob.Sweep, { every: SWEEP_EVERY_MS }, { name: WebhooksJob.Sweep, opts: { attempts: 1 } });
  }

  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on ${QueueName.Webhooks}`);
    return handler(job);
  }

  /** Hands deliveries whose job was lost to the worker again, and deletes those past retention. */
  async sweep(now = Date.now()): Promise<{ requeued: number; purged: number }> {
    const ids = await this.deliveries.unapplied(now);
    for (const deliveryRowId of ids) await this.queue.add(WebhooksJob.ApplyGithubDelivery, { deliveryRowId } satisfies ApplyDeliveryJob, { jobId: `delivery-${deliveryRowId}` });
    return { requeued: ids.length, purged: await this.deliveries.purgeApplied(now) };
  }
}
