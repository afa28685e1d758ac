/** Every action the audit trail records, as `<resource>.<verb>`. */
export const AuditAction = {
  ApiKeyCreated: 'apiKey.created',
  ApiKeyRotated: 'apiKey.rotated',
  ApiKeyRevoked: 'apiKey.revoked',
  MemberCreated: 'member.created',
  MemberUpdated: 'member.updated',
  MemberRoleChanged: 'member.roleChanged',
  MemberRemoved: 'member.removed',
  ServiceAccountCreated: 'serviceAccount.created',
  ServiceAccountUpdated: 'serviceAccount.updated',
  ServiceAccountRoleChanged: 'serviceAccount.roleChanged',
  ServiceAccountRemoved: 'serviceAccount.removed',
  SuperadminGranted: 'member.superadminGranted',
  SuperadminRevoked: 'member.superadminRevoked',
  DomainRegistered: 'domain.registered',
  DomainVerified: 'domain.verified',
  DomainLapsed: 'domain.lapsed',
  DomainDeleted: 'domain.deleted',
  DomainGrantCreated: 'domain.grantCreated',
  DomainGrantRevoked: 'domain.grantRevoked',
  DomainDependentAdded: 'domain.dependentAdded',
  DomainDependentRemoved: 'domain.dependentRemoved',
  MergeQueueCreated: 'mergeQueue.created',
  MergeQueuePaused: 'mergeQueue.paused',
  MergeQueueResumed: 'mergeQueue.resumed',
  MergeQueueDisabled: 'mergeQueue.disabled',
  MergeQueueEnabled: 'mergeQueue.enabled',
} as const;

export type AuditAction = (typeof AuditAction)[keyof typeof AuditAction];
export const AUDIT_ACTIONS = Object.values(AuditAction);
