/**
 * A `timestamp(3)` column's text (without time zone, stored as UTC, Postgres' ISO DateStyle:
 * `2026-11-28 03:20:15.12`) read as Prisma reads it: the text as UTC. Pure: no I/O.
 *
 * A list page reads two of these per row, so the common shape (a four-digit year from 0100 on, up
 * to six fraction digits) is read from its digits with `Date.UTC`, which allocates nothing but the
 * Date; anything else (years before 100, which `Date.UTC` would read as 19xx, five-digit years,
 * `BC`, `infinity`) goes through the parser. Both give the same instant (utc-timestamp.spec.ts);
 * fraction digits past the millisecond are dropped, as the parser drops them. One difference that
 * Postgres never reaches: `Date.UTC` rolls an out-of-range field over (month 13, hour 24, second
 * 60) where the parser gives an Invalid Date; Postgres prints only normalised timestamps.
 */
export function utcTimestamp(text: string): Date {
  const length = text.length;
  if (length < 19 || length === 20 || length > 26) return parsed(text);
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32) return parsed(text);
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || (length > 19 && text.charCodeAt(19) !== 46)) return parsed(text);
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  let millisecond = 0;
  if (length > 19) {
    const fraction = digits(text, 20, length);
    if (fraction < 0) return parsed(text);
    millisecond = length >= 23 ? Math.trunc(fraction / 10 ** (length - 23)) : fraction * 10 ** (23 - length);
  }
  if (year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return parsed(text);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, millisecond));
}

/** The decimal number of text[from, to), or -1 when a character is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i) - 48;
    if (code < 0 || code > 9) return -1;
    value = value * 10 + code;
  }
  return value;
}

function parsed(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}+00:00`);
}
