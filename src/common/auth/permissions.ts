import { roleAtLeast, type Role } from './principal';

/**
 * Every permission a route or a service rule can require. A route states its floor with
 * `@RequirePermission(...)`; rules that depend on the resource (whose key it is, the last OWNER)
 * live in the services. Values are what the OpenAPI document shows in `x-required-permission`.
 */
export enum Permission {
  ProjectsRead = 'projects:read',
  ProjectsWrite = 'projects:write',
  PipelinesRead = 'pipelines:read',
  PipelinesWrite = 'pipelines:write',
  ModuleVersionsRead = 'moduleVersions:read',
  ModuleVersionsWrite = 'moduleVersions:write',
  ExecutionEnvironmentsRead = 'executionEnvironments:read',
  ExecutionEnvironmentsWrite = 'executionEnvironments:write',
  MembersRead = 'members:read',
  MembersWrite = 'members:write',
  ServiceAccountsRead = 'serviceAccounts:read',
  ServiceAccountsWrite = 'serviceAccounts:write',
  /** Create, read, rotate and revoke one's own keys. */
  ApiKeysOwn = 'apiKeys:own',
  /** Read, create, rotate and revoke keys of other members and service accounts (never above one's role). */
  ApiKeysManageOthers = 'apiKeys:manageOthers',
  AuditEventsRead = 'auditEvents:read',
  ReportsCreate = 'reports:create',
  IntegrationsRead = 'integrations:read',
  IntegrationsWrite = 'integrations:write',
  GitServersRead = 'gitServers:read',
  GitServersWrite = 'gitServers:write',
  CodeSourcesRead = 'codeSources:read',
  CodeSourcesWrite = 'codeSources:write',
  UsageRead = 'usage:read',
  UsageImport = 'usage:import',
  MergeQueuesRead = 'mergeQueues:read',
  /** Enqueue, update and remove entries. */
  MergeQueueEntriesWrite = 'mergeQueueEntries:write',
  /** Create queues, change settings, pause, resume, disable, enable. */
  MergeQueuesOperate = 'mergeQueues:operate',
  /**
   * Report CI results on a batch candidate. A passing report lets the queue land with the
   * integration's write token, so it is for CI: give CI a service-account key scoped to it.
   */
  MergeQueuesReportChecks = 'mergeQueues:reportChecks',
  DomainsRead = 'domains:read',
  DomainsWrite = 'domains:write',
}

export const ROLE_ORDER: readonly Role[] = ['VIEWER', 'MEMBER', 'ADMIN', 'OWNER'];

/** The lowest role that holds each permission; every higher role holds it too. */
export const PERMISSION_FLOOR: Readonly<Record<Permission, Role>> = {
  [Permission.ProjectsRead]: 'VIEWER',
  [Permission.PipelinesRead]: 'VIEWER',
  [Permission.ModuleVersionsRead]: 'VIEWER',
  [Permission.ExecutionEnvironmentsRead]: 'VIEWER',
  [Permission.MembersRead]: 'VIEWER',
  [Permission.ServiceAccountsRead]: 'VIEWER',
  [Permission.ApiKeysOwn]: 'VIEWER',
  [Permission.ReportsCreate]: 'VIEWER',
  [Permission.IntegrationsRead]: 'VIEWER',
  [Permission.GitServersRead]: 'VIEWER',
  [Permission.CodeSourcesRead]: 'VIEWER',
  [Permission.UsageRead]: 'VIEWER',
  [Permission.MergeQueuesRead]: 'VIEWER',
  [Permission.DomainsRead]: 'VIEWER',
  [Permission.ProjectsWrite]: 'MEMBER',
  [Permission.PipelinesWrite]: 'MEMBER',
  [Permission.ModuleVersionsWrite]: 'MEMBER',
  [Permission.CodeSourcesWrite]: 'MEMBER',
  [Permission.UsageImport]: 'MEMBER',
  [Permission.MergeQueueEntriesWrite]: 'MEMBER',
  [Permission.ExecutionEnvironmentsWrite]: 'ADMIN',
  [Permission.MembersWrite]: 'ADMIN',
  [Permission.ServiceAccountsWrite]: 'ADMIN',
  [Permission.ApiKeysManageOthers]: 'ADMIN',
  [Permission.AuditEventsRead]: 'ADMIN',
  [Permission.IntegrationsWrite]: 'ADMIN',
  [Permission.GitServersWrite]: 'ADMIN',
  [Permission.MergeQueuesOperate]: 'ADMIN',
  [Permission.MergeQueuesReportChecks]: 'ADMIN',
  [Permission.DomainsWrite]: 'ADMIN',
};

/** The permission table: for each role, every permission it holds. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = Object.fromEntries(
  ROLE_ORDER.map((role) => [role, new Set((Object.keys(PERMISSION_FLOOR) as Permission[]).filter((p) => roleAtLeast(role, PERMISSION_FLOOR[p])))]),
) as unknown as Record<Role, ReadonlySet<Permission>>;

export function hasPermission(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

/** Every permission, in declaration order (the values a key's `scopes` may hold). */
export const PERMISSIONS: readonly Permission[] = Object.values(Permission) as Permission[];

/**
 * What a caller may do: its role must hold the permission, and a scoped key (one created with
 * `scopes`) only what it was scoped to. Services that decide by permission ask this, not the role.
 */
export function principalMay(principal: { role: Role; scopes?: readonly string[] }, permission: Permission): boolean {
  return hasPermission(principal.role, permission) && (principal.scopes === undefined || principal.scopes.includes(permission));
}

/** The roles that hold a permission, lowest first (for documentation and 403 bodies). */
export function rolesHolding(permission: Permission): Role[] {
  return ROLE_ORDER.filter((role) => ROLE_PERMISSIONS[role].has(permission));
}

/** The table as Markdown rows, for docs/roles-and-permissions.md (a unit test keeps the two in step). */
export function permissionTableMarkdown(): string {
  const header = `| permission | ${ROLE_ORDER.join(' | ')} |\n|---|${ROLE_ORDER.map(() => ':-:').join('|')}|`;
  const rows = (Object.values(Permission) as Permission[]).map((p) => `| \`${p}\` | ${ROLE_ORDER.map((r) => (hasPermission(r, p) ? '✓' : '')).join(' | ')} |`);
  return [header, ...rows].join('\n');
}
