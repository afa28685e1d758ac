import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import type { JobHandlers, JobQueue } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { QueueName, WebhooksJob } from '@/common/queues/queue-names';
import type { RepeatableJob } from '@/common/queues/repeatable-jobs';
import { WebhookDeliveries } from './webhook-deliveries';
import type { WebhooksPayloads } from './webhooks.service';

/** Applies GitHub webhook deliveries the API stored; the periodic sweep picks up any whose job was lost and deletes old applied ones. */
@Processor(QueueName.Webhooks)
export class WebhooksProcessor extends JobProcessor<WebhooksPayloads> {
  private readonly webhooks: JobQueue<WebhooksPayloads>;

  readonly handlers: JobHandlers<WebhooksPayloads> = {
    [WebhooksJob.ApplyGithubDelivery]: (job) =>
      this.deliveries.apply(job.data.deliveryRowId, { lastAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) }),
    [WebhooksJob.Sweep]: () => this.sweep(),
  };

  constructor(
    private readonly deliveries: WebhookDeliveries,
    @InjectQueue(QueueName.Webhooks) queue: Queue,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(QueueName.Webhooks, config, queue);
    this.webhooks = queue;
  }

  protected repeatableJobs(): RepeatableJob[] {
    return [{ id: WebhooksJob.Sweep, repeat: { every: this.config.webhooks.sweepIntervalMs }, opts: { attempts: 1 } }];
  }

  /** Hands deliveries whose job was lost to the worker again, and deletes those past retention. */
  async sweep(now = Date.now()): Promise<{ requeued: number; purged: number }> {
    const ids = await this.deliveries.unapplied(now);
    for (const deliveryRowId of ids) await this.webhooks.add(WebhooksJob.ApplyGithubDelivery, { deliveryRowId }, { jobId: `delivery-${deliveryRowId}` });
    return { requeued: ids.length, purged: await this.deliveries.purgeApplied(now) };
  }
}
