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

  /**
   * Minting a token (POST /api-keys for someone else, or rotating their key) on top of the route's
   * floor: apiKeys:manageOthers, an owner not above the caller, and for an ADMIN or OWNER member
   * (a person) only an OWNER. Written out cell by cell: ✓ 201, · 403.
   */
  it('mints keys for others exactly where the rules say: members and service accounts of every role, by every role', async () => {
    const EXPECTED: Record<Role, string> = {
      //             members: VIEWER MEMBER ADMIN OWNER | service accounts: VIEWER MEMBER ADMIN OWNER
      VIEWER: '···· ····',
      MEMBER: '···· ····',
      ADMIN: '✓✓·· ✓✓✓·',
      OWNER: '✓✓✓✓ ✓✓✓✓',
    };
    const http = () => request(app.getHttpServer());
    const targets: { what: string; id: string }[] = [];
    for (const role of ROLE_ORDER) targets.push({ what: `${role} member`, id: (await createMember(app, owner, role)).memberId });
    for (const role of ROLE_ORDER)
      targets.push({
        what: `${role} service account`,
        id: (
          await http()
            .post('/service-accounts')
            .set(owner.auth)
            .send({ data: { name: `matrix ${role} ${Date.now()}`, role } })
            .expect(201)
        ).body.data.id as string,
      });
    const seen: Record<string, string> = {};
    for (const role of ROLE_ORDER) {
      const caller = callers.get(role) as TestTenant;
      let cells = '';
      for (const [i, target] of targets.entries()) {
        if (i === ROLE_ORDER.length) cells += ' ';
        const created = await http()
          .post('/api-keys')
          .set(caller.auth)
          .send({ data: { name: `minted by ${role}`, ownerId: target.id } });
        // Rotating the owner's own key (made by the OWNER) mints a token just the same.
        const own = await http()
          .post('/api-keys')
          .set(owner.auth)
          .send({ data: { name: 'to rotate', ownerId: target.id } })
          .expect(201);
        const rotated = await http().post(`/api-keys/${own.body.data.id}/rotate`).set(caller.auth);
        for (const response of [created, rotated]) if (response.status === 403) expect(response.body.code).toBe('dpa:Auth:FORBIDDEN');
        expect([role, target.what, created.status === 201, rotated.status === 201]).toEqual([
          role,
          target.what,
          created.status !== 403,
          rotated.status !== 403,
        ]);
        cells += created.status === 201 ? '✓' : '·';
      }
      seen[role] = cells;
    }
    expect(seen).toEqual(EXPECTED);
  }, 120_000);

  it('lets a superadmin through a superadmin-only route, whatever the role', async () => {
    const superadmin = await createTenant(app, 'matrix-superadmin', { superadmin: true });
    const viewer = await createMember(app, superadmin, 'VIEWER');
    await request(app.getHttpServer()).get('/reports').set(superadmin.auth).expect(200);
    // The flag belongs to the member it was given to, not to the organization.
    await request(app.getHttpServer()).get('/reports').set(viewer.auth).expect(403);
  });
});
