import type { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import type { JobSchedulerTemplateOptions, Queue, RepeatOptions } from 'bullmq';

/** One BullMQ job scheduler: its id (also its jobs' name), how often, and its jobs' options. */
export interface RepeatableJob {
  id: string;
  repeat: Omit<RepeatOptions, 'key'>;
  opts?: JobSchedulerTemplateOptions;
  data?: Record<string, unknown>;
}

/**
 * Keeps a queue's job schedulers in Redis, for every worker that has periodic jobs (the
 * merge-queue sweep, domain re-verification, maintenance). Schedulers live only in Redis: a Redis
 * that restarted without its data, failed over to a replica that had not received them, or was
 * flushed, has lost them, and nothing else would re-create them before the worker restarts. So
 * they are upserted by id (any number of workers may do it at once) at start, again whenever the
 * queue's connection becomes ready (a reconnect), and whenever the periodic check
 * (JOB_SCHEDULER_CHECK_INTERVAL_MS) finds one missing, which also covers data lost without a
 * reconnect. A scheduler that exists is left alone (an upsert would move its next run).
 */
export class RepeatableJobs {
  private readonly logger = new Logger(RepeatableJobs.name);
  private timer?: NodeJS.Timeout;
  private readonly onReady = () =>
    void this.upsertAll().catch((error: unknown) =>
      this.logger.warn({ err: error, queue: this.queue.name }, 'job schedulers not upserted; retried on the next check'),
    );
  /** Schedulers found missing and re-created by the checks since start. */
  recreated = 0;

  constructor(
    private readonly queue: Queue,
    private readonly jobs: readonly RepeatableJob[],
    private readonly checkIntervalMs: number,
  ) {}

  /** Upserts every scheduler now, then keeps them (reconnects, periodic check) until stop(). */
  async start(): Promise<void> {
    (this.queue.getBackend() as unknown as EventEmitter).on('ready', this.onReady);
    this.timer = setInterval(
      () =>
        void this.ensure().catch((error: unknown) =>
          this.logger.warn({ err: error, queue: this.queue.name }, 'job schedulers not checked; retried on the next check'),
        ),
      this.checkIntervalMs,
    );
    this.timer.unref();
    await this.upsertAll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    (this.queue.getBackend() as unknown as EventEmitter).off('ready', this.onReady);
  }

  /** Re-creates the schedulers Redis no longer has; returns how many. */
  async ensure(): Promise<number> {
    let made = 0;
    for (const job of this.jobs) {
      if (await this.queue.getJobScheduler(job.id)) continue;
      await this.upsert(job);
      made++;
      this.logger.warn({ queue: this.queue.name, scheduler: job.id }, 'job scheduler was missing from Redis; re-created');
    }
    this.recreated += made;
    return made;
  }

  private async upsertAll(): Promise<void> {
    for (const job of this.jobs) await this.upsert(job);
  }

  private async upsert(job: RepeatableJob): Promise<void> {
    await this.queue.upsertJobScheduler(job.id, job.repeat, { name: job.id, ...(job.data && { data: job.data }), ...(job.opts && { opts: job.opts }) });
  }
}
