import { Injectable, type OnModuleInit } from '@nestjs/common';
import { MetricsService } from '@/common/metrics/metrics.service';
import { PrismaService } from '@/common/prisma/prisma.service';

const LIVE_STATUSES = ['QUEUED', 'RUNNING'] as const;

/**
 * Usage-import metrics, read from Postgres at scrape time (the counts every import commits with
 * each page), so any replica reports the same totals. Deleting a code source deletes its imports:
 * Prometheus sees that as a counter reset, which rate() and increase() handle.
 */
@Injectable()
export class UsageMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly prisma: PrismaService,
  ) {}

  onModuleInit(): void {
    this.metrics.counterFromSource({
      name: 'dpa_usage_import_pages_total',
      help: 'Pages of workflow runs imported by CI usage imports (every import, all organizations); read from Postgres at scrape time',
      labelNames: [] as const,
      source: 'postgres',
      read: async () => {
        const sum = await this.prisma.usageImport.aggregate({ _sum: { pagesDone: true } });
        return [{ labels: {}, value: sum._sum.pagesDone ?? 0 }];
      },
    });
    this.metrics.counterFromSource({
      name: 'dpa_usage_import_records_total',
      help: 'Records imported by CI usage imports, by kind (workflow runs, jobs); read from Postgres at scrape time',
      labelNames: ['kind'] as const,
      source: 'postgres',
      read: async () => {
        const sum = await this.prisma.usageImport.aggregate({ _sum: { runsImported: true, jobsImported: true } });
        return [
          { labels: { kind: 'runs' }, value: sum._sum.runsImported ?? 0 },
          { labels: { kind: 'jobs' }, value: sum._sum.jobsImported ?? 0 },
        ];
      },
    });
    this.metrics.gaugeFromSource({
      name: 'dpa_usage_imports',
      help: 'CI usage imports waiting (QUEUED) or running (RUNNING), and of those how many wait for a provider rate limit (rate_limited="true"); read from Postgres at scrape time',
      labelNames: ['status', 'rate_limited'] as const,
      source: 'postgres',
      read: async () => {
        const now = new Date();
        const [all, limited] = await Promise.all([
          this.prisma.usageImport.groupBy({ by: ['status'], where: { status: { in: [...LIVE_STATUSES] } }, _count: { _all: true } }),
          this.prisma.usageImport.groupBy({
            by: ['status'],
            where: { status: { in: [...LIVE_STATUSES] }, rateLimitedUntil: { gt: now } },
            _count: { _all: true },
          }),
        ]);
        return LIVE_STATUSES.flatMap((status) => {
          const total = all.find((r) => r.status === status)?._count._all ?? 0;
          const waiting = limited.find((r) => r.status === status)?._count._all ?? 0;
          return [
            { labels: { status, rate_limited: 'true' }, value: waiting },
            { labels: { status, rate_limited: 'false' }, value: total - waiting },
          ];
        });
      },
    });
  }
}
