import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService, statementName } from '@/common/prisma/prisma.service';
import { createTestApp } from '../support/app';
import { createTenant } from '../support/factories';

/**
 * DATABASE_PREPARED_STATEMENTS: with one connection in the pool, every statement of a request runs
 * on the connection this test then inspects (pg_prepared_statements lists that session's own).
 */
async function appWith(prepared: 'true' | 'false'): Promise<NestExpressApplication> {
  const saved = { pool: process.env.DATABASE_POOL_SIZE, prepared: process.env.DATABASE_PREPARED_STATEMENTS };
  process.env.DATABASE_POOL_SIZE = '1';
  process.env.DATABASE_PREPARED_STATEMENTS = prepared;
  try {
    return await createTestApp();
  } finally {
    for (const [name, value] of [
      ['DATABASE_POOL_SIZE', saved.pool],
      ['DATABASE_PREPARED_STATEMENTS', saved.prepared],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

async function preparedNames(app: NestExpressApplication): Promise<string[]> {
  const rows = await app.get(PrismaService).$queryRaw<{ name: string }[]>`SELECT name FROM pg_prepared_statements WHERE name LIKE 'dpa\\_%'`;
  return rows.map((row) => row.name);
}

describe('Prepared statements (DATABASE_PREPARED_STATEMENTS)', () => {
  it('names a statement by its text: the same text the same name, another text another, a huge one none', () => {
    expect(statementName('SELECT 1')).toBe(statementName('SELECT 1'));
    expect(statementName('SELECT 1')).not.toBe(statementName('SELECT 2'));
    expect(statementName('SELECT 1')).toMatch(/^dpa_[A-Za-z0-9_-]{27}$/);
    expect(statementName(`SELECT ${'1,'.repeat(10_000)}1`)).toBeUndefined();
  });

  describe('on (the default)', () => {
    let app: NestExpressApplication;
    beforeAll(async () => {
      app = await appWith('true');
    });
    afterAll(() => app?.close());

    it('prepares each statement of a list request once on its connection and reuses it on the next', async () => {
      const tenant = await createTenant(app, 'prepared');
      await request(app.getHttpServer()).get('/projects').set(tenant.auth).expect(200);
      const afterFirst = await preparedNames(app);
      expect(afterFirst.length).toBeGreaterThan(0);
      await request(app.getHttpServer()).get('/projects').set(tenant.auth).expect(200);
      await request(app.getHttpServer()).get('/module-versions/summaries').set(tenant.auth).expect(200);
      const afterMore = await preparedNames(app);
      // The repeated list added no statement; the new route added its own.
      expect(afterMore.length).toBeGreaterThan(afterFirst.length);
      expect(afterMore).toEqual(expect.arrayContaining(afterFirst));
      await request(app.getHttpServer()).get('/projects').set(tenant.auth).expect(200);
      expect((await preparedNames(app)).sort()).toEqual(afterMore.sort());
    });
  });

  describe('off', () => {
    let app: NestExpressApplication;
    beforeAll(async () => {
      app = await appWith('false');
    });
    afterAll(() => app?.close());

    it('leaves no prepared statement on the connection', async () => {
      const tenant = await createTenant(app, 'unprepared');
      await request(app.getHttpServer()).get('/projects').set(tenant.auth).expect(200);
      expect(await preparedNames(app)).toEqual([]);
    });
  });
});
