/** Every BullMQ queue and the job names its processor must handle. */
export enum QueueName {
  Maintenance = 'maintenance',
}

export const MaintenanceJob = {
  PurgeExpiredOAuthStates: 'purge-expired-oauth-states',
} as const;

export const JOB_NAMES: Record<QueueName, readonly string[]> = {
  [QueueName.Maintenance]: Object.values(MaintenanceJob),
};
