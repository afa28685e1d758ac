import { Controller, Get } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { errorCatalogue } from '@/common/errors/error-catalogue';
import { createTestApp } from '../support/app';
import { createMember, createTenant, type TestTenant } from '../support/factories';

const SECRET = 'connection to 10.0.0.7 failed: password authentication for user "root"';

/** A route that fails the way real bugs do, to see what callers are shown. */
@Controller('test-failures')
class FailingController {
  @Get('unexpected')
  unexpected(): never {
    throw new Error(SECRET);
  }
}

const ERROR_BODY_KEYS = ['code', 'message', 'action', 'description', 'details', 'isInternal', 'metadata', 'requestId'];
const catalogueCodes = new Set<string>(errorCatalogue().map((e) => e.code));

function expectErrorBody(body: Record<string, unknown>, code: string): void {
  expect(body.code).toBe(code);
  expect(catalogueCodes.has(body.code as string)).toBe(true);
  expect(body.code).toMatch(/^[a-z]+:[A-Za-z]+:[A-Z_]+$/);
  expect(typeof body.message).toBe('string');
  expect(typeof body.requestId).toBe('string');
  expect(Object.keys(body).filter((k) => !ERROR_BODY_KEYS.includes(k))).toEqual([]);
}

describe('The error body', () => {
  let app: NestExpressApplication;
  let tenant: TestTenant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp({ controllers: [FailingController] });
    tenant = await createTenant(app, 'errors');
  });

  afterAll(async () => {
    await app.close();
  });

  it('400 for validation, with a list section naming each bad field', async () => {
    const response = await http()
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 42, givenId: 'Not A Slug' } })
      .expect(400);
    expectErrorBody(response.body, 'dpa:Request:VALIDATION_FAILED');
    expect(response.body.details).toEqual([
      {
        title: 'Invalid fields',
        render: 'list',
        items: expect.arrayContaining([expect.stringMatching(/^data\.name: /), expect.stringMatching(/^data\.givenId: /)]),
      },
    ]);
    expect(response.body.message).toContain('data.');
  });

  it('400 for a missing data envelope and for unknown fields', async () => {
    const missing = await http().post('/projects').set(tenant.auth).send({ name: 'x' }).expect(400);
    expectErrorBody(missing.body, 'dpa:Request:VALIDATION_FAILED');
    const unknown = await http()
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 'x', colour: 'red' } })
      .expect(400);
    expect(unknown.body.details[0].items).toEqual(['data.colour: is not an accepted field']);
  });

  it('400 READ_ONLY_FIELD when a request sets a read-only field', async () => {
    const response = await http()
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 'x', id: 'mine', createdAt: '2020-01-01T00:00:00Z' } })
      .expect(400);
    expectErrorBody(response.body, 'dpa:Request:READ_ONLY_FIELD');
    expect(response.body.message).toContain('data.id');
  });

  it('400 for malformed JSON', async () => {
    const response = await http().post('/projects').set(tenant.auth).set('Content-Type', 'application/json').send('{"data": {').expect(400);
    expectErrorBody(response.body, 'dpa:Request:MALFORMED_JSON');
  });

  it('413 for a body over the limit', async () => {
    const response = await http()
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 'x'.repeat(2_000_000) } })
      .expect(413);
    expectErrorBody(response.body, 'dpa:Request:PAYLOAD_TOO_LARGE');
  });

  it('404 for an unknown route and for an unsupported method', async () => {
    expectErrorBody((await http().get('/no-such-thing').set(tenant.auth).expect(404)).body, 'dpa:Request:ROUTE_NOT_FOUND');
    expectErrorBody((await http().put('/projects').set(tenant.auth).send({ data: {} }).expect(404)).body, 'dpa:Request:ROUTE_NOT_FOUND');
  });

  it('401 and 403', async () => {
    expectErrorBody((await http().get('/projects').expect(401)).body, 'dpa:Auth:UNAUTHENTICATED');
    const viewer = await createMember(app, tenant, 'VIEWER');
    expectErrorBody(
      (
        await http()
          .post('/service-accounts')
          .set(viewer.auth)
          .send({ data: { name: 'x' } })
          .expect(403)
      ).body,
      'dpa:Auth:FORBIDDEN',
    );
  });

  it('404 for a missing resource', async () => {
    expectErrorBody((await http().get('/projects/01a00000-0000-7000-8000-000000000000').set(tenant.auth).expect(404)).body, 'dpa:Project:NOT_FOUND');
  });

  it('409 for a duplicate givenId, 201 with a suffix when the givenId was derived', async () => {
    await http()
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 'Billing', givenId: 'billing' } })
      .expect(201);
    const duplicate = await http()
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 'Other', givenId: 'billing' } })
      .expect(409);
    expectErrorBody(duplicate.body, 'dpa:Project:GIVEN_ID_TAKEN');
    const derived = await http()
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 'Billing' } })
      .expect(201);
    expect(derived.body.data.givenId).toBe('billing-2');
  });

  it('422 for a domain rule', async () => {
    const response = await http()
      .post('/api-keys')
      .set(tenant.auth)
      .send({ data: { name: 'late', ownerId: tenant.memberId, expiresAt: '2001-01-01T00:00:00Z' } })
      .expect(422);
    expectErrorBody(response.body, 'dpa:ApiKey:EXPIRY_IN_PAST');
  });

  it('500 hides internals from ordinary callers', async () => {
    const response = await http().get('/test-failures/unexpected').set(tenant.auth).expect(500);
    expectErrorBody(response.body, 'dpa:Server:INTERNAL');
    expect(response.body.metadata).toBeUndefined();
    expect(response.body.isInternal).toBeUndefined();
    expect(JSON.stringify(response.body)).not.toContain('10.0.0.7');
    expect(JSON.stringify(response.body)).not.toMatch(/at .*\.ts:\d+/);
  });

  it('500 shows full details, marked isInternal, to a superadmin', async () => {
    const superadmin = await createTenant(app, 'superadmin', { superadmin: true });
    const response = await http().get('/test-failures/unexpected').set(superadmin.auth).expect(500);
    expectErrorBody(response.body, 'dpa:Server:INTERNAL');
    expect(response.body.isInternal).toBe(true);
    expect(response.body.metadata).toEqual({ name: 'Error', message: SECRET });
  });

  it('echoes X-Request-Id and puts it in the body', async () => {
    const response = await http().get('/projects').set('X-Request-Id', 'trace-abc-123').expect(401);
    expect(response.headers['x-request-id']).toBe('trace-abc-123');
    expect(response.body.requestId).toBe('trace-abc-123');
    const generated = await http().get('/projects').set('X-Request-Id', 'bad id with spaces').expect(401);
    expect(generated.body.requestId).not.toBe('bad id with spaces');
    expect(generated.headers['x-request-id']).toBe(generated.body.requestId);
  });
});
