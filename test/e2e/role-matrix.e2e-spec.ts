import type { NestExpressApplication } from '@nestjs/platform-express';
import { Reflector } from '@nestjs/core';
import request from 'supertest';
import { REQUIRED_PERMISSION, SUPERADMIN_ONLY } from '@/common/auth/auth.decorators';
import { hasPermission, type Permission, ROLE_ORDER } from '@/common/auth/permissions';
import type { Role } from '@/common/auth/principal';
import { createTestApp } from '../support/app';
import { createMember, createTenant, type TestTenant } from '../support/factories';
import { concretePath, routeHandlers } from '../support/routes';

/**
 * The role x route matrix, generated from the route list and the permission table: every protected
 * route, every role, expecting 403 exactly where the table says and never a 403 elsewhere.
 */
describe('Role x route matrix', () => {
  let app: NestExpressApplication;
  let owner: TestTenant;
  const callers = new Map<Role, TestTenant>();

  beforeAll(async () => {
    app = await createTestApp();
    owner = await createTenant(app, 'matrix');
    for (const role of ROLE_ORDER) callers.set(role, role === 'OWNER' ? owner : await createMember(app, owner, role));
  });

  afterAll(async () => {
    await app.close();
  });

  it('every protected route declares the permission it needs', () => {
    const reflector = app.get(Reflector);
    const undeclared = routeHandlers(app)
      .filter(({ route }) => !route.isPublic)
      .filter(
        ({ handler, controller }) =>
          !reflector.getAllAndOverride(REQUIRED_PERMISSION, [handler, controller]) && !reflector.getAllAndOverride(SUPERADMIN_ONLY, [handler, controller]),
      )
      .map(({ route }) => `${route.method} ${route.path}`);
    expect(undeclared).toEqual([]);
  });

  it('answers 403 exactly where the permission table says, for every protected route and role', async () => {
    const reflector = app.get(Reflector);
    const routes = routeHandlers(app).filter(({ route }) => !route.isPublic);
    const mismatches: string[] = [];
    let cells = 0;
    for (const { route, handler, controller } of routes) {
      const permission = reflector.getAllAndOverride<Permission | undefined>(REQUIRED_PERMISSION, [handler, controller]);
      const superadminOnly = Boolean(reflector.getAllAndOverride<boolean>(SUPERADMIN_ONLY, [handler, controller]));
      for (const role of ROLE_ORDER) {
        cells++;
        const caller = callers.get(role) as TestTenant;
        // A made-up id: allowed callers reach the service and get a 404 or a 400, never a 403.
        const response = await request(app.getHttpServer())
          [route.method as 'get'](concretePath(route.path, '019a0000-0000-7000-8000-00000000dead'))
          .set(caller.auth)
          .send({ data: {} });
        const denied = superadminOnly || (permission !== undefined && !hasPermission(role, permission));
        const ok = denied
          ? response.status === 403 &&
            response.body.code === 'dpa:Auth:FORBIDDEN' &&
            response.body.metadata?.permission === (permission ?? 'platform:superadmin')
          : response.status !== 403;
        if (!ok)
          mismatches.push(`${role} ${route.method} ${route.path}: ${response.status} ${response.body.code ?? ''} (expected ${denied ? '403' : 'not 403'})`);
      }
    }
    process.stdout.write(`role x route matrix: ${routes.length} routes x ${ROLE_ORDER.length} roles = ${cells} cells\n`);
    expect(mismatches).toEqual([]);
    expect(routes.length).toBeGreaterThanOrEqual(20);
  }, 120_000);

  it('lets a superadmin through a superadmin-only route, whatever the role', async () => {
    const superadmin = await createTenant(app, 'matrix-superadmin', { superadmin: true });
    const viewer = await createMember(app, superadmin, 'VIEWER');
    await request(app.getHttpServer()).get('/reports').set(superadmin.auth).expect(200);
    // The flag belongs to the member it was given to, not to the organization.
    await request(app.getHttpServer()).get('/reports').set(viewer.auth).expect(403);
  });
});
