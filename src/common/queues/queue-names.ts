/** Every BullMQ queue and the job names its processor must handle. */
export enum QueueName {
  Maintenance = 'maintenance',
  Domains = 'domains',
  UsageImports = 'usage-imports',
}

export const MaintenanceJob = {
  PurgeExpiredOAuthStates: 'purge-expired-oauth-states',
} as const;

export const DomainsJob = {
  ReverifyActiveDomains: 'reverify-active-domains',
} as const;

export const UsageImportsJob = {
  ImportCodeSource: 'import-code-source',
} as const;

export const JOB_NAMES: Record<QueueName, readonly string[]> = {
  [QueueName.Maintenance]: Object.values(MaintenanceJob),
  [QueueName.Domains]: Object.values(DomainsJob),
  [QueueName.UsageImports]: Object.values(UsageImportsJob),
};
