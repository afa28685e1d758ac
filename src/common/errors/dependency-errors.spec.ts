import { Logger } from '@nestjs/common';
import { DriverAdapterError } from '@prisma/driver-adapter-utils';
import { DatabaseError } from 'pg';
import { Prisma } from '@/generated/prisma/client';
import { classifyDependencyError, dependencyStatus, dependencyUnavailableError } from './dependency-errors';
import { renderError } from './error-renderer';

const pgError = (code: string) => Object.assign(new DatabaseError('canceling statement due to statement timeout', 0, 'error'), { code, severity: 'ERROR' });
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: 'connect' });
const known = (code: string, meta?: Record<string, unknown>) => new Prisma.PrismaClientKnownRequestError('x', { code, clientVersion: '7', meta });

describe(classifyDependencyError.name, () => {
  it.each<[string, unknown, string | undefined]>([
    ['Prisma P1001 (cannot reach the database)', known('P1001'), 'postgres'],
    ['Prisma P2024 (pool timeout)', known('P2024'), 'postgres'],
    ['Prisma P2028 (transaction could not start in time)', known('P2028'), 'postgres'],
    ['a driver adapter error: database not reachable', new DriverAdapterError({ kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 }), 'postgres'],
    [
      'a driver adapter error: statement_timeout (57014)',
      new DriverAdapterError({
        kind: 'postgres',
        code: '57014',
        severity: 'ERROR',
        message: 'canceling statement due to statement timeout',
        originalCode: '57014',
        originalMessage: 'x',
      } as never),
      'postgres',
    ],
    ['a wrapped driver adapter error', known('P2010', { driverAdapterError: new DriverAdapterError({ kind: 'ConnectionClosed' }) }), 'postgres'],
    ["node-postgres' own DatabaseError: statement_timeout (57014)", pgError('57014'), 'postgres'],
    ["node-postgres' own DatabaseError: a unique violation (23505)", pgError('23505'), undefined],
    ['pg-pool acquire timeout', new Error('timeout exceeded when trying to connect'), 'postgres'],
    ['pg client-side query timeout', new Error('Query read timeout'), 'postgres'],
    ['a bare refused socket', socketError('ECONNREFUSED'), 'postgres'],
    ['ioredis command timeout', new Error('Command timed out'), 'redis'],
    ['ioredis offline', new Error("Stream isn't writeable and enableOfflineQueue options is false"), 'redis'],
    [
      'ioredis retries exhausted',
      Object.assign(new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.'), {
        name: 'MaxRetriesPerRequestError',
      }),
      'redis',
    ],
    ['a Redis error as the cause of another', new Error('enqueue failed', { cause: new Error('Connection is closed.') }), 'redis'],
    ['a unique violation', known('P2002'), undefined],
    [
      "a driver adapter error that is the caller's fault",
      new DriverAdapterError({ kind: 'UniqueConstraintViolation', constraint: { fields: ['a'] } }),
      undefined,
    ],
    ['an ordinary bug', new TypeError('x is undefined'), undefined],
    ['not an error', 'boom', undefined],
  ])('%s', (_label, error, expected) => {
    expect(classifyDependencyError(error)).toBe(expected);
  });
});

describe(dependencyUnavailableError.name, () => {
  it('renders as the 503 error body naming the dependency, with Retry-After, also for non-superadmins', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const rendered = renderError(new Error('Query read timeout'), { requestId: 'r1' });
    warn.mockRestore();
    expect(rendered.status).toBe(503);
    expect(rendered.body).toMatchObject({ code: 'dpa:Server:SERVICE_UNAVAILABLE', metadata: { dependency: 'postgres' }, requestId: 'r1' });
    expect(rendered.headers).toEqual({ 'Retry-After': expect.stringMatching(/^\d+$/) });
    expect(rendered.internal).toBe(false);
  });
});

describe('dependencyStatus', () => {
  it('logs an outage once when it starts and once when it ends', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    try {
      for (let i = 0; i < 50; i++) dependencyStatus.down('spec-dependency', socketError('ECONNREFUSED'));
      dependencyStatus.up('spec-dependency');
      dependencyStatus.up('spec-dependency');
      const about = (calls: unknown[][]) =>
        calls.filter(([fields]) => (fields as { dependency?: string }).dependency === 'spec-dependency').map(([fields]) => fields);
      expect(about(warn.mock.calls)).toEqual([{ dependency: 'spec-dependency', state: 'down', err: expect.objectContaining({ code: 'ECONNREFUSED' }) }]);
      expect(about(log.mock.calls)).toEqual([{ dependency: 'spec-dependency', state: 'up', downForMs: expect.any(Number) }]);
    } finally {
      warn.mockRestore();
      log.mockRestore();
    }
  });
});
