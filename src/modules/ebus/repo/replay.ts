import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, asNumber } from '../../../db/values.js';
import type { ObjectState, TemplateInfo } from '../../objects/index.js';
import type { ActionLogRow } from './action-logs.js';

/** A logged action with the object chain link it made. */
export type LoggedActionRow = ActionLogRow & {
  prev_integrity_hash: string | null;
  integrity_hash: string | null;
  /** Its place in the order actions were applied (an object's chain follows it). */
  seq: number;
};

const COLUMNS = sql.raw(`id, hash, name, wallet, organization_id, signature_type, signature,
  nonce, params, expires, object_id, template_id, template_version, fee_wei::text AS fee_wei,
  batch_id, created_at, prev_integrity_hash, integrity_hash, seq`);

function toRow(r: LoggedActionRow): LoggedActionRow {
  return { ...r, nonce: asNumber(r.nonce), seq: asNumber(r.seq), created_at: asDate(r.created_at) };
}

/** The action of this organization whose signed text has this hash, if it was applied. */
export async function findLoggedAction(
  exec: Executor,
  orgId: string,
  hash: string,
): Promise<LoggedActionRow | null> {
  const { rows } = await exec.execute<LoggedActionRow>(sql`
    SELECT ${COLUMNS} FROM action_logs WHERE hash = ${hash} AND organization_id = ${orgId}`);
  return rows[0] ? toRow(rows[0]) : null;
}

/** The first `limit` logged actions on an object up to `uptoSeq`, in the order applied. */
export async function findObjectActions(
  exec: Executor,
  objectId: string,
  uptoSeq: number,
  limit: number,
): Promise<LoggedActionRow[]> {
  const { rows } = await exec.execute<LoggedActionRow>(sql`
    SELECT ${COLUMNS} FROM action_logs WHERE object_id = ${objectId} AND seq <= ${uptoSeq}
    ORDER BY seq LIMIT ${limit}`);
  return rows.map(toRow);
}

export async function findObjectState(
  exec: Executor,
  objectId: string,
): Promise<ObjectState | null> {
  const { rows } = await exec.execute<ObjectState>(
    sql`SELECT * FROM objects WHERE id = ${objectId}`,
  );
  const r = rows[0];
  if (!r) return null;
  return {
    ...r,
    collection_id: r.collection_id ?? null,
    created_at: asDate(r.created_at),
    updated_at: asDate(r.updated_at),
  };
}

/**
 * A template as each of its kept versions was (name, description, category, faces), the
 * rest as it is now; keyed by version.
 */
export async function findTemplateVersions(
  exec: Executor,
  templateId: string,
): Promise<Map<number, TemplateInfo>> {
  const { rows } = await exec.execute<TemplateInfo>(sql`
    SELECT t.id, t.organization_id, v.name, v.description, v.category, v.faces, t.actions,
      t.custom_schema, t.is_public, v.version, t.updated_at
    FROM template_versions v JOIN templates t ON t.id = v.template_id
    WHERE v.template_id = ${templateId}`);
  return new Map(
    rows.map((r) => [asNumber(r.version), { ...r, updated_at: asDate(r.updated_at) }]),
  );
}
