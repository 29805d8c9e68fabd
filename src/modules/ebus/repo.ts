import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate, asNumber } from '../../db/values.js';
import { and, dateFilters, keysetCondition, orderBy, type ParsedList } from '../../lib/list.js';
import type { ActionLogRecord, ObjectState, TemplateInfo } from './types.js';

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

/** Locks the paying organization's row (the first lock of every group: one order, no deadlock). */
export async function lockOrganization(tx: Executor, orgId: string): Promise<bigint | null> {
  const { rows } = await tx.execute<{ balance_wei: string }>(
    sql`SELECT balance_wei FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL FOR UPDATE`,
  );
  return rows[0] ? BigInt(rows[0].balance_wei) : null;
}

/** Locks the signer wallets in id order; answers their next nonces. */
export async function lockWallets(
  tx: Executor,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const { rows } = await tx.execute<{ id: string; next_nonce: number }>(sql`
    SELECT id, next_nonce FROM wallets WHERE id IN ${jsonList(ids)} ORDER BY id FOR UPDATE`);
  return new Map(rows.map((r) => [r.id, asNumber(r.next_nonce)]));
}

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

export interface GroupWrite {
  orgId: string;
  totalFeeWei: bigint;
  newObjects: ObjectState[];
  changedObjects: ObjectState[];
  logs: (ActionLogRecord & { organization_id: string; wallet_id: string; signature: unknown })[];
  ledger: { id: string; amount_wei: string; balance_after_wei: string; ref_id: string }[];
  nonces: { id: string; expected: number; next_nonce: number }[];
  signCounts: { id: string; sign_count: number }[];
  now: Date;
}

const OBJECT_COLUMNS = sql.raw(`id text, organization_id text, template_id text, owner text,
  metadata jsonb, custom jsonb, custom_hash text, latitude float8, longitude float8, geo_hash text,
  ownership_claimed boolean, is_redeemed boolean, is_dropped boolean, is_public boolean,
  nonce integer, version integer, state_hash text, content_hash text, integrity_hash text,
  prev_integrity_hash text, collection_id text, created_at timestamptz, updated_at timestamptz`);

/**
 * Every write of one group in ONE statement (design.md §8): new and changed objects, the
 * action log rows, the fee ledger rows, one balance debit, the nonce of each wallet guarded
 * by the value read under lock, and passkey sign counts. Answers how many wallets and
 * organizations were updated so the caller can check the guards held.
 */
export async function writeGroup(
  tx: Executor,
  w: GroupWrite,
): Promise<{ wallets: number; orgs: number }> {
  const json = (v: unknown): SQL => sql`${JSON.stringify(v)}::jsonb`;
  const { rows } = await tx.execute<{ wallets: number; orgs: number }>(sql`
    WITH new_objects AS (
      INSERT INTO objects (id, organization_id, template_id, owner, metadata, custom, custom_hash,
        latitude, longitude, geo_hash, ownership_claimed, is_redeemed, is_dropped, is_public, nonce,
        version, state_hash, content_hash, integrity_hash, prev_integrity_hash, collection_id,
        created_at, updated_at)
      SELECT * FROM jsonb_to_recordset(${json(w.newObjects)}) AS r(${OBJECT_COLUMNS})
      RETURNING 1
    ), changed_objects AS (
      UPDATE objects o SET owner = r.owner, metadata = r.metadata, custom = r.custom,
        custom_hash = r.custom_hash, latitude = r.latitude, longitude = r.longitude,
        geo_hash = r.geo_hash, is_redeemed = r.is_redeemed, is_dropped = r.is_dropped,
        nonce = r.nonce, version = r.version, state_hash = r.state_hash,
        content_hash = r.content_hash, integrity_hash = r.integrity_hash,
        prev_integrity_hash = r.prev_integrity_hash, updated_at = r.updated_at
      FROM jsonb_to_recordset(${json(w.changedObjects)}) AS r(${OBJECT_COLUMNS})
      WHERE o.id = r.id
      RETURNING 1
    ), logs AS (
      INSERT INTO action_logs (id, organization_id, hash, name, wallet_id, wallet, signature_type,
        signature, nonce, params, object_id, template_id, fee_wei, batch_id, created_at)
      SELECT r.id, r.organization_id, r.hash, r.name, r.wallet_id, r.wallet, r.signature_type,
        r.signature, r.nonce, r.params, r.object_id, r.template_id, r.fee_wei::numeric, NULL,
        r.when_created::timestamptz
      FROM jsonb_to_recordset(${json(w.logs)}) AS r(id text, organization_id text, hash text,
        name text, wallet_id text, wallet text, signature_type text, signature jsonb, nonce bigint,
        params jsonb, object_id text, template_id text, fee_wei text, when_created text)
      RETURNING 1
    ), ledger AS (
      INSERT INTO ledger_entries (id, organization_id, kind, amount_wei, balance_after_wei, ref_id, created_at)
      SELECT r.id, ${w.orgId}, 'action_fee', r.amount_wei::numeric, r.balance_after_wei::numeric,
        r.ref_id, ${w.now}
      FROM jsonb_to_recordset(${json(w.ledger)}) AS r(id text, amount_wei text,
        balance_after_wei text, ref_id text)
      RETURNING 1
    ), balance AS (
      UPDATE organizations SET balance_wei = balance_wei - ${w.totalFeeWei.toString()}::numeric
      WHERE id = ${w.orgId}
      RETURNING 1
    ), nonces AS (
      UPDATE wallets wl SET next_nonce = r.next_nonce
      FROM jsonb_to_recordset(${json(w.nonces)}) AS r(id text, expected bigint, next_nonce bigint)
      WHERE wl.id = r.id AND wl.next_nonce = r.expected
      RETURNING 1
    ), sign_counts AS (
      UPDATE credentials c SET sign_count = GREATEST(c.sign_count, r.sign_count)
      FROM jsonb_to_recordset(${json(w.signCounts)}) AS r(id text, sign_count bigint)
      WHERE c.id = r.id
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM nonces)::int AS wallets, (SELECT count(*) FROM balance)::int AS orgs,
      (SELECT count(*) FROM new_objects) + (SELECT count(*) FROM changed_objects)
        + (SELECT count(*) FROM logs) + (SELECT count(*) FROM ledger)
        + (SELECT count(*) FROM sign_counts) AS written`);
  return rows[0]!;
}

/** A row of `action_logs` as read back: the record with `created_at` for `when_created`. */
export type ActionLogRow = Omit<ActionLogRecord, 'when_created'> & { created_at: Date };

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
    SELECT id, hash, name, wallet, signature_type, nonce, params, object_id, template_id,
      fee_wei::text AS fee_wei, batch_id, created_at
    FROM action_logs WHERE ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows.map((r) => ({ ...r, nonce: asNumber(r.nonce), created_at: asDate(r.created_at) }));
}
