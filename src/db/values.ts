import pg from 'pg';

// Drizzle's node-postgres session replaces the pool's type parsers on every query: through
// db.execute, timestamptz arrives as text ('2026-11-21 13:47:04.766+00') and int8 as a
// string. These turn them back into what repos promise, whichever way a row was read.
const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (
  v: string,
) => Date;

/** A timestamptz value as a Date. */
export function asDate(value: Date | string): Date {
  return value instanceof Date ? value : parseTimestamptz(value);
}

/** An int8 value as a number (counts and nonces stay far below 2^53). */
export function asNumber(value: number | string): number {
  return typeof value === 'number' ? value : Number(value);
}
