import { feature, int } from '../variables';

/** Merge queues: their limits, and the worker's executors, retries, commit statuses and sweeps. */
export const mergeQueuesConfig = feature(
  'Merge queues',
  {
    MERGE_QUEUE_MAX_LIVE_ENTRIES: int({
      min: 1,
      max: 100_000,
      default: 1_000,
      doc: 'entries of one merge queue not yet merged, removed or failed; one more is a `422` (`dpa:MergeQueue:ENTRY_LIMIT_REACHED`, naming the limit)',
    }),
    MERGE_QUEUE_MAX_PER_ORGANIZATION: int({
      min: 1,
      max: 100_000,
      default: 100,
      doc: 'merge queues of one organization; one more is a `422` (`dpa:MergeQueue:QUEUE_LIMIT_REACHED`, naming the limit)',
    }),
    MERGE_QUEUE_SWEEP_INTERVAL_MS: int({
      min: 100,
      max: 3_600_000,
      default: 10_000,
      doc: 'how often a worker looks for merge queues whose operations wait with no executor (a kick lost when Redis was down, an API process that died between its commit and the kick) and ticks queues whose CI may have timed out',
    }),
    MERGE_QUEUE_LEASE_MS: int({
      min: 300,
      max: 600_000,
      default: 15_000,
      doc: "the merge-queue executor's lease on a queue (fencing, docs/merge-queue.md): renewed every third of it; an executor that stops renewing (a stalled or dead process) is replaced this long after its last renewal, and nothing it writes afterwards is applied",
      comment: "The executor's lease on a queue (fencing; renewed every third of it).",
    }),
    MERGE_QUEUE_EXECUTOR_SLICE_MS: int({
      min: 100,
      max: 600_000,
      default: 2_000,
      doc: "how long one merge-queue executor run keeps its worker slot: past it the run starts no new operation, finishes those in flight and gives the slot back, and the queue's next run waits its turn behind other queues' runs, so a busy queue cannot hold a slot while others wait",
    }),
    MERGE_QUEUE_EXECUTOR_RETRY_DELAY_MS: int({
      min: 100,
      max: 600_000,
      default: 2_000,
      doc: "after a merge-queue executor job failed (a git error, a lost database): how long before the queue's next executor starts, which reconciles what the failed one left",
    }),
    MERGE_QUEUE_RETRY_BASE_MS: int({
      min: 10,
      max: 3_600_000,
      default: 1_000,
      doc: "after a merge-queue executor run failed (a provider 5xx or 429, the network): the first retry waits up to this long, each further failure in a row doubles the ceiling, with full jitter; a provider's `Retry-After` is a floor",
      comment: "a failed executor run waits (exponential backoff, full jitter, a provider's Retry-After as floor)",
    }),
    MERGE_QUEUE_RETRY_MAX_MS: int({ min: 10, max: 86_400_000, default: 300_000, doc: 'the longest such wait, `Retry-After` included' }),
    MERGE_QUEUE_QUARANTINE_AFTER: int({
      min: 1,
      max: 1_000,
      default: 10,
      doc: "a queue whose executor failed this many times in a row is quarantined: `paused`, the reason in its events and on the affected entries' `block`, until resumed; other queues go on",
      comment: 'failures in a row before a queue is quarantined (paused, with the reason)',
    }),
    MERGE_QUEUE_STATUS_POST_ATTEMPTS: int({
      min: 1,
      max: 15,
      default: 10,
      doc: 'attempts of one merge-queue commit status post on GitHub before it counts as refused and is kept for the repair job; the newest revision posted per commit is remembered longer than all of them take',
    }),
    MERGE_QUEUE_STATUS_POST_BACKOFF_MS: int({
      min: 10,
      max: 10_000,
      default: 2_000,
      doc: "delay before a status post's first retry; each next one doubles",
    }),
    MERGE_QUEUE_STATUS_REPAIR_INTERVAL_MS: int({
      min: 100,
      max: 86_400_000,
      default: 300_000,
      doc: 'how often a worker posts again, from the queue as it is then, the commit statuses GitHub refused on every attempt',
    }),
    MERGE_QUEUE_PATHS_SWEEP_INTERVAL_MS: int({
      min: 1_000,
      max: 86_400_000,
      default: 60_000,
      doc: 'how often a worker looks for live entries of merge queues with path groups whose changed paths were never kept (the job that was to ask them lost with Redis, or out of attempts) and asks them; a queue whose job is on its way is left alone for two intervals, one whose job failed for five',
      comment: 'how often a worker asks the changed paths of entries whose job to ask them was lost (queues with path groups)',
    }),
    MERGE_QUEUE_PATH_MATCH_DEADLINE_MS: int({
      min: 1,
      max: 600_000,
      default: 2_000,
      doc: 'how long matching one PR\'s changed paths against its queue\'s path groups may take (on a worker thread, counted from when it was asked): past it the PR is in every lane with the reason, never a stall (docs/merge-queue.md, "Lanes")',
      comment: "How long matching one PR's changed paths to its queue's path groups may take; past it the PR is in every lane.",
    }),
    MERGE_QUEUE_PATH_MATCH_THREADS: int({
      min: 1,
      max: 16,
      default: 2,
      doc: 'worker threads of each process that match changed paths against path groups too large to match on the event loop (a PR of many long paths against many patterns)',
    }),
    MERGE_QUEUE_VIEW_LINK_TTL_DAYS: int({
      min: 1,
      max: 365,
      default: 30,
      doc: 'how long a merge queue\'s view link (the page behind its commit statuses, `GET /view/merge-queues/{id}/{token}`) works: the link the statuses carry is renewed once less than half of it is left, and POST /merge-queues/{id}/view-links makes links of at most this long. Tokens are signed with a key derived from `CREDENTIALS_KEYS` (the first signs, every one verifies), never stored (docs/merge-queues-api.md, "The queue page")',
      comment: "How long a queue's page link (behind its commit statuses) works; renewed at half.",
    }),
  },
  (v) => ({
    mergeQueues: {
      /** Entries of one queue not yet merged, removed or failed; one more is a 422. */
      maxLiveEntries: v.MERGE_QUEUE_MAX_LIVE_ENTRIES,
      /** Merge queues of one organization; one more is a 422. */
      maxPerOrganization: v.MERGE_QUEUE_MAX_PER_ORGANIZATION,
      /** How often a worker looks for queues whose operations wait without an executor (a lost kick, a dead process). */
      sweepIntervalMs: v.MERGE_QUEUE_SWEEP_INTERVAL_MS,
      /**
       * How long an executor's lease on a queue lasts unless renewed (renewed every third of it); an
       * executor that stops renewing (a stalled process) is replaced this long after its last renewal.
       */
      leaseMs: v.MERGE_QUEUE_LEASE_MS,
      /** How long one executor run keeps its worker slot before giving it back to other queues' runs. */
      executorSliceMs: v.MERGE_QUEUE_EXECUTOR_SLICE_MS,
      /** How long after a failed executor job the queue's next executor starts. */
      executorRetryDelayMs: v.MERGE_QUEUE_EXECUTOR_RETRY_DELAY_MS,
      /** After a failed executor run: exponential backoff with full jitter from this base... */
      retryBaseMs: v.MERGE_QUEUE_RETRY_BASE_MS,
      /** ...up to this (a provider's Retry-After included). */
      retryMaxMs: v.MERGE_QUEUE_RETRY_MAX_MS,
      /** A queue whose executor failed this many times in a row is quarantined (paused with the reason). */
      quarantineAfter: v.MERGE_QUEUE_QUARANTINE_AFTER,
      /** Attempts of one commit status post, and the first retry's delay (each next one doubles). */
      statusPostAttempts: v.MERGE_QUEUE_STATUS_POST_ATTEMPTS,
      statusPostBackoffMs: v.MERGE_QUEUE_STATUS_POST_BACKOFF_MS,
      /** How often a worker posts again, from the queue's current state, the statuses whose every attempt the provider refused. */
      statusRepairIntervalMs: v.MERGE_QUEUE_STATUS_REPAIR_INTERVAL_MS,
      /** How often the worker looks for live entries of queues with path groups whose changed paths were never kept, and asks them. */
      pathsSweepIntervalMs: v.MERGE_QUEUE_PATHS_SWEEP_INTERVAL_MS,
      /** How long matching one PR's changed paths may take (from when it was asked); past it the PR is in every lane. */
      pathMatchDeadlineMs: v.MERGE_QUEUE_PATH_MATCH_DEADLINE_MS,
      /** Worker threads per process for matches too large for the event loop. */
      pathMatchThreads: v.MERGE_QUEUE_PATH_MATCH_THREADS,
      /** How long a view link works (the status link is renewed at half of it), in days. */
      viewLinkTtlDays: v.MERGE_QUEUE_VIEW_LINK_TTL_DAYS,
    },
  }),
);
