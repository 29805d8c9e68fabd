import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, asNumber } from '../../../db/values.js';
import type { TemplateInfo } from '../../objects/index.js';
import type { ObjectState } from '../../objects/index.js';

/**
 * The event bus's lookups. Those that name a wallet or credential are network-wide (an
 * action addresses its wallet and object by address and id); what the caller reads back
 * (the action log, action-logs.ts) is scoped by the paying organization.
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
      is_public, version, updated_at
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
