import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { ServerErrors } from '@/common/errors/common.errors';
import { DEPENDENCY_RETRY_AFTER_SECONDS, dependencyStatus } from '@/common/errors/dependency-errors';
import type { JobQueue, PayloadsOf } from '@/common/queues/job-handlers';
import { QueueName, UsageImportsJob } from '@/common/queues/queue-names';
import { codeSourceDeduplicationId, IMPORT_ATTEMPTS, IMPORT_BACKOFF_MS, importJobId } from './usage-rules';

export interface UsageImportJobData {
  importId: string;
  organizationId: string;
  codeSourceId: string;
  /** Rate limits met in a row (the worker backs off further each time); reset by a committed page. */
  rateLimitHits?: number;
}

/** What each job of the usage-imports queue carries (its processor is UsageImportsProcessor). */
export type UsageImportsPayloads = PayloadsOf<typeof UsageImportsJob, { [UsageImportsJob.ImportCodeSource]: UsageImportJobData }>;

/**
 * Enqueues usage imports from an API process. The shared BullMQ connection waits for Redis
 * forever (maxRetriesPerRequest: null, right for workers); a request must not, so this producer
 * has a connection of its own that never queues commands while Redis is away, and every add is
 * bounded by REDIS_COMMAND_TIMEOUT_MS: a Redis that is down or silent is a 503 in about that long.
 */
@Injectable()
export class UsageImportProducer implements OnModuleDestroy {
  private readonly logger = new Logger(UsageImportProducer.name);
  private readonly queue: Queue;
  private readonly timeoutMs: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.timeoutMs = config.redisCommandTimeoutMs;
    this.queue = new Queue(QueueName.UsageImports, {
      connection: {
        url: config.redisUrl,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: config.redisConnectTimeoutMs,
        commandTimeout: config.redisCommandTimeoutMs,
      },
      prefix: config.queuePrefix,
    });
    this.queue.on('error', (error: Error) => dependencyStatus.down('redis (usage import producer)', error));
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close().catch(() => undefined);
  }

  /**
   * Adds the import's job unless the code source already has one waiting, running or delayed
   * (BullMQ deduplication by code source, atomic in Redis, so it holds across API processes).
   * True when this call added it.
   */
  async enqueue(data: UsageImportJobData): Promise<boolean> {
    const jobId = importJobId(data.importId);
    const jobs: JobQueue<UsageImportsPayloads> = this.queue;
    const job = await this.bounded(
      jobs.add(UsageImportsJob.ImportCodeSource, data, {
        jobId,
        deduplication: { id: codeSourceDeduplicationId(data.codeSourceId) },
        attempts: IMPORT_ATTEMPTS,
        backoff: { type: 'exponential', delay: IMPORT_BACKOFF_MS },
        // Finished jobs go at once: the import's row keeps its outcome, and the deduplication id is free again.
        removeOnComplete: true,
        removeOnFail: { age: 24 * 3600, count: 1_000 },
      }),
    );
    return job.id === jobId;
  }

  private async bounded<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Command timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      return await Promise.race([work, timeout]);
    } catch (error) {
      // The add may still land once Redis answers: its import then finds no row of an API call and creates its own.
      work.catch(() => undefined);
      this.logger.warn({ err: error }, 'usage import not enqueued: Redis unavailable');
      throw new AppError(ServerErrors.SERVICE_UNAVAILABLE, {
        message: 'The job queue (Redis) is unavailable; try again shortly.',
        headers: { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }
}
