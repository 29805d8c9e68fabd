/**
 * How repos read database values: the ONE place that knows what `db.execute` hands back.
 *
 * Drizzle's node-postgres session replaces the pool's type parsers on every query, so rows
 * read through `db.execute` carry timestamptz as PostgreSQL's text
 * ('2026-11-21 13:47:04.766+00') and int8 as a string; numeric (wei) is a string either way.
 * Row types declare such columns `DbTime` / `number | string` and read them through these.
 */

/** A timestamptz column as it arrives: text through drizzle, a Date through `pool.query`. */
export type DbTime = Date | string;

/** A timestamptz value as a Date (PostgreSQL's text and ISO 8601 both parse). */
export function asDate(value: DbTime): Date {
  return value instanceof Date ? value : new Date(value);
}

/** A timestamptz value as an ISO 8601 string (what the API answers). */
export function asIso(value: DbTime): string {
  return asDate(value).toISOString();
}

/** An int8 value as a number (counts and nonces stay far below 2^53). */
export function asNumber(value: number | string): number {
  return typeof value === 'number' ? value : Number(value);
}
