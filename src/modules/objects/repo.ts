import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { RowRunner } from '../../db/prepared.js';
import { asDate } from '../../db/values.js';
import type { ObjectRow } from './record.js';

/**
 * The columns of an object record. Named rather than `*` so the generated search
 * columns (name_lower, search) never travel.
 */
export const OBJECT_COLUMNS = sql.raw(`id, organization_id, template_id, owner, metadata, custom,
  custom_hash, latitude, longitude, geo_hash, ownership_claimed, is_redeemed, is_dropped,
  is_public, nonce, version, state_hash, content_hash, integrity_hash, prev_integrity_hash,
  collection_id, created_at, updated_at`);

/** Dates as Dates, however the driver delivered them. */
export function objectRow(row: ObjectRow): ObjectRow {
  row.created_at = asDate(row.created_at);
  row.updated_at = asDate(row.updated_at);
  return row;
}

/** The sort columns of object lists (the allow-list of sortBy). */
export const OBJECT_SORTS = {
  when_created: { column: sql`created_at`, type: 'timestamp' as const },
  when_modified: { column: sql`updated_at`, type: 'timestamp' as const },
};

export async function findObject(
  exec: Executor,
  orgId: string,
  id: string,
): Promise<ObjectRow | null> {
  const { rows } = await exec.execute<ObjectRow>(
    sql`SELECT ${OBJECT_COLUMNS} FROM objects WHERE organization_id = ${orgId} AND id = ${id}`,
  );
  return rows[0] ? objectRow(rows[0]) : null;
}

/** A page of one organization's objects; `where` and `order` come from the list helpers. */
export async function listObjects(
  exec: Executor,
  orgId: string,
  where: SQL,
  order: SQL,
  limit: number,
): Promise<ObjectRow[]> {
  const { rows } = await exec.execute<ObjectRow>(sql`SELECT ${OBJECT_COLUMNS} FROM objects
    WHERE organization_id = ${orgId} AND ${where} ${order} LIMIT ${limit}`);
  return rows.map(objectRow);
}

/**
 * A page of public objects. `is_public` is written as a bare column (not a parameter) so
 * the planner can match the partial indexes `WHERE is_public` of 0007_objects.sql.
 */
export async function listPublicObjects(
  run: RowRunner,
  where: SQL,
  order: SQL,
  limit: number,
): Promise<ObjectRow[]> {
  const rows = await run<ObjectRow>(sql`SELECT ${OBJECT_COLUMNS} FROM objects
    WHERE is_public AND ${where} ${order} LIMIT ${limit}`);
  return rows.map(objectRow);
}
