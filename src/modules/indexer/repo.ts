import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate, asNumber } from '../../db/values.js';
import type { ObjectRow } from '../objects/record.js';
import { OBJECT_COLUMNS, objectRow } from '../objects/repo.js';

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

export async function searchObjects(
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

export type ActionLogRow = {
  id: string;
  hash: string;
  name: string;
  wallet: string;
  signature_type: string;
  nonce: number;
  params: Record<string, unknown>;
  object_id: string | null;
  template_id: string | null;
  fee_wei: string;
  batch_id: string | null;
  created_at: Date;
};

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
  const { rows } = await exec.execute<ActionLogRow>(sql`SELECT id, hash, name, wallet,
      signature_type, nonce, params, object_id, template_id, fee_wei, batch_id, created_at
    FROM action_logs WHERE organization_id = ${orgId} AND object_id = ${objectId} AND ${where}
    ${order} LIMIT ${limit}`);
  return rows.map((r) => ({ ...r, nonce: asNumber(r.nonce), created_at: asDate(r.created_at) }));
}
