import { migrate } from '@/common/prisma/migration-runner';
import { ensureDatabase } from './services';

const url = process.env.DATABASE_URL;
if (!url || !/^postgres(ql)?:\/\//.test(url)) {
  process.stderr.write('Invalid configuration: DATABASE_URL is not set (postgresql://user:password@host:port/database)\n');
  process.exit(78);
}
const target = new URL(url);
const database = decodeURIComponent(target.pathname.slice(1));
target.pathname = '';
// A database that does not exist yet is created first: "any database, empty or older".
ensureDatabase(target.toString(), database)
  .then(() => migrate(url, (line) => process.stdout.write(`${line}\n`)))
  .then(
  (result) => process.stdout.write(`migrations: ${result.applied.length} applied, ${result.alreadyApplied} already applied\n`),
  (error: unknown) => {
    process.stderr.write(`✗ ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
