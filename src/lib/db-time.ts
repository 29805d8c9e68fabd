/**
 * drizzle's `db.execute()` sets its own type parsers and hands timestamptz columns back
 * as text (`2026-11-21 13:47:20.173+00`), not as Date, whatever the pool is told. Rows
 * read with raw SQL type such columns `DbTime` and read them through `dbDate`.
 */
export type DbTime = Date | string;

export function dbDate(value: DbTime): Date {
  return value instanceof Date ? value : new Date(value);
}

export function dbIso(value: DbTime): string {
  return dbDate(value).toISOString();
}
