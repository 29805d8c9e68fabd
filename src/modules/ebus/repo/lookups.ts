import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, asNumber } from '../../../db/values.js';
import { and, dateFilters, keysetCondition, orderBy, type ParsedList } from '../../../lib/list.js';
import type { TemplateInfo } from '../../objects/actions/types.js';
import type { ObjectState } from '../../objects/record.js';
import type { ActionLogRecord } from '../types.js';

/**
 * SQL of the event bus. Lookups that name a wallet or credential are network-wide (an
 * action addresses its wallet and object by address and id); everything the caller reads
 * back (the action log) is scoped by the paying organization.
 */

export type SignerRow = {
  wallet_id: string | null;
  address: string | null;
  next_nonce: number | null;
  role: string | null;
  cred_id: string | null;
  cred_wallet_id: string | null;
  public_key: Buffer | null;
  sign_count: number | null;
};

/** The wallet at `address`, its role in `orgId`, and the credential (type, external id). */
export async function findSigner(
  exec: Executor,
  orgId: string,
  address: string,
  credType: 'eoa' | 'passkey',
  externalId: string,
): Promise<SignerRow> {
  const { rows } = await exec.execute<SignerRow>(sql`
    SELECT w.id AS wallet_id, w.address, w.next_nonce,
      (SELECT m.role FROM members m WHERE m.organization_id = ${orgId}
         AND m.wallet_id = w.id AND m.status = 'active') AS role,
      c.id AS cred_id, c.wallet_id AS cred_wallet_id, c.public_key, c.sign_count
    FROM (SELECT 1) AS one
    LEFT JOIN wallets w ON w.address = ${address}
    LEFT JOIN credentials c ON c.type = ${credType} AND c.external_id = ${externalId}
      AND c.removed_at IS NULL`);
  const r = rows[0]!;
  return {
    ...r,
    next_nonce: r.next_nonce === null ? null : asNumber(r.next_nonce),
    sign_count: r.sign_count === null ? null : asNumber(r.sign_count),
  };
}

export type WalletNonceRow = {
  id: string;
  address: string;
  next_nonce: number;
  role: string | null;
};

/** A wallet by id or address, with its role in `orgId` (null when not an active member). */
export async function findWallet(
  exec: Executor,
  orgId: string,
  by: { id: string } | { address: string },
): Promise<WalletNonceRow | null> {
  const where = 'id' in by ? sql`w.id = ${by.id}` : sql`w.address = ${by.address}`;
  const { rows } = await exec.execute<WalletNonceRow>(sql`
    SELECT w.id, w.address, w.next_nonce,
      (SELECT m.role FROM members m WHERE m.organization_id = ${orgId}
         AND m.wallet_id = w.id AND m.status = 'active') AS role
    FROM wallets w WHERE ${where}`);
  const r = rows[0];
  return r ? { ...r, next_nonce: asNumber(r.next_nonce) } : null;
}

const jsonList = (values: readonly string[]) =>
  sql`(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;

/** Locks the objects the group touches, in id order. */
export async function lockObjects(tx: Executor, ids: readonly string[]): Promise<ObjectState[]> {
  if (ids.length === 0) return [];
  const { rows } = await tx.execute<ObjectState>(sql`
    SELECT * FROM objects WHERE id IN ${jsonList(ids)} ORDER BY id FOR UPDATE`);
  return rows.map((r) => ({
    ...r,
    created_at: asDate(r.created_at),
    updated_at: asDate(r.updated_at),
  }));
}

export async function findTemplates(
  exec: Executor,
  ids: readonly string[],
): Promise<TemplateInfo[]> {
  if (ids.length === 0) return [];
  const { rows } = await exec.execute<TemplateInfo>(sql`
    SELECT id, organization_id, name, description, category, faces, actions, custom_schema,
      is_public, updated_at
    FROM templates WHERE id IN ${jsonList(ids)}`);
  return rows.map((r) => ({ ...r, updated_at: asDate(r.updated_at) }));
}

/** Active roles of wallets in organizations, keyed `${orgId} ${walletId}`. */
export async function findRoles(
  exec: Executor,
  pairs: readonly { orgId: string; walletId: string }[],
): Promise<Map<string, string>> {
  if (pairs.length === 0) return new Map();
  const { rows } = await exec.execute<{
    organization_id: string;
    wallet_id: string;
    role: string;
  }>(sql`
    SELECT m.organization_id, m.wallet_id, m.role
    FROM members m
    JOIN jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) AS p("orgId" text, "walletId" text)
      ON m.organization_id = p."orgId" AND m.wallet_id = p."walletId"
    WHERE m.status = 'active'`);
  return new Map(rows.map((r) => [`${r.organization_id} ${r.wallet_id}`, r.role]));
}

export type ActionLogRow = Omit<ActionLogRecord, 'when_created'> & { created_at: Date };

/** The columns of an action log record, for every query that answers one. */
export const ACTION_LOG_COLUMNS = sql.raw(`id, hash, name, wallet, signature_type, nonce, params,
  object_id, template_id, fee_wei::text AS fee_wei, batch_id, created_at`);

export function toActionLogRecord(r: ActionLogRow): ActionLogRecord {
  return {
    id: r.id,
    hash: r.hash,
    name: r.name,
    wallet: r.wallet,
    signature_type: r.signature_type,
    nonce: r.nonce,
    params: r.params,
    object_id: r.object_id,
    template_id: r.template_id,
    fee_wei: r.fee_wei,
    batch_id: r.batch_id,
    when_created: r.created_at.toISOString(),
  };
}

export interface ActionLogFilters {
  id?: string;
  wallet?: string;
  object_id?: string;
  name?: string;
  hash?: string;
  query: Record<string, unknown>;
}

/** One page of the organization's action log (list conventions of design.md §3). */
export async function listActionLogs(
  exec: Executor,
  orgId: string,
  p: ParsedList,
  f: ActionLogFilters,
): Promise<ActionLogRow[]> {
  const where = and([
    sql`organization_id = ${orgId}`,
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    f.wallet !== undefined ? sql`wallet = ${f.wallet.toLowerCase()}` : undefined,
    f.object_id !== undefined ? sql`object_id = ${f.object_id}` : undefined,
    f.name !== undefined ? sql`name = ${f.name}` : undefined,
    f.hash !== undefined ? sql`hash = ${f.hash.toLowerCase()}` : undefined,
    keysetCondition(p),
    ...dateFilters(f.query, sql`created_at`),
  ]);
  const { rows } = await exec.execute<ActionLogRow>(sql`
    SELECT ${ACTION_LOG_COLUMNS} FROM action_logs WHERE ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows.map((r) => ({ ...r, nonce: asNumber(r.nonce), created_at: asDate(r.created_at) }));
}
