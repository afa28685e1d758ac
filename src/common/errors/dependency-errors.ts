import { Logger } from '@nestjs/common';
import { AppError } from './app-error';
import { ServerErrors } from './common.errors';

export type Dependency = 'postgres' | 'redis';

/** Seconds a client is told to wait (Retry-After) when a dependency is unavailable. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

// Prisma's codes for "could not reach / lost / timed out talking to the database".
const PRISMA_UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028']);
// DriverAdapterError kinds (@prisma/adapter-pg's mapping of socket and server errors).
const ADAPTER_UNAVAILABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
// Postgres SQLSTATEs: query_canceled (statement_timeout), server shutting down or starting, too many connections, connection exceptions (08xxx).
const POSTGRES_UNAVAILABLE_STATES = /^(57014|57P0[1-3]|53300|08\d{3})$/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// node-postgres and pg-pool raise plain Errors for their own timeouts and lost connections.
const PG_MESSAGES =
  /^(timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable)/;
// ioredis (and BullMQ, which uses it) when the connection is down, closed, or a command timed out.
const REDIS_MESSAGES = /^(Command timed out|Stream isn't writeable|Connection is closed|Reached the max retries per request limit|Socket timeout)/;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  syscall?: unknown;
  severity?: unknown;
  port?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: unknown };
  errors?: unknown;
}

function classifyOne(error: ErrorLike): Dependency | 'socket' | undefined {
  const name = typeof error.name === 'string' ? error.name : '';
  const message = typeof error.message === 'string' ? error.message : '';
  const code = typeof error.code === 'string' ? error.code : '';
  if (name === 'PrismaClientInitializationError' || (name === 'PrismaClientKnownRequestError' && PRISMA_UNAVAILABLE_CODES.has(code))) return 'postgres';
  if (name === 'DriverAdapterError' && error.cause && typeof error.cause === 'object') {
    const cause = error.cause as { kind?: string; originalCode?: string; code?: string };
    if (ADAPTER_UNAVAILABLE_KINDS.has(cause.kind ?? '')) return 'postgres';
    if (cause.kind === 'postgres' && POSTGRES_UNAVAILABLE_STATES.test(cause.originalCode ?? cause.code ?? '')) return 'postgres';
  }
  if (name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.test(message)) return 'redis';
  if (PG_MESSAGES.test(message)) return 'postgres';
  if (typeof error.syscall === 'string' && POSTGRES_UNAVAILABLE_STATES.test(code)) return 'postgres';
  // node-postgres' DatabaseError (a statement sent to the pool without Prisma): the server's SQLSTATE.
  if (typeof error.severity === 'string' && POSTGRES_UNAVAILABLE_STATES.test(code)) return 'postgres';
  if (SOCKET_CODES.has(code)) return 'socket';
  return undefined;
}

/**
 * Which dependency an error says is unavailable (down, unreachable, or too slow), or undefined
 * when the error is something else. Follows `cause`, Prisma's wrapped driver error and
 * AggregateError members, since each layer wraps the one below.
 */
export function classifyDependencyError(error: unknown): Dependency | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  let socketLevel = false;
  while (queue.length > 0 && seen.size < 16) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const e = current as ErrorLike;
    const found = classifyOne(e);
    if (found === 'postgres' || found === 'redis') return found;
    if (found === 'socket') socketLevel = true;
    queue.push(e.cause, e.meta?.driverAdapterError);
    if (Array.isArray(e.errors)) queue.push(...(e.errors as unknown[]));
  }
  // A bare socket error names no driver; the only sockets requests open are to these two.
  return socketLevel ? 'postgres' : undefined;
}

export function isDependencyUnavailable(error: unknown): boolean {
  return classifyDependencyError(error) !== undefined;
}

/**
 * Whether each dependency was last seen up or down, so that an outage is logged once when it
 * starts (warn) and once when it ends (info) instead of once per failed request or retry.
 */
class DependencyStatus {
  private readonly logger = new Logger('Dependencies');
  private readonly down_ = new Map<string, number>();

  down(dependency: string, error?: unknown): void {
    if (this.down_.has(dependency)) return;
    this.down_.set(dependency, Date.now());
    const err = error instanceof Error ? { name: error.name, message: error.message, code: (error as { code?: unknown }).code } : undefined;
    this.logger.warn({ dependency, state: 'down', err }, `${dependency} unavailable`);
  }

  up(dependency: string): void {
    const since = this.down_.get(dependency);
    if (since === undefined) return;
    this.down_.delete(dependency);
    this.logger.log({ dependency, state: 'up', downForMs: Date.now() - since }, `${dependency} available again`);
  }

  isDown(dependency: string): boolean {
    return this.down_.has(dependency);
  }
}

/** One per process: the state of a dependency is the same for every client of it in the process. */
export const dependencyStatus = new DependencyStatus();

/**
 * The 503 for an error that says a dependency is unavailable (undefined for any other error):
 * the error body names the dependency in metadata and the response carries Retry-After.
 */
export function dependencyUnavailableError(error: unknown): AppError | undefined {
  const dependency = classifyDependencyError(error);
  if (!dependency) return undefined;
  dependencyStatus.down(dependency, error);
  return new AppError(ServerErrors.SERVICE_UNAVAILABLE, {
    message: `${dependency === 'postgres' ? 'The database' : 'Redis'} is unavailable or too slow; try again shortly.`,
    metadata: { dependency },
    headers: { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
    cause: error,
  });
}
