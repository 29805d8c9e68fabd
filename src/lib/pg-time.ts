/**
 * A timestamp column as a Date. Drizzle's `execute` hands timestamptz back as PostgreSQL's
 * text (`2026-11-21 13:46:57.123+00`), not as a Date, whatever the pool's type parsers say.
 */
export function asDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}
