import { feature, flag, int, pattern } from '../variables';

export const databaseConfig = feature(
  'Postgres',
  {
    DATABASE_URL: pattern(/^postgres(ql)?:\/\/\S+$/, 'must be a postgresql:// URL', {
      required: true,
      doc: '`postgresql://user:password@host:port/database`',
      example: 'postgresql://postgres:postgres@127.0.0.1:5432/delivery_platform',
    }),
    DATABASE_POOL_SIZE: int({ min: 1, max: 1000, default: 10, doc: 'Postgres connections per process' }),
    DATABASE_PREPARED_STATEMENTS: flag({
      default: true,
      doc: 'Each statement text is prepared once per connection (parsed and planned once, not per request); connections are replaced hourly. Set `false` behind a pooler in transaction mode (PgBouncer without `max_prepared_statements`)',
      comment: 'false behind a connection pooler in transaction mode (PgBouncer without max_prepared_statements)',
    }),
    DATABASE_CONNECT_TIMEOUT_MS: int({
      min: 100,
      max: 600_000,
      default: 5_000,
      doc: 'opening a Postgres connection, and waiting for a free one from the pool (also the longest wait to start a transaction)',
    }),
    DATABASE_QUERY_TIMEOUT_MS: int({
      min: 100,
      max: 600_000,
      default: 5_000,
      doc: 'one statement: Postgres cancels it (`statement_timeout`) and the client gives up 500 ms later if the server does not answer at all',
    }),
    DATABASE_TRANSACTION_TIMEOUT_MS: int({ min: 100, max: 600_000, default: 5_000, doc: 'an interactive transaction from start to commit' }),
  },
  (v) => ({
    databaseUrl: v.DATABASE_URL,
    databasePoolSize: v.DATABASE_POOL_SIZE,
    /** Name each statement by its text so every connection parses and plans it once (see prisma.service.ts). */
    databasePreparedStatements: v.DATABASE_PREPARED_STATEMENTS,
    databaseConnectTimeoutMs: v.DATABASE_CONNECT_TIMEOUT_MS,
    databaseQueryTimeoutMs: v.DATABASE_QUERY_TIMEOUT_MS,
    databaseTransactionTimeoutMs: v.DATABASE_TRANSACTION_TIMEOUT_MS,
  }),
);
