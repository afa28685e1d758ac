import { Writable } from 'node:stream';
import { stdSerializers } from 'pino';
import { AppError } from '@/common/errors/app-error';
import { defineErrors } from '@/common/errors/error-catalogue';
import { serializeError } from './error-serializer';
import { createRootLogger } from './request-logger';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

const Errors = defineErrors('Test', { DOWN: [502, 'The provider could not be reached.'] });

describe('serializeError (the logger must not throw while logging a failure, issue 41)', () => {
  it('serialises a frozen error, and an error whose error-like property is frozen, without writing to either', () => {
    const frozen = Object.freeze(Object.assign(new Error('frozen'), { code: 'ENOTFOUND' }));
    expect(() => stdSerializers.err(frozen)).toThrow(/object is not extensible/);
    expect(serializeError(frozen)).toMatchObject({ type: 'Error', message: 'frozen', code: 'ENOTFOUND', stack: expect.stringContaining('frozen') });
    expect(Object.getOwnPropertySymbols(frozen)).toEqual([]);
    const sealed = Object.preventExtensions(new Error('not extensible'));
    expect(serializeError(sealed)).toMatchObject({ message: 'not extensible' });
    // What the API logged for a provider it could not reach: an AppError whose catalogue entry (frozen) has a message.
    const appError = new AppError(Errors.DOWN, { metadata: { providerReason: 'the provider could not be reached (ENOTFOUND)' } });
    expect(Object.isFrozen(appError.entry)).toBe(true);
    expect(() => stdSerializers.err(appError)).toThrow(/object is not extensible/);
    expect(serializeError(appError)).toMatchObject({
      type: 'AppError',
      message: 'The provider could not be reached.',
      entry: { message: 'The provider could not be reached.', code: 'dpa:Test:DOWN' },
      options: { metadata: { providerReason: 'the provider could not be reached (ENOTFOUND)' } },
    });
  });

  it('writes what pino-std-serializers writes for an ordinary error: causes in message and stack, aggregate errors, own fields', () => {
    const cause = Object.assign(new Error('getaddrinfo ENOTFOUND nonexistent.invalid'), { code: 'ENOTFOUND' });
    const error = Object.assign(new TypeError('fetch failed', { cause }), { status: 500, nested: new Error('inner') });
    const aggregate = new AggregateError([new Error('a'), error], 'several');
    for (const value of [error, aggregate, cause])
      expect(JSON.parse(JSON.stringify(serializeError(value)))).toEqual(JSON.parse(JSON.stringify(stdSerializers.err(value))));
    expect(serializeError(error)).toMatchObject({
      message: 'fetch failed: getaddrinfo ENOTFOUND nonexistent.invalid',
      stack: expect.stringContaining('caused by: Error: getaddrinfo'),
    });
    expect((serializeError(error) as { raw: unknown }).raw).toBe(error);
    expect(serializeError('text')).toBe('text');
  });

  it('stops at cycles: an error that is its own cause, or holds itself', () => {
    const looped = new Error('loop') as Error & { self?: unknown };
    (looped as { cause?: unknown }).cause = looped;
    looped.self = looped;
    expect(serializeError(looped)).toMatchObject({ message: 'loop: loop: ...', stack: expect.stringContaining('causes have become circular') });
    expect(serializeError(looped)).not.toHaveProperty('self');
  });

  it('a getter that throws does not make the line go missing', () => {
    const hostile = new Error('hostile');
    Object.defineProperty(hostile, 'boom', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    expect(serializeError(hostile)).toMatchObject({ message: 'hostile' });
  });

  it('the root logger logs a frozen error at error level instead of throwing', () => {
    const { lines, stream } = capture();
    const logger = createRootLogger('info', stream);
    const appError = new AppError(Errors.DOWN);
    expect(() => logger.error({ err: appError, requestId: 'r1' }, 'request failed')).not.toThrow();
    expect(() => logger.error(Object.freeze(new Error('frozen first argument')))).not.toThrow();
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'request failed',
      requestId: 'r1',
      err: { type: 'AppError', message: 'The provider could not be reached.' },
    });
    expect(lines[1]).toMatchObject({ err: { message: 'frozen first argument' } });
  });
});
