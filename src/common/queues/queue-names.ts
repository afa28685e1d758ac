/** Every BullMQ queue and the job names its processor must handle. */
export enum QueueName {
  Maintenance = 'maintenance',
  Domains = 'domains',
  MergeQueues = 'merge-queues',
  UsageImports = 'usage-imports',
  Webhooks = 'webhooks',
  CommitStatuses = 'commit-statuses',
}

export const MaintenanceJob = {
  PurgeExpiredOAuthStates: 'purge-expired-oauth-states',
} as const;

export const DomainsJob = {
  ReverifyActiveDomains: 'reverify-active-domains',
  /** Deletes PENDING_VERIFICATION registrations older than DOMAIN_PENDING_TTL_MS. */
  SweepExpiredPending: 'sweep-expired-pending-domains',
} as const;

export const MergeQueuesJob = {
  /** Drains one queue's outbox; job id = the queue id, so one executor per queue at a time. */
  Execute: 'execute-operations',
  /** Delivers a `tick` to one queue when a check timeout may have passed. */
  Tick: 'tick',
  /** Finds queues with unfinished operations and no executor, and starts one. */
  Sweep: 'sweep',
  /** Asks the changed paths of a queue's live entries that have none kept (path groups were added, a provider call failed, the paths sweep). */
  AskPaths: 'ask-changed-paths',
  /** Finds queues with path groups holding live entries whose paths were never kept (their job lost), and asks them. */
  SweepPaths: 'sweep-changed-paths',
} as const;

export const UsageImportsJob = {
  ImportCodeSource: 'import-code-source',
} as const;

export const WebhooksJob = {
  /** Applies one stored provider webhook delivery (job id = the delivery row id). */
  ApplyGithubDelivery: 'apply-github-delivery',
  /** Hands deliveries stored but never applied (their job lost with Redis) to the worker again. */
  Sweep: 'sweep-deliveries',
} as const;

export const CommitStatusesJob = {
  /** Posts one merge-queue commit status to the provider (retried with backoff, never blocking the queue). */
  Post: 'post-commit-status',
  /** Posts again, from the queue's state as it is now, the statuses whose every attempt failed. */
  Repair: 'repair-commit-statuses',
  /** Closes, with a comment naming the landed commits, the PRs of a batch landed by squash or rebase (GitHub cannot see them merged). */
  CloseLanded: 'close-landed-pull-requests',
} as const;

export const JOB_NAMES: Record<QueueName, readonly string[]> = {
  [QueueName.Maintenance]: Object.values(MaintenanceJob),
  [QueueName.Domains]: Object.values(DomainsJob),
  [QueueName.MergeQueues]: Object.values(MergeQueuesJob),
  [QueueName.UsageImports]: Object.values(UsageImportsJob),
  [QueueName.Webhooks]: Object.values(WebhooksJob),
  [QueueName.CommitStatuses]: Object.values(CommitStatusesJob),
};
