import type { EventEmitter } from 'node:events';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import { dependencyStatus } from '@/common/errors/dependency-errors';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { QueueName } from './queue-names';
import { QueueMetrics } from './queue-metrics';

const queues = BullModule.registerQueue(...Object.values(QueueName).map((name) => ({ name })));

/** Without an error listener BullMQ prints a stack trace per reconnect attempt; log outages once instead. */
@Injectable()
class QueueConnectionWatch implements OnModuleInit {
  constructor(private readonly moduleRef: ModuleRef) {}

  onModuleInit(): void {
    for (const name of Object.values(QueueName)) {
      const queue = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
      queue.on('error', (error: Error) => dependencyStatus.down(`redis (queue ${name})`, error));
      (queue.getBackend() as unknown as EventEmitter).on('ready', () => dependencyStatus.up(`redis (queue ${name})`));
    }
  }
}

/** BullMQ on the configured Redis, with the default job options every queue uses. */
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        connection: { url: config.redisUrl, maxRetriesPerRequest: null },
        prefix: config.queuePrefix,
        defaultJobOptions: {
          attempts: config.jobs.attempts,
          backoff: { type: 'exponential', delay: config.jobs.backoffMs },
          removeOnComplete: { age: 24 * 3600, count: 1_000 },
          removeOnFail: { age: 7 * 24 * 3600 },
        },
      }),
    }),
    queues,
  ],
  providers: [QueueConnectionWatch, QueueMetrics],
  exports: [queues],
})
export class QueuesModule {}
