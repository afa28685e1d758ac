import type { EventEmitter } from 'node:events';
import { WorkerHost } from '@nestjs/bullmq';
import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { dependencyStatus } from '@/common/errors/dependency-errors';
import type { JobHandlers, JobPayloads } from './job-handlers';
import type { QueueName } from './queue-names';
import { type RepeatableJob, RepeatableJobs } from './repeatable-jobs';

/** Where @nestjs/bullmq reads a processor's Worker options (`@Processor(name, options)` writes it). */
const WORKER_METADATA = 'bullmq:worker_metadata';

/**
 * The one way a queue's jobs run. A processor declares its queue (`@Processor(QueueName.X)`), its
 * payload map `P` (job name -> what the job carries), its `handlers` (job name -> handler, given
 * its job typed by `P`; JobHandlerCheck refuses a worker missing one) and, if any, its
 * `repeatableJobs()`; this base owns the rest, the same for every queue:
 * - the Worker's concurrency and lock settings, from config (`jobs.workers[queue]`);
 * - repeatable jobs kept in Redis by RepeatableJobs (upserted at start, re-created when lost);
 * - one structured log line per job done (queue, job, id, attempt, duration, result) and per job
 *   failed (with `failureContext(job)`), and the worker's Redis connection in the dependency status.
 */
export abstract class JobProcessor<P extends JobPayloads = JobPayloads> extends WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger: Logger;
  abstract readonly handlers: JobHandlers<P>;
  /** The queue's job schedulers, when it has repeatable jobs. */
  schedulers?: RepeatableJobs;

  protected constructor(
    protected readonly queueName: QueueName,
    protected readonly config: AppConfig,
    protected readonly queue?: Queue,
  ) {
    super();
    this.logger = new Logger(new.target.name);
    // Nest creates the Worker from this metadata after every provider is constructed (BullExplorer,
    // onModuleInit): settings from config must be in place by then, and a decorator cannot read config.
    Reflect.defineMetadata(
      WORKER_METADATA,
      { ...((Reflect.getMetadata(WORKER_METADATA, new.target) as object | undefined) ?? {}), ...config.jobs.workers[queueName] },
      new.target,
    );
  }

  /** The job schedulers this queue keeps in Redis; none unless overridden. */
  protected repeatableJobs(): RepeatableJob[] {
    return [];
  }

  /** What a failure log line says about the job besides its name, id and attempts. */
  protected failureContext(job: Job): Record<string, unknown> {
    return { data: job.data as unknown };
  }

  async onApplicationBootstrap(): Promise<void> {
    const dependency = `redis (worker ${this.queueName})`;
    this.worker.on('error', (error: Error) => dependencyStatus.down(dependency, error));
    (this.worker.getBackend() as unknown as EventEmitter).on('ready', () => dependencyStatus.up(dependency));
    this.worker.on('failed', (job: Job | undefined, error: Error) => {
      if (job)
        this.logger.warn(
          { err: error, queue: this.queueName, job: job.name, jobId: job.id, attempts: job.attemptsMade, ...this.failureContext(job) },
          'job failed',
        );
    });
    const jobs = this.repeatableJobs();
    if (!jobs.length) return;
    if (!this.queue) throw new Error(`${this.constructor.name} has repeatable jobs but was given no queue`);
    this.schedulers = new RepeatableJobs(this.queue, jobs, this.config.jobSchedulerCheckIntervalMs);
    await this.schedulers.start();
  }

  onApplicationShutdown(): void {
    this.schedulers?.stop();
  }

  /** Runs the job's handler; an unknown job name is an error (the job fails, never silently done). */
  async process(job: Job, token?: string): Promise<unknown> {
    // BullMQ hands any job of the queue: its name picks the handler, whose payload its producers
    // were held to (JobQueue), so this one dispatch is where the job meets its type.
    const handler = (this.handlers as Partial<Record<string, (job: Job, token?: string) => Promise<unknown>>>)[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on ${this.queueName}`);
    const started = Date.now();
    const result = await handler(job, token);
    this.logger.log({ queue: this.queueName, job: job.name, jobId: job.id, attempt: job.attemptsMade + 1, ms: Date.now() - started, result }, 'job done');
    return result;
  }
}
