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
  IntegrationCreated: 'integration.created',
  IntegrationConnected: 'integration.connected',
  IntegrationFailed: 'integration.failed',
  IntegrationStatusChanged: 'integration.statusChanged',
  IntegrationDeleted: 'integration.deleted',
  GitServerCreated: 'gitServer.created',
  GitServerDeleted: 'gitServer.deleted',
  CodeSourceConnected: 'codeSource.connected',
  CodeSourceDeleted: 'codeSource.deleted',
} as const;

export type AuditAction = (typeof AuditAction)[keyof typeof AuditAction];
export const AUDIT_ACTIONS = Object.values(AuditAction);
