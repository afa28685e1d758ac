import { feature, int, oneOf } from '../variables';

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
    METRICS_PORT: int({
      min: 0,
      max: 65535,
      default: 9464,
      doc: "the API's Prometheus listener (`GET /metrics`, see [Metrics](observability.md#metrics)); a port of its own, never the public `PORT`. `0`: any free port (logged as `metricsPort` in the `api listening` line)",
      comment: "The API's Prometheus listener (GET /metrics), never the public port; 0 = any free port",
    }),
    WORKER_HEALTH_PORT: int({
      min: 0,
      max: 65535,
      default: 9465,
      doc: "the worker's listener for `GET /health/live`, `GET /health/ready` and `GET /metrics`. `0`: any free port (logged as `healthPort` in the `worker started` line)",
      comment: "The worker's /health/live, /health/ready and /metrics listener; 0 = any free port",
    }),
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
    metricsPort: v.METRICS_PORT,
    workerHealthPort: v.WORKER_HEALTH_PORT,
    shutdownGraceMs: v.SHUTDOWN_GRACE_MS,
  }),
);
