/**
 * Databases on a Postgres server, for `npm start`, `npm test`, the benchmarks and the e2e suites
 * that need a database of their own (test/support/own-database.ts): URLs and creating one.
 */
import { Client } from 'pg';

/** `serverUrl` with `database` as its database. */
export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The server URL (no database in the path) and the database name of a database URL. */
export function serverUrlOf(databaseUrl: string): { serverUrl: string; database: string } {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1)) || 'postgres';
  url.pathname = '';
  return { serverUrl: url.toString().replace(/\/$/, ''), database };
}

/** Creates the database if missing; with `fresh`, drops it first. */
export async function ensureDatabase(serverUrl: string, database: string, options: { fresh?: boolean } = {}): Promise<string> {
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    const ident = `"${database.replace(/"/g, '""')}"`;
    if (options.fresh) await client.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE ${ident}`);
  } finally {
    await client.end();
  }
  return withDatabase(serverUrl, database);
}

/** The database name of DATABASE_URL when set, else the default. */
export function databaseName(fallback: string): string {
  return process.env.DATABASE_URL ? serverUrlOf(process.env.DATABASE_URL).database : fallback;
}
