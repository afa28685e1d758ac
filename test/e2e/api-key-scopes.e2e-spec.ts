import type { NestExpressApplication } from '@nestjs/platform-express';
import { Reflector } from '@nestjs/core';
import request from 'supertest';
import { REQUIRED_PERMISSION, SUPERADMIN_ONLY, SUPERADMIN_PERMISSION } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import { PrismaService } from '@/common/prisma/prisma.service';
import { createTestApp } from '../support/app';
import { createMember, createTenant, type TestTenant } from '../support/factories';
import { concretePath, routeHandlers } from '../support/routes';

/**
 * Scoped API keys (POST /api-keys `scopes`): a key that may use only some permissions of its
 * owner. Checked on every route of the application, not on a sample.
 */
describe('Scoped API keys', () => {
  let app: NestExpressApplication;
  let owner: TestTenant;
  const http = () => request(app.getHttpServer());
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    app = await createTestApp();
    owner = await createTenant(app, 'scopes');
  });

  afterAll(async () => {
    await app.close();
  });

  async function serviceAccount(role: string, auth = owner.auth): Promise<string> {
    const res = await http()
      .post('/service-accounts')
      .set(auth)
      .send({ data: { name: `sa-${role}-${Math.random().toString(36).slice(2, 8)}`, role } })
      .expect(201);
    return res.body.data.id as string;
  }

  async function scopedKey(ownerId: string, scopes: string[], auth = owner.auth): Promise<{ id: string; token: string; scopes?: string[] }> {
    const res = await http()
      .post('/api-keys')
      .set(auth)
      .send({ data: { name: 'scoped', ownerId, scopes } })
      .expect(201);
    return res.body.data;
  }

  it('shows its scopes when created, read and rotated; the rotated token is scoped the same and stored scopes survive', async () => {
    const ci = await serviceAccount('ADMIN');
    const created = await scopedKey(ci, [Permission.MergeQueuesReportChecks]);
    expect(created.scopes).toEqual([Permission.MergeQueuesReportChecks]);
    const read = await http().get(`/api-keys/${created.id}`).set(owner.auth).expect(200);
    expect(read.body.data.scopes).toEqual([Permission.MergeQueuesReportChecks]);
    const listed = await http().get(`/api-keys?ownerId=${ci}`).set(owner.auth).expect(200);
    expect(listed.body.data.map((k: { scopes?: string[] }) => k.scopes)).toEqual([[Permission.MergeQueuesReportChecks]]);
    const rotated = await http().post(`/api-keys/${created.id}/rotate`).set(owner.auth).expect(201);
    expect(rotated.body.data.scopes).toEqual([Permission.MergeQueuesReportChecks]);
    // The new token is scoped as the old one was: 403 on a route its owner's role allows.
    const refused = await http().get('/projects').set(bearer(rotated.body.data.token)).expect(403);
    expect(refused.body).toMatchObject({
      code: 'dpa:Auth:FORBIDDEN',
      metadata: { permission: Permission.ProjectsRead, scopes: [Permission.MergeQueuesReportChecks] },
    });
    const row = await app.get(PrismaService, { strict: false }).apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.scopes).toEqual([Permission.MergeQueuesReportChecks]);
    // An unscoped key shows no scopes.
    const plain = await http()
      .post('/api-keys')
      .set(owner.auth)
      .send({ data: { name: 'plain', ownerId: ci } })
      .expect(201);
    expect(plain.body.data.scopes).toBeUndefined();
  });

  it('a key scoped to mergeQueues:reportChecks gets 403 on every other route of the application', async () => {
    const ci = await serviceAccount('ADMIN');
    const { token } = await scopedKey(ci, [Permission.MergeQueuesReportChecks]);
    const reflector = app.get(Reflector);
    const routes = routeHandlers(app).filter(({ route }) => !route.isPublic);
    const mismatches: string[] = [];
    let refused = 0;
    const allowedRoutes: string[] = [];
    for (const { route, handler, controller } of routes) {
      const permission = reflector.getAllAndOverride<Permission | undefined>(REQUIRED_PERMISSION, [handler, controller]);
      const superadminOnly = Boolean(reflector.getAllAndOverride<boolean>(SUPERADMIN_ONLY, [handler, controller]));
      const res = await http()[route.method as 'get'](concretePath(route.path, '019a0000-0000-7000-8000-00000000dead')).set(bearer(token)).send({ data: {} });
      const allowed = permission === Permission.MergeQueuesReportChecks && !superadminOnly;
      if (allowed) {
        // The routes it is for (a check report, as JSON or JUnit XML): past the permission check (a made-up queue is a 400 or 404).
        allowedRoutes.push(`${route.method} ${route.path}`);
        if (res.status === 403 || res.status === 401) mismatches.push(`${route.method} ${route.path}: ${res.status} (expected not 403)`);
        continue;
      }
      refused++;
      const ok = res.status === 403 && res.body.code === 'dpa:Auth:FORBIDDEN' && res.body.metadata?.permission === (permission ?? SUPERADMIN_PERMISSION);
      if (!ok) mismatches.push(`${route.method} ${route.path}: ${res.status} ${res.body.code ?? ''} (expected 403)`);
    }
    process.stdout.write(`scoped key: ${refused} of ${routes.length} protected routes refused\n`);
    expect(mismatches).toEqual([]);
    expect(allowedRoutes.sort()).toEqual(['post /merge-queues/:id/batches/:batchId/checks', 'post /merge-queues/:id/batches/:batchId/checks/junit']);
    expect(refused).toBe(routes.length - 2);
    expect(routes.length).toBeGreaterThanOrEqual(20);
  }, 60_000);

  it('a scoped key may use what it is scoped to, and the services ask the scopes too', async () => {
    const admin = await createMember(app, owner, 'ADMIN');
    const reader = await scopedKey(admin.memberId, [Permission.ProjectsRead, Permission.ApiKeysOwn], admin.auth);
    await http().get('/projects').set(bearer(reader.token)).expect(200);
    await http()
      .post('/projects')
      .set(bearer(reader.token))
      .send({ data: { name: 'nope' } })
      .expect(403);
    // Its ADMIN owner may manage the keys of others; the key, scoped without apiKeys:manageOthers, may not.
    const res = await http().get(`/api-keys?ownerId=${owner.memberId}`).set(bearer(reader.token)).expect(403);
    expect(res.body.metadata).toMatchObject({ permission: Permission.ApiKeysManageOthers });
    await http().get(`/api-keys?ownerId=${owner.memberId}`).set(admin.auth).expect(200);
    // Twice: the second answer comes from the credential cache, with the same scopes.
    await http()
      .post('/projects')
      .set(bearer(reader.token))
      .send({ data: { name: 'nope' } })
      .expect(403);
  });

  it('refuses a scope the owner does not hold (422 naming data.scopes) and a name that is no permission (400)', async () => {
    const member = await serviceAccount('MEMBER');
    const res = await http()
      .post('/api-keys')
      .set(owner.auth)
      .send({ data: { name: 'ci', ownerId: member, scopes: [Permission.MergeQueuesReportChecks] } })
      .expect(422);
    expect(res.body).toMatchObject({
      code: 'dpa:ApiKey:SCOPE_NOT_HELD',
      metadata: { field: 'data.scopes', ownerRole: 'MEMBER', scopes: [Permission.MergeQueuesReportChecks] },
    });
    expect(JSON.stringify(res.body.details)).toContain('data.scopes');
    const viewer = await createMember(app, owner, 'VIEWER');
    const own = await http()
      .post('/api-keys')
      .set(viewer.auth)
      .send({ data: { name: 'mine', ownerId: viewer.memberId, scopes: [Permission.ProjectsWrite] } })
      .expect(422);
    expect(own.body.code).toBe('dpa:ApiKey:SCOPE_NOT_HELD');
    const bad = await http()
      .post('/api-keys')
      .set(owner.auth)
      .send({ data: { name: 'ci', ownerId: member, scopes: ['projects:everything'] } })
      .expect(400);
    expect(JSON.stringify(bad.body)).toContain('scopes');
    await http()
      .post('/api-keys')
      .set(owner.auth)
      .send({ data: { name: 'ci', ownerId: member, scopes: [] } })
      .expect(400);
    expect(await app.get(PrismaService, { strict: false }).apiKey.count({ where: { ownerId: member } })).toBe(0);
  });

  it('a scoped key creates and rotates only keys within its own scopes', async () => {
    const admin = await createMember(app, owner, 'ADMIN');
    const limited = await scopedKey(admin.memberId, [Permission.ApiKeysOwn, Permission.ProjectsRead], admin.auth);
    // An unscoped key would do everything its owner may: refused.
    const broader = await http()
      .post('/api-keys')
      .set(bearer(limited.token))
      .send({ data: { name: 'escape', ownerId: admin.memberId, scopes: [Permission.ProjectsWrite] } })
      .expect(422);
    expect(broader.body).toMatchObject({ code: 'dpa:ApiKey:SCOPE_BEYOND_CREATOR', metadata: { field: 'data.scopes', scopes: [Permission.ProjectsWrite] } });
    // Without scopes, the new key takes the creating key's.
    const inherited = await http()
      .post('/api-keys')
      .set(bearer(limited.token))
      .send({ data: { name: 'child', ownerId: admin.memberId } })
      .expect(201);
    expect(inherited.body.data.scopes).toEqual([Permission.ApiKeysOwn, Permission.ProjectsRead]);
    const narrower = await http()
      .post('/api-keys')
      .set(bearer(limited.token))
      .send({ data: { name: 'child', ownerId: admin.memberId, scopes: [Permission.ProjectsRead] } })
      .expect(201);
    expect(narrower.body.data.scopes).toEqual([Permission.ProjectsRead]);
    // Rotating the owner's unscoped key would hand the scoped key an unscoped token: refused.
    const rotate = await http().post(`/api-keys/${admin.apiKeyId}/rotate`).set(bearer(limited.token)).expect(403);
    expect(rotate.body.code).toBe('dpa:Auth:FORBIDDEN');
    await http().post(`/api-keys/${narrower.body.data.id}/rotate`).set(bearer(limited.token)).expect(201);
  });

  it("a superadmin's scoped key is no superadmin", async () => {
    const superadmin = await createTenant(app, 'scopes-superadmin', { superadmin: true });
    const key = await scopedKey(superadmin.memberId, [Permission.ReportsCreate], superadmin.auth);
    await http().get('/reports').set(superadmin.auth).expect(200);
    const res = await http().get('/reports').set(bearer(key.token)).expect(403);
    expect(res.body.metadata).toMatchObject({ permission: SUPERADMIN_PERMISSION });
  });
});
