/**
 * A `timestamp(3)` column's text (without time zone, stored as UTC, Postgres' ISO DateStyle:
 * `2026-11-28 03:20:15.12`) read as Prisma reads it: the text as UTC. Pure: no I/O.
 */
export function utcTimestamp(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}+00:00`);
}
