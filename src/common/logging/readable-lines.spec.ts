import { pino } from 'pino';
import { readableDestination, readableLine } from './readable-lines';

describe(readableLine.name, () => {
  const time = Date.UTC(2026, 10, 29, 12, 4, 5);

  it('writes time, level and message, then the fields that are not always there', () => {
    expect(readableLine(JSON.stringify({ level: 40, time, pid: 7, hostname: 'h', msg: 'redis reconnecting', attempt: 3, context: 'Redis' }))).toBe(
      '12:04:05 WARN  redis reconnecting  attempt=3 context=Redis\n',
    );
  });

  it('writes an access line as method, URL, status and time, with the request id last', () => {
    const line = JSON.stringify({
      level: 40,
      time,
      req: { id: 'r-1', method: 'POST', url: '/merge-queues/q/entries' },
      res: { statusCode: 409 },
      responseTime: 3,
      msg: 'request completed',
    });
    expect(readableLine(line)).toBe('12:04:05 WARN  request completed  POST /merge-queues/q/entries 409 (3 ms)  req=r-1\n');
  });

  it("puts an error's stack below the line, indented", () => {
    const line = JSON.stringify({ level: 50, time, msg: 'job failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.ts:1:1)' } });
    expect(readableLine(line)).toBe('12:04:05 ERROR job failed\n    Error: boom\n        at x (y.ts:1:1)\n');
  });

  it('quotes a field with spaces, and keeps a line that is not JSON as it is', () => {
    expect(readableLine(JSON.stringify({ level: 30, time, msg: 'm', reason: 'two words' }))).toBe('12:04:05 INFO  m  reason="two words"\n');
    expect(readableLine('plain text')).toBe('plain text\n');
  });
});

describe(readableDestination.name, () => {
  it("is pino's destination: each line readable, after pino's redaction", () => {
    const written: string[] = [];
    const logger = pino({ level: 'warn', redact: { paths: ['token'], remove: true } }, readableDestination({ write: (s) => written.push(s) }));
    logger.info('not written');
    logger.warn({ token: 'secret', queue: 'q1' }, 'slow check');
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^\d\d:\d\d:\d\d WARN {2}slow check {2}queue=q1\n$/);
    expect(written[0]).not.toContain('secret');
  });
});
