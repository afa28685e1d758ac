import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { createTestApp } from '../support/app';
import { createTenant, type TestTenant } from '../support/factories';

describe('Pagination', () => {
  let app: NestExpressApplication;
  let tenant: TestTenant;
  const created: string[] = [];

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app, 'pages');
    for (let i = 0; i < 5; i++) {
      const response = await request(app.getHttpServer())
        .post('/projects')
        .set(tenant.auth)
        .send({ data: { name: `Project ${i}` } })
        .expect(201);
      created.push(response.body.data.id);
    }
  });

  afterAll(async () => {
    await app.close();
  });

  it('walks limit=2 over 5 items: each once, totalCount right, no nextCursor on the last page', async () => {
    const seen: string[] = [];
    const pages: { limit: number; totalCount: number; nextCursor?: string }[] = [];
    let cursor: string | undefined;
    do {
      const response = await request(app.getHttpServer())
        .get('/projects')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(tenant.auth)
        .expect(200);
      seen.push(...response.body.data.map((p: { id: string }) => p.id));
      pages.push(response.body.meta);
      cursor = response.body.meta.nextCursor;
    } while (cursor && pages.length < 10);
    expect(pages.map((m) => m.limit)).toEqual([2, 2, 2]);
    expect(pages.every((m) => m.totalCount === 5)).toBe(true);
    expect(pages.map((m) => 'nextCursor' in m)).toEqual([true, true, false]);
    expect(new Set(seen).size).toBe(5);
    expect([...seen].sort()).toEqual([...created].sort());
    // Newest first.
    expect(seen).toEqual([...created].reverse());
  });

  it('keeps its place when items are added while walking', async () => {
    const first = await request(app.getHttpServer()).get('/projects').query({ limit: 2 }).set(tenant.auth).expect(200);
    await request(app.getHttpServer())
      .post('/projects')
      .set(tenant.auth)
      .send({ data: { name: 'Late arrival' } })
      .expect(201);
    const second = await request(app.getHttpServer()).get('/projects').query({ limit: 2, cursor: first.body.meta.nextCursor }).set(tenant.auth).expect(200);
    const ids = [...first.body.data, ...second.body.data].map((p: { id: string }) => p.id);
    expect(new Set(ids).size).toBe(4);
    expect(second.body.meta.totalCount).toBe(6);
  });

  it('orders rows created at the same instant by id and walks them without a gap or a repeat', async () => {
    const tied = await createTenant(app, 'tied');
    const at = new Date('2026-06-01T12:00:00.123Z');
    await app.get(PrismaService).project.createMany({
      data: Array.from({ length: 7 }, (_, i) => ({ organizationId: tied.organizationId, givenId: `tied-${i}`, name: `Tied ${i}`, createdAt: at })),
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const response = await request(app.getHttpServer())
        .get('/projects')
        .query({ limit: 3, ...(cursor ? { cursor } : {}) })
        .set(tied.auth)
        .expect(200);
      expect(response.body.meta.totalCount).toBe(7);
      seen.push(...response.body.data.map((p: { id: string }) => p.id));
      cursor = response.body.meta.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(seen).toEqual([...seen].sort().reverse());
  });

  it('applies the default page size of 20', async () => {
    const response = await request(app.getHttpServer()).get('/projects').set(tenant.auth).expect(200);
    expect(response.body.meta.limit).toBe(20);
    expect(response.body.meta.nextCursor).toBeUndefined();
  });

  it.each(['not-a-cursor', Buffer.from('["yesterday","x"]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')])(
    'rejects the cursor %s with a 400 error body',
    async (cursor) => {
      const response = await request(app.getHttpServer()).get('/projects').query({ cursor }).set(tenant.auth).expect(400);
      expect(response.body.code).toBe('dpa:Pagination:INVALID_CURSOR');
      expect(response.body.details[0].items[0]).toMatch(/^cursor/);
      expect(response.body.requestId).toBeDefined();
    },
  );

  it('refuses a cursor issued by another list, before reading anything', async () => {
    const projects = await request(app.getHttpServer()).get('/projects').query({ limit: 1 }).set(tenant.auth).expect(200);
    expect(projects.body.meta.nextCursor).toBeDefined();
    const response = await request(app.getHttpServer()).get('/api-keys').query({ cursor: projects.body.meta.nextCursor }).set(tenant.auth).expect(400);
    expect(response.body.code).toBe('dpa:Pagination:INVALID_CURSOR');
  });

  it.each([
    'WyItMjcxODIxLTA0LTIwVDAwOjAwOjAwLjAwMFoiLCJ4Il0',
    'WyItMDAwMDAxLTAxLTAxVDAwOjAwOjAwLjAwMFoiLCJ4Il0',
    Buffer.from('["projects","-271821-04-20T00:00:00.000Z","x"]').toString('base64url'),
  ])('rejects the crafted out-of-range cursor %s with a 400, not a database error', async (cursor) => {
    const response = await request(app.getHttpServer()).get('/projects').query({ cursor }).set(tenant.auth).expect(400);
    expect(response.body.code).toBe('dpa:Pagination:INVALID_CURSOR');
  });

  it.each(['0', '101', 'abc', '2.5', '-1'])('rejects limit=%s with a 400 naming the field', async (limit) => {
    const response = await request(app.getHttpServer()).get('/service-accounts').query({ limit }).set(tenant.auth).expect(400);
    expect(response.body.code).toBe('dpa:Request:VALIDATION_FAILED');
    expect(response.body.details[0]).toMatchObject({ render: 'list' });
    expect(response.body.details[0].items.join(' ')).toMatch(/^limit: /);
  });

  it('accepts limit=100, the maximum', async () => {
    const response = await request(app.getHttpServer()).get('/execution-environments').query({ limit: 100 }).set(tenant.auth).expect(200);
    expect(response.body.meta.limit).toBe(100);
  });
});
