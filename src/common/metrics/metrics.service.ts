import { Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import {
  collectDefaultMetrics,
  Counter,
  type CounterConfiguration,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { sharedRead } from '@/common/lifecycle/shared-read';

/** Provider-call outcomes: a bounded set, whatever the provider answers. */
export type ProviderCallOutcome = 'ok' | 'client_error' | 'rate_limited' | 'server_error' | 'transport_error';

type SourceSample<L extends string> = { labels: Partial<Record<L, string>>; value: number };
/** A metric read from Postgres or Redis when Prometheus scrapes. */
type SourceOptions<L extends string> = {
  name: string;
  help: string;
  labelNames: readonly L[];
  source: string;
  timeoutMs?: number;
  read: () => Promise<SourceSample<L>[]>;
};

/**
 * The process's Prometheus registry and the metrics recorded as things happen. Metrics read from
 * Postgres or Redis at scrape time (queue depths, merge-queue and usage-import totals) are gauges
 * with a `collect` callback that their modules add through `gaugeFromSource`. One registry per
 * application instance: two apps in one test process never collide.
 *
 * Labels stay bounded: route templates (never raw paths), fixed enums, provider kinds. No
 * organization, queue, PR or key ids.
 */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  readonly registry = new Registry();

  /** The metrics below, each registered in this instance's registry. */
  private counter<L extends string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
    return new Counter({ ...config, registers: [this.registry] });
  }

  private gauge<L extends string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
    return new Gauge({ ...config, registers: [this.registry] });
  }

  private histogram<L extends string>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
    return new Histogram({ ...config, registers: [this.registry] });
  }

  readonly httpRequestDuration = this.histogram({
    name: 'dpa_http_request_duration_seconds',
    help: 'HTTP requests of the public API: time from arrival to the response finished, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });

  readonly providerCalls = this.counter({
    name: 'dpa_provider_calls_total',
    help: 'HTTP requests to git providers (GitHub, GitHub Enterprise, GitLab), by provider kind and outcome',
    labelNames: ['provider', 'outcome'] as const,
  });

  readonly providerRateLimitRemaining = this.gauge({
    name: 'dpa_provider_rate_limit_remaining',
    help: 'The x-ratelimit-remaining a provider last answered this process (whichever token made that request)',
    labelNames: ['provider'] as const,
  });

  readonly mergeQueueLandLatency = this.histogram({
    name: 'dpa_merge_queue_land_latency_seconds',
    help: 'Merge queues: from the last check report on a batch to its landing being recorded (the base ref moved)',
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
  });

  readonly mergeQueueCiRunsPerLandedPr = this.histogram({
    name: 'dpa_merge_queue_ci_runs_per_landed_pr',
    help: 'Merge queues: CI runs (batch candidates whose CI started) that held a PR, observed when the PR lands',
    buckets: [1, 2, 3, 4, 6, 8, 12, 16, 32],
  });

  readonly mergeQueuePrsLanded = this.counter({
    name: 'dpa_merge_queue_prs_landed_total',
    help: 'Merge queues: PRs landed (entries that became merged)',
  });

  readonly mergeQueueBisections = this.counter({
    name: 'dpa_merge_queue_bisections_total',
    help: 'Merge queues: bisections started (a failed batch whose PRs became a suspect group to isolate)',
  });

  readonly domainClaimsExpired = this.counter({
    name: 'dpa_domain_claims_expired_total',
    help: 'Domains: PENDING_VERIFICATION registrations deleted past DOMAIN_PENDING_TTL_MS, by the worker sweep (by="sweep") or when touched in the API (by="touch")',
    labelNames: ['by'] as const,
  });

  readonly mergeQueueWorkerErrors = this.counter({
    name: 'dpa_merge_queue_worker_errors_total',
    help: 'Merge queues: failures of the worker on one queue, by where (executor: a run that failed and is retried with backoff; sweep: one queue the sweep could not handle, the others went on)',
    labelNames: ['where'] as const,
  });

  readonly mergeQueueQuarantines = this.counter({
    name: 'dpa_merge_queue_quarantines_total',
    help: 'Merge queues: queues the worker quarantined (paused with the reason) after failures in a row or a refusal that waiting will not change',
  });

  readonly scrapeErrors = this.counter({
    name: 'dpa_metrics_source_errors_total',
    help: 'Scrape-time reads that failed or timed out (their gauges are left out of that scrape), by source',
    labelNames: ['source'] as const,
  });

  /** METRICS_SOURCE_CACHE_MS: how long a scrape-time read of Postgres or Redis is reused. */
  private readonly sourceCacheMs: number;

  constructor(@Optional() @Inject(APP_CONFIG) config?: AppConfig) {
    this.sourceCacheMs = config?.metricsSourceCacheMs ?? 5_000;
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * A gauge whose values are read when Prometheus scrapes (from Postgres or Redis, so every replica
   * reports the same). A read that fails or takes longer than `timeoutMs` leaves the gauge out of
   * that scrape and counts in `dpa_metrics_source_errors_total`; a scrape never hangs on a dependency.
   */
  gaugeFromSource<L extends string>(options: SourceOptions<L>): Gauge<L> {
    const read = this.sourceReader(options);
    return this.gauge<L>({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      async collect() {
        this.reset();
        for (const s of await read()) this.set(s.labels as Partial<Record<L, string | number>>, s.value);
      },
    });
  }

  /** A counter whose total is read at scrape time (a sum kept in Postgres): Prometheus sees a counter, any replica the same value. */
  counterFromSource<L extends string>(options: SourceOptions<L>): Counter<L> {
    const read = this.sourceReader(options);
    return this.counter<L>({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      async collect() {
        this.reset();
        for (const s of await read()) this.inc(s.labels as Partial<Record<L, string | number>>, s.value);
      },
    });
  }

  /**
   * Reads a source's samples within its time limit; a failed or late read gives none and is counted.
   * Scrapes arriving while a read is in flight share it, and its samples are reused for
   * METRICS_SOURCE_CACHE_MS after it settles: a scrape storm costs one read per source per period.
   */
  private sourceReader<L extends string>(options: SourceOptions<L>): () => Promise<SourceSample<L>[]> {
    const scrapeErrors = this.scrapeErrors;
    return sharedRead(this.sourceCacheMs, async () => {
      try {
        return await withTimeout(options.read(), options.timeoutMs ?? 2_000);
      } catch {
        scrapeErrors.inc({ source: options.source });
        return [];
      }
    });
  }

  /** Prometheus text exposition of everything this process knows. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  onModuleDestroy(): void {
    this.registry.clear();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
