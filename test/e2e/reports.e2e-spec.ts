import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { loadConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { createTestApp } from '../support/app';
import { createMember, createTenant, type TestTenant } from '../support/factories';

describe('Bug reports', () => {
  let app: NestExpressApplication;
  let tenant: TestTenant;
  let superadmin: TestTenant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app, 'reports');
    superadmin = await createTenant(app, 'reports-operator', { superadmin: true });
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers 204 with no body and stores the report with its reporter, organization and request id', async () => {
    const viewer = await createMember(app, tenant, 'VIEWER');
    const requestId = `report-${Date.now()}`;
    const metadata = { agent: 'dpa-cli', arch: 'arm64', cliVersion: '1.4.2', command: 'dpa queue show', os: 'darwin 24.1' };
    const response = await http()
      .post('/reports')
      .set(viewer.auth)
      .set('X-Request-Id', requestId)
      .send({ data: { title: 'queue show crashes', message: 'Stack trace…', metadata } })
      .expect(204);
    expect(response.text).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
    const all = await http().get('/reports').query({ limit: 100 }).set(superadmin.auth).expect(200);
    const stored = all.body.data.find((r: { requestId?: string }) => r.requestId === requestId);
    expect(stored).toMatchObject({
      organizationId: tenant.organizationId,
      reporterId: viewer.memberId,
      reporterType: 'MEMBERSHIP',
      title: 'queue show crashes',
      metadata,
    });
  });

  it('accepts a report without metadata', async () => {
    await http()
      .post('/reports')
      .set(tenant.auth)
      .send({ data: { title: 't', message: 'm' } })
      .expect(204);
  });

  it.each([
    ['no title', { message: 'm' }, 'data.title'],
    ['an empty title', { title: '', message: 'm' }, 'data.title'],
    ['a title over 200 characters', { title: 'x'.repeat(201), message: 'm' }, 'data.title'],
    ['no message', { title: 't' }, 'data.message'],
    ['a message over 20,000 characters', { title: 't', message: 'x'.repeat(20_001) }, 'data.message'],
    ['an unknown metadata member', { title: 't', message: 'm', metadata: { agent: 'a', browser: 'x' } }, 'data.metadata.browser'],
    ['a metadata member that is not a string', { title: 't', message: 'm', metadata: { os: 14 } }, 'data.metadata.os'],
    ['a metadata member too long', { title: 't', message: 'm', metadata: { command: 'x'.repeat(501) } }, 'data.metadata.command'],
    ['metadata that is not an object', { title: 't', message: 'm', metadata: 'linux' }, 'data.metadata'],
  ])('refuses %s with a 400 naming the field', async (_label, data, field) => {
    const response = await http().post('/reports').set(tenant.auth).send({ data }).expect(400);
    expect(response.body.code).toMatch(/^dpa:Request:/);
    expect(response.body.details[0].items.some((item: string) => item.startsWith(`${field}: `))).toBe(true);
  });

  it('lists reports of every organization to superadmins only', async () => {
    const other = await createTenant(app, 'reports-other');
    await http()
      .post('/reports')
      .set(other.auth)
      .send({ data: { title: 'from another org', message: 'm' } })
      .expect(204);
    const forbidden = await http().get('/reports').set(tenant.auth).expect(403);
    expect(forbidden.body.metadata).toEqual({ permission: 'platform:superadmin' });
    const all = await http().get('/reports').query({ limit: 100 }).set(superadmin.auth).expect(200);
    const organizations = new Set(all.body.data.map((r: { organizationId: string }) => r.organizationId));
    expect(organizations.has(tenant.organizationId)).toBe(true);
    expect(organizations.has(other.organizationId)).toBe(true);
  });
});

describe('Bug report throttling', () => {
  it('refuses a flood from one key with 429 after the reports limit, and other routes keep working', async () => {
    const base = loadConfig();
    // A fresh key prefix so that earlier runs' counters do not count.
    const config = { ...base, queuePrefix: `dpa-test-reports-${Date.now().toString(36)}`, rateLimits: { ...base.rateLimits, reports: 3 } };
    const app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
    try {
      const tenant = await createTenant(app, 'report-flood');
      const send = () =>
        request(app.getHttpServer())
          .post('/reports')
          .set(tenant.auth)
          .send({ data: { title: 'again', message: 'm' } });
      for (let i = 0; i < 3; i++) await send().expect(204);
      const refused = await send().expect(429);
      expect(refused.body).toMatchObject({ code: 'dpa:Request:RATE_LIMITED', metadata: { limit: 'reports' } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      await request(app.getHttpServer()).get('/projects').set(tenant.auth).expect(200);
    } finally {
      await app.close();
    }
  });
});
