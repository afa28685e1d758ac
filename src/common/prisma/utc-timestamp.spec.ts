import fc from 'fast-check';
import { utcTimestamp } from './utc-timestamp';

/** What the function read before its digit path: the text as an ISO instant in UTC. */
const reference = (text: string) => new Date(`${text.replace(' ', 'T')}+00:00`).getTime();

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Postgres' ISO DateStyle text of a timestamp without time zone, 0 to 6 fraction digits. */
const timestampText = fc
  .record({
    time: fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
    fraction: fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 0, maxLength: 6 }),
  })
  .map(({ time, fraction }) => {
    const t = time;
    const date = `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1, 2)}-${pad(t.getUTCDate(), 2)}`;
    const clock = `${pad(t.getUTCHours(), 2)}:${pad(t.getUTCMinutes(), 2)}:${pad(t.getUTCSeconds(), 2)}`;
    return `${date} ${clock}${fraction ? `.${fraction}` : ''}`;
  });

describe('utcTimestamp', () => {
  it('reads 20,000 generated timestamps as the ISO parser does, fraction digits past the millisecond dropped', () => {
    fc.assert(
      fc.property(timestampText, (text) => {
        expect(utcTimestamp(text).getTime()).toBe(reference(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it.each([
    ['2026-11-28 03:20:15', Date.UTC(2026, 10, 28, 3, 20, 15)],
    ['2026-11-28 03:20:15.1', Date.UTC(2026, 10, 28, 3, 20, 15, 100)],
    ['2026-11-28 03:20:15.12', Date.UTC(2026, 10, 28, 3, 20, 15, 120)],
    ['2026-11-28 03:20:15.123', Date.UTC(2026, 10, 28, 3, 20, 15, 123)],
    ['2026-11-28 03:20:15.123999', Date.UTC(2026, 10, 28, 3, 20, 15, 123)],
    ['2024-02-29 23:59:59.999', Date.UTC(2024, 1, 29, 23, 59, 59, 999)],
    // Years before 100: Date.UTC would read 99 as 1999, so these take the parser.
    ['0099-01-01 00:00:00', new Date('0099-01-01T00:00:00Z').getTime()],
    ['0001-06-15 12:00:00.5', new Date('0001-06-15T12:00:00.500Z').getTime()],
  ])('reads %s', (text, expected) => {
    expect(utcTimestamp(text).getTime()).toBe(expected);
  });

  it('hands every other shape to the parser, so what it cannot read is an Invalid Date as before', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '2026-11-28 03:20:15 BC',
      '12026-11-28 03:20:15',
      '2026-11-28 03:20:15.',
      '2026-11-28T03:20:15',
      '2026-1x-28 03:20:15',
      '',
    ]) {
      const got = utcTimestamp(text).getTime();
      const expected = reference(text);
      expect(Number.isNaN(got) ? 'invalid' : got).toBe(Number.isNaN(expected) ? 'invalid' : expected);
    }
  });
});
