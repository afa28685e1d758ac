import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { MetricsService } from '@/common/metrics/metrics.service';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import { MERGE_QUEUE_STATUSES, type MergeQueueState } from '../planner';
import { batchRowId } from './ids';
import { mergeQueueMetricFacts } from './metric-facts';
import { LACKS_PATHS_SQL, QUEUES_WITH_PATH_GROUPS_SQL } from './store/entry-sql';
import { LIVE_BATCH_STATUSES, LIVE_ENTRY_STATUSES } from './store/queue-state-codec';

/**
 * Merge-queue metrics. Depths are read from Postgres at scrape time (every replica reports the same),
 * summed over all queues: a queue id label would grow with every tenant's queues, so the per-queue
 * picture stays in the API (GET /merge-queues/{id}/chain) and the metrics carry the largest backlog
 * of any one queue instead. Landings, CI runs per landed PR and bisections are observed by the
 * process that records them (MergeQueueAfterCommit calls `applied` after each committed event).
 */
@Injectable()
export class MergeQueueMetrics implements OnModuleInit {
  private readonly logger = new Logger(MergeQueueMetrics.name);

  constructor(
    private readonly metrics: MetricsService,
    private readonly prisma: PrismaService,
  ) {}

  onModuleInit(): void {
    this.metrics.gaugeFromSource({
      name: 'dpa_merge_queues',
      help: 'Merge queues by status, read from Postgres at scrape time',
      labelNames: ['status'] as const,
      source: 'postgres',
      read: async () => {
        const rows = await this.prisma.mergeQueue.groupBy({ by: ['status'], _count: { _all: true } });
        return MERGE_QUEUE_STATUSES.map((status) => ({ labels: { status }, value: rows.find((r) => r.status === status)?._count._all ?? 0 }));
      },
    });
    this.metrics.gaugeFromSource({
      name: 'dpa_merge_queue_entries',
      help: 'PRs in merge queues that have not reached a final status (queued = waiting), by status, over all queues; read from Postgres at scrape time',
      labelNames: ['status'] as const,
      source: 'postgres',
      read: async () => {
        const rows = await this.prisma.mergeQueueEntry.groupBy({ by: ['status'], where: { status: { in: [...LIVE_ENTRY_STATUSES] } }, _count: { _all: true } });
        return LIVE_ENTRY_STATUSES.map((status) => ({ labels: { status }, value: rows.find((r) => r.status === status)?._count._all ?? 0 }));
      },
    });
    this.metrics.gaugeFromSource({
      name: 'dpa_merge_queue_batches',
      help: 'Merge-queue batches that have not reached a final status, by status, over all queues; read from Postgres at scrape time',
      labelNames: ['status'] as const,
      source: 'postgres',
      read: async () => {
        const rows = await this.prisma.mergeQueueBatch.groupBy({ by: ['status'], where: { status: { in: [...LIVE_BATCH_STATUSES] } }, _count: { _all: true } });
        return LIVE_BATCH_STATUSES.map((status) => ({ labels: { status }, value: rows.find((r) => r.status === status)?._count._all ?? 0 }));
      },
    });
    this.metrics.gaugeFromSource({
      name: 'dpa_merge_queue_entries_paths_pending',
      help: 'PRs in merge queues with path groups whose lanes are not matched for their head under the current groups yet (in every lane until the worker matches them: a job on its way, or a lost one the paths sweep has not asked again); read from Postgres at scrape time',
      labelNames: [] as const,
      source: 'postgres',
      read: async () => {
        const rows = await this.prisma.$queryRaw<{ n: number }[]>(
          Prisma.sql`SELECT count(*)::int AS n FROM "MergeQueueEntry" WHERE "queueId" IN (${QUEUES_WITH_PATH_GROUPS_SQL}) AND ${LACKS_PATHS_SQL}`,
        );
        return [{ labels: {}, value: rows[0]?.n ?? 0 }];
      },
    });
    this.metrics.gaugeFromSource({
      name: 'dpa_merge_queue_entries_queued_max',
      help: 'The most PRs waiting (queued) in any one merge queue; read from Postgres at scrape time',
      labelNames: [] as const,
      source: 'postgres',
      read: async () => {
        const rows = await this.prisma.$queryRaw<
          { n: bigint | null }[]
        >`SELECT max(c) AS n FROM (SELECT count(*) AS c FROM "MergeQueueEntry" WHERE "status" = 'queued' GROUP BY "queueId") AS q`;
        return [{ labels: {}, value: Number(rows[0]?.n ?? 0) }];
      },
    });
  }

  /** After an event was committed: counts what it did. Never throws (metrics must not fail a request or job). */
  applied(queueId: string, before: MergeQueueState, after: MergeQueueState): void {
    if (before === after) return;
    try {
      const facts = mergeQueueMetricFacts(before, after);
      for (const runs of facts.ciRunsPerLandedPr) this.metrics.mergeQueueCiRunsPerLandedPr.observe(runs);
      if (facts.ciRunsPerLandedPr.length) this.metrics.mergeQueuePrsLanded.inc(facts.ciRunsPerLandedPr.length);
      if (facts.bisections) this.metrics.mergeQueueBisections.inc(facts.bisections);
      if (facts.landedBatchIds.length) void this.observeLandLatency(queueId, facts.landedBatchIds, Date.now());
    } catch (error) {
      this.logger.warn({ err: error }, 'merge-queue metrics: could not observe an event');
    }
  }

  /** A failure of the worker on one queue (never throws). */
  workerError(where: 'executor' | 'sweep'): void {
    this.metrics.mergeQueueWorkerErrors.inc({ where });
  }

  quarantined(): void {
    this.metrics.mergeQueueQuarantines.inc();
  }

  /** Land latency: from the last check report on the batch (the event trail) to now, the landing being recorded. */
  private async observeLandLatency(queueId: string, batchIds: string[], landedAt: number): Promise<void> {
    for (const id of batchIds) {
      try {
        const rows = await this.prisma.$queryRaw<{ createdAt: Date }[]>`
          SELECT "createdAt" FROM "MergeQueueEvent"
          WHERE "queueId" = ${queueId} AND "type" = 'checkReported' AND "detail"->>'batchId' = ${batchRowId(queueId, id)}
          ORDER BY "createdAt" DESC LIMIT 1`;
        // A batch with no required checks has no check to measure from.
        if (rows.length) this.metrics.mergeQueueLandLatency.observe(Math.max(0, landedAt - rows[0].createdAt.getTime()) / 1000);
      } catch (error) {
        this.logger.warn({ err: error }, 'merge-queue metrics: could not read the last check of a landed batch');
      }
    }
  }
}
