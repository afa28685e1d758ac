import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS_DIR, migrate, readMigrations } from '@/common/prisma/migration-runner';

/** A throw-away database next to the test database. */
async function withScratchDatabase<T>(run: (url: string) => Promise<T>): Promise<T> {
  const admin = new URL(process.env.DATABASE_URL as string);
  admin.pathname = '/postgres';
  const name = `dpa_scratch_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  try {
    return await run(url.toString());
  } finally {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
}

describe('db:migrate', () => {
  it('brings an empty database to the current schema, records it as Prisma does, and is safe to run twice', async () => {
    await withScratchDatabase(async (url) => {
      const first = await migrate(url);
      expect(first.applied).toEqual(readMigrations().map((m) => m.name));
      const second = await migrate(url);
      expect(second).toEqual({ applied: [], alreadyApplied: first.applied.length });

      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(
          'SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at, logs FROM "_prisma_migrations" ORDER BY migration_name',
        );
        expect(rows).toHaveLength(first.applied.length);
        for (const row of rows) {
          const sql = readFileSync(join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
          expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
          expect(row.finished_at).toBeInstanceOf(Date);
          expect(row.applied_steps_count).toBe(1);
          expect(row.rolled_back_at).toBeNull();
        }
        const tables = await client.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'Project'`);
        expect(tables.rows[0].n).toBe(1);
      } finally {
        await client.end();
      }
    });
  });

  it('runs concurrently without applying anything twice', async () => {
    await withScratchDatabase(async (url) => {
      const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
      expect(results.reduce((n, r) => n + r.applied.length, 0)).toBe(readMigrations().length);
    });
  });
});
