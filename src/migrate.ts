/**
 * `node dist/migrate.js` (the image's one-shot migration command; `npm run db:migrate` runs this
 * source through tsx): applies pending SQL migrations to DATABASE_URL, creating the database first
 * when it does not exist. Needs nothing but DATABASE_URL and the prisma/migrations folder (no Redis,
 * no credential keys, no dev dependency). Safe to run concurrently and repeatedly.
 */
import { Client } from 'pg';
import { migrate } from '@/common/prisma/migration-runner';

/** Creates the database of `url` when the server says it does not exist (a managed role without CREATEDB only needs it to exist). */
async function createDatabaseIfMissing(url: string): Promise<void> {
  const probe = new Client({ connectionString: url });
  try {
    await probe.connect();
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const target = new URL(url);
  const database = decodeURIComponent(target.pathname.slice(1));
  target.pathname = '/postgres';
  const admin = new Client({ connectionString: target.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`).catch((error: { code?: string }) => {
      if (error.code !== '42P04') throw error; // created meanwhile by a concurrent run
    });
  } finally {
    await admin.end();
  }
}

const url = process.env.DATABASE_URL;
if (!url || !/^postgres(ql)?:\/\/\S+$/.test(url)) {
  process.stderr.write('Invalid configuration: DATABASE_URL is not set (postgresql://user:password@host:port/database)\n');
  process.exit(78);
}
createDatabaseIfMissing(url)
  .then(() => migrate(url, (line) => process.stdout.write(`${line}\n`)))
  .then(
    (result) => process.stdout.write(`migrations: ${result.applied.length} applied, ${result.alreadyApplied} already applied\n`),
    (error: unknown) => {
      process.stderr.write(`✗ ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
