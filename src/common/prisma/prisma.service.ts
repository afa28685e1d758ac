import { createHash } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '@/generated/prisma/client';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { dependencyStatus, isDependencyUnavailable } from '@/common/errors/dependency-errors';

// The server cancels a slow statement first (statement_timeout) and the connection stays usable;
// the client-side timeout, a little later, covers a server or network that does not answer at all.
const CLIENT_QUERY_TIMEOUT_GRACE_MS = 500;
/**
 * A connection is replaced after this long, which bounds the prepared statements it accumulates
 * (one per distinct statement text it ran; the application's texts are a bounded set, but a list
 * filter with a variable number of values makes a text per count).
 */
const CONNECTION_MAX_LIFETIME_S = 3_600;
/** Statements longer than this are not named: seldom repeated (large literal lists), and big to keep. */
const MAX_NAMED_STATEMENT_CHARS = 16_384;

/**
 * The name of a statement's server-side prepared statement: derived from its text, so the same
 * text gets the same name on every connection (pg parses a named statement once per connection
 * and reuses it; Postgres then skips parsing, and after five runs may reuse a generic plan).
 * Returns undefined (an unnamed statement, parsed every time) for very long texts.
 */
export function statementName(sql: string): string | undefined {
  if (sql.length > MAX_NAMED_STATEMENT_CHARS) return undefined;
  return `dpa_${createHash('sha1').update(sql).digest('base64url')}`;
}

/**
 * The pool behind Prisma, with every wait bounded by config: connecting and waiting for a free
 * connection (connectionTimeoutMillis), each statement (statement_timeout, query_timeout).
 */
export function createDatabasePool(config: AppConfig): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: config.databasePoolSize,
    connectionTimeoutMillis: config.databaseConnectTimeoutMs,
    statement_timeout: config.databaseQueryTimeoutMs,
    query_timeout: config.databaseQueryTimeoutMs + CLIENT_QUERY_TIMEOUT_GRACE_MS,
    idleTimeoutMillis: 30_000,
    maxLifetimeSeconds: CONNECTION_MAX_LIFETIME_S,
    keepAlive: true,
  });
  pool.on('connect', () => dependencyStatus.up('postgres'));
  pool.on('error', (error) => dependencyStatus.down('postgres', error));
  pool.on('release', (error: Error | undefined, client: pg.PoolClient) => {
    // A connection handed back while a statement is still in flight (a client-side timeout inside
    // a transaction, which Prisma releases without an error) is in an unknown state: drop it, or
    // the next request would queue behind a statement that may never answer.
    if ((client as unknown as { _getActiveQuery?: () => unknown })._getActiveQuery?.()) void client.end().catch(() => undefined);
    if (error && isDependencyUnavailable(error)) dependencyStatus.down('postgres', error);
    else dependencyStatus.up('postgres');
  });
  return pool;
}

/**
 * The pool behind Prisma for a hot statement sent as it is (see newestFirstFromSql): each text is
 * named like Prisma's statements (statementName), so it is prepared once per connection unless
 * DATABASE_PREPARED_STATEMENTS is false.
 */
export interface SqlPool {
  query<R extends object>(config: { text: string; values: unknown[]; types?: object }): Promise<{ rows: R[] }>;
}

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  /** The same pool Prisma queries through (same limits, timeouts and connection checks), for the few hot statements whose cost is mostly the Prisma client's own work. */
  readonly sql: SqlPool;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const pool = createDatabasePool(config);
    super({
      adapter: new PrismaPg(pool, {
        disposeExternalPool: true,
        // Off behind a pooler in transaction mode, where a named statement may land on another session.
        // pg sends an undefined name as an unnamed statement, as without the generator.
        statementNameGenerator: config.databasePreparedStatements ? (query) => statementName(query.sql) as string : undefined,
      }),
      transactionOptions: { maxWait: config.databaseConnectTimeoutMs, timeout: config.databaseTransactionTimeoutMs },
    });
    const prepared = config.databasePreparedStatements;
    this.sql = {
      query: async <R extends object>(query: { text: string; values: unknown[]; types?: object }) =>
        (await pool.query({ ...query, name: prepared ? statementName(query.text) : undefined } as pg.QueryConfig)) as unknown as { rows: R[] },
    };
  }

  async onModuleInit(): Promise<void> {
    await this.$connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
