import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import { MetricsService } from '@/common/metrics/metrics.service';
import { QueueName } from './queue-names';

/** Job states reported per queue (BullMQ's names). */
export const REPORTED_JOB_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** dpa_bullmq_jobs{queue, state}: read from Redis at scrape time, so every process reports the same numbers. */
@Injectable()
export class QueueMetrics implements OnModuleInit {
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    const queues = Object.values(QueueName).map((name) => this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }));
    this.metrics.gaugeFromSource({
      name: 'dpa_bullmq_jobs',
      help: 'BullMQ jobs per queue and state (waiting, active, delayed, failed), read from Redis at scrape time',
      labelNames: ['queue', 'state'] as const,
      source: 'redis',
      read: async () => {
        const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...REPORTED_JOB_STATES)));
        return queues.flatMap((queue, i) => REPORTED_JOB_STATES.map((state) => ({ labels: { queue: queue.name, state }, value: counts[i][state] ?? 0 })));
      },
    });
  }
}
