import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate, asNumber } from '../../db/values.js';
import { ACTION_LOG_COLUMNS, type ActionLogRow } from '../ebus/repo/lookups.js';

/** Full-text match of `terms` (web-search syntax) on object text and template names. */
export function textMatch(orgId: string, terms: string): SQL {
  const q = sql`websearch_to_tsquery('simple', ${terms})`;
  return sql`(search @@ ${q} OR template_id IN (SELECT id FROM templates
    WHERE organization_id = ${orgId} AND to_tsvector('simple'::regconfig, name) @@ ${q}))`;
}

/** `custom @> {…}` for one equality; served by the GIN index objects_custom. */
export function customContains(doc: Record<string, unknown>): SQL {
  return sql`custom @> ${JSON.stringify(doc)}::jsonb`;
}

export async function objectExists(exec: Executor, orgId: string, id: string): Promise<boolean> {
  const { rows } = await exec.execute<{ one: number }>(
    sql`SELECT 1 AS one FROM objects WHERE organization_id = ${orgId} AND id = ${id}`,
  );
  return rows.length > 0;
}

export async function listObjectHistory(
  exec: Executor,
  orgId: string,
  objectId: string,
  where: SQL,
  order: SQL,
  limit: number,
): Promise<ActionLogRow[]> {
  const { rows } = await exec.execute<ActionLogRow>(sql`SELECT ${ACTION_LOG_COLUMNS}
    FROM action_logs WHERE organization_id = ${orgId} AND object_id = ${objectId} AND ${where}
    ${order} LIMIT ${limit}`);
  return rows.map((r) => ({ ...r, nonce: asNumber(r.nonce), created_at: asDate(r.created_at) }));
}
