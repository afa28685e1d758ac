import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasPermission, Permission, permissionTableMarkdown, PERMISSION_FLOOR, principalMay, ROLE_ORDER, rolesHolding } from './permissions';

describe('the permission table', () => {
  it('gives every permission a floor, and every role above the floor holds it', () => {
    for (const permission of Object.values(Permission)) {
      const floor = PERMISSION_FLOOR[permission];
      expect(floor).toBeDefined();
      expect(rolesHolding(permission)).toEqual(ROLE_ORDER.slice(ROLE_ORDER.indexOf(floor)));
    }
  });

  it('follows the floor the product asks for', () => {
    expect(rolesHolding(Permission.ProjectsRead)).toEqual(['VIEWER', 'MEMBER', 'ADMIN', 'OWNER']);
    expect(hasPermission('VIEWER', Permission.ProjectsWrite)).toBe(false);
    expect(hasPermission('MEMBER', Permission.ProjectsWrite)).toBe(true);
    expect(hasPermission('MEMBER', Permission.ApiKeysManageOthers)).toBe(false);
    expect(hasPermission('ADMIN', Permission.ApiKeysManageOthers)).toBe(true);
    expect(hasPermission('MEMBER', Permission.MergeQueuesOperate)).toBe(false);
    expect(hasPermission('MEMBER', Permission.MergeQueueEntriesWrite)).toBe(true);
    // A passing check report lands with the integration's write token: not for whoever may enqueue.
    expect(rolesHolding(Permission.MergeQueuesReportChecks)).toEqual(['ADMIN', 'OWNER']);
  });

  it('lets a scoped key use only its scopes, and never more than its role', () => {
    expect(principalMay({ role: 'ADMIN' }, Permission.ProjectsWrite)).toBe(true);
    const ci = { role: 'ADMIN' as const, scopes: [Permission.MergeQueuesReportChecks] };
    expect(principalMay(ci, Permission.MergeQueuesReportChecks)).toBe(true);
    expect(principalMay(ci, Permission.MergeQueuesRead)).toBe(false);
    expect(principalMay({ role: 'MEMBER', scopes: [Permission.MergeQueuesReportChecks] }, Permission.MergeQueuesReportChecks)).toBe(false);
  });

  it('is the table docs/roles-and-permissions.md shows', () => {
    const readme = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'roles-and-permissions.md'), 'utf8');
    expect(readme).toContain(permissionTableMarkdown());
  });
});
