import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { migrate } from '@/common/prisma/migration-runner';
import { ensureDatabase, withDatabase } from '@tools/workspace/databases';

/**
 * A fresh, migrated database and a queue prefix of a suite's own, for suites that run an
 * in-process worker with providers or settings of their own. On the shared database and prefix the
 * other suites' workers sweep and execute every queue (with their git and their settings), and
 * this suite's worker executes theirs. Named after the run's test database, so that checkouts
 * running side by side (DPA_TEST_DATABASE) do not share it; dropped by `drop()`.
 */
export async function ownDatabase(suffix: string): Promise<{ databaseUrl: string; queuePrefix: string; drop: () => Promise<void> }> {
  const shared = process.env.DATABASE_URL as string;
  const name = `${new URL(shared).pathname.slice(1)}_${suffix}`;
  const databaseUrl = await ensureDatabase(shared, name, { fresh: true });
  await migrate(databaseUrl);
  return {
    databaseUrl,
    queuePrefix: `dpa-${suffix}-${randomUUID().slice(0, 8)}`,
    drop: async () => {
      const admin = new Client({ connectionString: withDatabase(shared, 'postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).finally(() => admin.end());
    },
  };
}
