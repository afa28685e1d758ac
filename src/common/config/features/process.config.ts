import { feature, int, oneOf, pattern } from '../variables';

/** An IPv4 or IPv6 address to listen on (no host names: what a listener binds must not depend on DNS). */
const LISTEN_ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*)$/;
const listenAddress = (doc: string, comment: string) =>
  pattern(LISTEN_ADDRESS, 'must be an IPv4 or IPv6 address to listen on, such as 127.0.0.1, ::1 or 0.0.0.0', { default: '127.0.0.1', doc, comment });

export const processConfig = feature(
  'Process',
  {
    // Unset is production: only an explicit development/test turns on the built-in key, LOCAL_GIT and failpoints.
    NODE_ENV: oneOf(['production', 'development', 'test'], {
      default: 'production',
      doc: '**Unset (or empty) means production**, so a forgotten variable never turns a development convenience on: production requires `CREDENTIALS_KEYS`, keeps `LOCAL_GIT` off unless `GIT_LOCAL_ENABLED=true`, and never arms failpoints. `npm start` sets `development` and `npm test` sets `test` themselves',
      comment: 'production (also when unset), development or test',
    }),
    LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      default: 'info',
      doc: 'the least severe level the API and worker log (`silent`: nothing)',
    }),
    LOG_FORMAT: oneOf(['json', 'text'], {
      default: 'json',
      doc: 'how the API and worker write their logs: `json`, one JSON line each (for a log collector); `text`, one readable line each (time, level, message, fields) written at once, for a terminal, where the `api listening` and `worker started` lines follow `LOG_LEVEL` too (as JSON they are always written). `npm start` sets `text` and `LOG_LEVEL=warn` unless they are set, so that a developer sees only warnings and errors',
      comment: 'json (one JSON line each) or text (readable lines, for a terminal; npm start sets it)',
    }),
    METRICS_PORT: int({
      min: 0,
      max: 65535,
      default: 9464,
      doc: "the API's Prometheus listener (`GET /metrics`, see [Metrics](observability.md#metrics)); a port of its own, never the public `PORT`. `0`: any free port (logged as `metricsPort` in the `api listening` line)",
      comment: "The API's Prometheus listener (GET /metrics), never the public port; 0 = any free port",
    }),
    METRICS_HOST: listenAddress(
      "the address the API's Prometheus listener binds. The default, loopback, keeps it off every network: a scrape needs no token. In a container set `0.0.0.0` (the image does) so that Prometheus can reach it over the container network, and keep the port unpublished (see [Deploy](deploy.md#deploy))",
      "The API's metrics listener's address: loopback by default; 0.0.0.0 in a container (the image sets it)",
    ),
    METRICS_SOURCE_CACHE_MS: int({
      min: 0,
      max: 300_000,
      default: 5_000,
      doc: 'how long a process reuses what a scrape read from Postgres and Redis (queue depths, merge-queue and usage-import totals): concurrent scrapes share one read and later ones within this time reuse it, so a scrape storm costs one round of those queries per process per period. `0`: concurrent scrapes still share one read',
    }),
    WORKER_HEALTH_PORT: int({
      min: 0,
      max: 65535,
      default: 9465,
      doc: "the worker's listener for `GET /health/live`, `GET /health/ready` and `GET /metrics`. `0`: any free port (logged as `healthPort` in the `worker started` line)",
      comment: "The worker's /health/live, /health/ready and /metrics listener; 0 = any free port",
    }),
    WORKER_HEALTH_HOST: listenAddress(
      "the address the worker's health and metrics listener binds. Loopback by default; in a container set `0.0.0.0` (the image does) so that the orchestrator's probes and Prometheus reach it",
      "The worker's health and metrics listener's address: loopback by default; 0.0.0.0 in a container (the image sets it)",
    ),
    SHUTDOWN_GRACE_MS: int({
      min: 0,
      max: 600_000,
      default: 25_000,
      doc: 'on SIGTERM (or SIGINT) a process stops taking work and finishes what is in flight (HTTP requests; BullMQ jobs) within this, then exits 0; past it, it exits 1. Give the container longer than this before SIGKILL',
      comment: 'SIGTERM: time to finish in-flight requests and jobs before exiting anyway',
    }),
  },
  (v) => ({
    environment: v.NODE_ENV,
    logLevel: v.LOG_LEVEL,
    logFormat: v.LOG_FORMAT,
    metricsPort: v.METRICS_PORT,
    metricsHost: v.METRICS_HOST,
    /** Scrape-time reads of Postgres and Redis are shared and reused this long (MetricsService.sourceReader). */
    metricsSourceCacheMs: v.METRICS_SOURCE_CACHE_MS,
    workerHealthPort: v.WORKER_HEALTH_PORT,
    workerHealthHost: v.WORKER_HEALTH_HOST,
    shutdownGraceMs: v.SHUTDOWN_GRACE_MS,
  }),
);
