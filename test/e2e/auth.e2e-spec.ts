import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { encodeApiKeyToken } from '@/common/auth/api-key-token';
import { createTestApp, useTwoApps } from '../support/app';
import { statusEventually } from '../support/eventually';
import { createMember, createTenant, type TestTenant } from '../support/factories';
import { concretePath, listRoutes, type RouteInfo } from '../support/routes';

describe('Bearer authentication', () => {
  let app: NestExpressApplication;
  let tenant: TestTenant;
  let protectedRoutes: RouteInfo[];

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app, 'auth');
    protectedRoutes = listRoutes(app).filter((r) => !r.isPublic);
  });

  afterAll(async () => {
    await app.close();
  });

  const send = (route: RouteInfo, headers: Record<string, string>) =>
    request(app.getHttpServer())[route.method as 'get'](concretePath(route.path)).set(headers).send({ data: {} });

  it('finds the protected routes to check', () => {
    expect(protectedRoutes.length).toBeGreaterThanOrEqual(12);
    expect(protectedRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['get /projects', 'get /execution-environments', 'get /service-accounts']),
    );
  });

  const cases: [string, () => Record<string, string>, string][] = [
    ['no Authorization header', () => ({}), 'dpa:Auth:UNAUTHENTICATED'],
    ['a non-bearer scheme', () => ({ Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }), 'dpa:Auth:INVALID_TOKEN'],
    ['garbage', () => ({ Authorization: 'Bearer not-a-token' }), 'dpa:Auth:INVALID_TOKEN'],
    [
      'a token with a broken checksum',
      () => ({ Authorization: `Bearer ${tenant.token.slice(0, -1)}${tenant.token.endsWith('a') ? 'b' : 'a'}` }),
      'dpa:Auth:INVALID_TOKEN',
    ],
    ['a well-formed token nobody issued', () => ({ Authorization: `Bearer ${encodeApiKeyToken(new Uint8Array(32).fill(7))}` }), 'dpa:Auth:INVALID_TOKEN'],
  ];

  it.each(cases)('rejects %s with 401 on every protected route', async (_label, headers, code) => {
    for (const route of protectedRoutes) {
      const response = await send(route, headers());
      expect({ route: `${route.method} ${route.path}`, status: response.status, code: response.body.code }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 401,
        code,
      });
      expect(response.body.requestId).toBe(response.headers['x-request-id']);
      expect(response.body.data).toBeUndefined();
    }
  });

  it('rejects an expired token with 401 on every protected route', async () => {
    const member = await createMember(app, tenant, 'MEMBER');
    await app.get(PrismaService).apiKey.update({ where: { id: member.apiKeyId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    for (const route of protectedRoutes) {
      const response = await send(route, member.auth);
      expect({ route: route.path, status: response.status, code: response.body.code }).toEqual({
        route: route.path,
        status: 401,
        code: 'dpa:Auth:TOKEN_EXPIRED',
      });
    }
  });

  it('rejects a revoked token with 401 on every protected route, at once', async () => {
    const member = await createMember(app, tenant, 'MEMBER');
    // Warm the credential cache first: revocation must beat it.
    await request(app.getHttpServer()).get('/projects').set(member.auth).expect(200);
    await request(app.getHttpServer()).delete(`/api-keys/${member.apiKeyId}`).set(tenant.auth).expect(204);
    for (const route of protectedRoutes) {
      const response = await send(route, member.auth);
      expect({ route: route.path, status: response.status, code: response.body.code }).toEqual({
        route: route.path,
        status: 401,
        code: 'dpa:Auth:TOKEN_REVOKED',
      });
    }
  });

  it('accepts a valid token and answers with the caller organization', async () => {
    const response = await request(app.getHttpServer()).get('/projects').set(tenant.auth).expect(200);
    expect(response.body.meta).toEqual({ limit: 20, totalCount: 0 });
  });

  it('lets a VIEWER read but not write (403 error body)', async () => {
    const viewer = await createMember(app, tenant, 'VIEWER');
    await request(app.getHttpServer()).get('/projects').set(viewer.auth).expect(200);
    const response = await request(app.getHttpServer())
      .post('/projects')
      .set(viewer.auth)
      .send({ data: { name: 'nope' } })
      .expect(403);
    expect(response.body.code).toBe('dpa:Auth:FORBIDDEN');
  });

  it('never stores the token: only its hash is in the database', async () => {
    const rows = await app.get(PrismaService).$queryRaw<
      { n: bigint }[]
    >`SELECT count(*) AS n FROM "ApiKey" WHERE "tokenHash" = ${tenant.token} OR "keySuffix" = ${tenant.token}`;
    expect(Number(rows[0].n)).toBe(0);
  });
});

describe('Revocation across processes', () => {
  const apps = useTwoApps();

  it('a key revoked through one process is refused by the other, whose cache held it', async () => {
    const tenant = await createTenant(apps.first, 'revoke');
    const member = await createMember(apps.first, tenant, 'MEMBER');
    await request(apps.second.getHttpServer()).get('/projects').set(member.auth).expect(200);
    await request(apps.first.getHttpServer()).delete(`/api-keys/${member.apiKeyId}`).set(tenant.auth).expect(204);
    expect(await statusEventually(async () => (await request(apps.second.getHttpServer()).get('/projects').set(member.auth)).status, 401)).toBe(401);
  });
});
