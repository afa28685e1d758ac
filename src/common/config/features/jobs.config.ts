import { QueueName } from '@/common/queues/queue-names';
import { feature, int, pattern } from '../variables';

/** A BullMQ worker's settings (passed to its Worker when it is created). */
export interface WorkerSettings {
  concurrency: number;
  lockDuration?: number;
  stalledInterval?: number;
  maxStalledCount?: number;
}

/** BullMQ: the queues' key prefix, the default options of every job, and each queue's worker settings. */
export const jobsConfig = feature(
  'Background jobs',
  {
    QUEUE_PREFIX: pattern(/^[a-z][a-z0-9-]{0,30}$/, 'must be a short lower-case prefix', { default: 'dpa', doc: 'BullMQ key prefix in Redis' }),
    JOB_ATTEMPTS: int({
      min: 1,
      max: 100,
      default: 5,
      doc: 'attempts of a background job before it fails for good (repeatable jobs set their own)',
      comment: "attempts of a background job, and the first retry's delay (doubling after)",
    }),
    JOB_BACKOFF_MS: int({ min: 10, max: 3_600_000, default: 1_000, doc: "delay before a failed job's first retry; each next retry waits twice as long" }),
    WORKER_CONCURRENCY: int({
      min: 1,
      max: 256,
      default: 4,
      doc: 'jobs a worker process runs at once on each queue whose jobs are independent (merge-queue executors, usage imports, webhook deliveries); the other queues run one at a time',
      comment: 'jobs run at once per worker on the queues whose jobs are independent',
    }),
    JOB_SCHEDULER_CHECK_INTERVAL_MS: int({
      min: 100,
      max: 86_400_000,
      default: 60_000,
      doc: 'how often each worker checks that its BullMQ job schedulers (the merge-queue sweeps, the commit-status repair, domain re-verification, maintenance) still exist in Redis and re-creates any that were lost',
      comment: 'how often workers check that their job schedulers (sweeps, re-verification) survived in Redis',
    }),
  },
  (v) => ({
    queuePrefix: v.QUEUE_PREFIX,
    jobSchedulerCheckIntervalMs: v.JOB_SCHEDULER_CHECK_INTERVAL_MS,
    jobs: {
      /** Attempts of a job before it fails for good (repeatable jobs set their own). */
      attempts: v.JOB_ATTEMPTS,
      /** The first retry's delay; each next one doubles. */
      backoffMs: v.JOB_BACKOFF_MS,
      workers: workerSettings(v.WORKER_CONCURRENCY),
    },
  }),
);

/**
 * Stalls (its worker died or was blocked past the lock) after which a usage import is failed
 * rather than resumed again: an import that kills its worker every time (out of memory on the same
 * page) must not go round every worker a hundred times.
 */
export const USAGE_IMPORT_MAX_STALLS = 2;

/**
 * Each queue's worker. `parallel` (WORKER_CONCURRENCY) for the queues whose jobs are independent;
 * one at a time where order matters (commit statuses: the newest revision wins in the process) or
 * the work is periodic. Resumable jobs (usage imports, merge-queue executors) are taken over
 * quickly when their worker dies (short lock, frequent stalled check); merge-queue executors are never
 * failed for stalling, usage imports after USAGE_IMPORT_MAX_STALLS stalls.
 */
function workerSettings(parallel: number): Readonly<Record<QueueName, WorkerSettings>> {
  const resumable = { lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 100 };
  return {
    [QueueName.Maintenance]: { concurrency: 1 },
    [QueueName.Domains]: { concurrency: 1 },
    [QueueName.MergeQueues]: { concurrency: parallel, ...resumable },
    [QueueName.UsageImports]: { concurrency: parallel, ...resumable, maxStalledCount: USAGE_IMPORT_MAX_STALLS },
    [QueueName.Webhooks]: { concurrency: parallel },
    [QueueName.CommitStatuses]: { concurrency: 1 },
  };
}
