import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate } from '../../db/values.js';
import type { ActionLogRecord, ObjectState, TemplateInfo } from './types.js';

/**
 * The writes of one group (design.md §8), in two statements so that the organization's
 * balance row — the one lock concurrent groups of an organization share — is taken last and
 * held only for the debit, the ledger rows and the commit.
 */

export interface GroupWrite {
  newObjects: ObjectState[];
  changedObjects: ObjectState[];
  logs: (ActionLogRecord & {
    organization_id: string;
    wallet_id: string;
    signature: unknown;
    prev_integrity_hash: string;
    integrity_hash: string;
  })[];
  nonces: { id: string; expected: number; next_nonce: number }[];
  signCounts: { id: string; sign_count: number }[];
}

export interface GroupCharge {
  orgId: string;
  totalFeeWei: bigint;
  /** One row per applied action, in order; `after_offset_wei` is what later rows still debit. */
  ledger: { id: string; amount_wei: string; after_offset_wei: string; ref_id: string }[];
  now: Date;
}

const OBJECT_COLUMNS = sql.raw(`id text, organization_id text, template_id text, owner text,
  metadata jsonb, custom jsonb, custom_hash text, latitude float8, longitude float8, geo_hash text,
  ownership_claimed boolean, is_redeemed boolean, is_dropped boolean, is_public boolean,
  nonce integer, version integer, state_hash text, content_hash text, integrity_hash text,
  prev_integrity_hash text, collection_id text, created_at timestamptz, updated_at timestamptz`);

const json = (v: unknown): SQL => sql`${JSON.stringify(v)}::jsonb`;

/**
 * New and changed objects, action log rows, each wallet's nonce (guarded by the value read
 * under lock) and passkey sign counts, in one statement. Answers how many wallets moved so
 * the caller can check the guards held.
 */
export async function writeGroupState(tx: Executor, w: GroupWrite): Promise<number> {
  const { rows } = await tx.execute<{ wallets: number }>(sql`
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
        signature, nonce, params, object_id, template_id, fee_wei, batch_id, prev_integrity_hash,
        integrity_hash, created_at)
      SELECT r.id, r.organization_id, r.hash, r.name, r.wallet_id, r.wallet, r.signature_type,
        r.signature, r.nonce, r.params, r.object_id, r.template_id, r.fee_wei::numeric, NULL,
        r.prev_integrity_hash, r.integrity_hash, r.when_created::timestamptz
      FROM jsonb_to_recordset(${json(w.logs)}) AS r(id text, organization_id text, hash text,
        name text, wallet_id text, wallet text, signature_type text, signature jsonb, nonce bigint,
        params jsonb, object_id text, template_id text, fee_wei text, prev_integrity_hash text,
        integrity_hash text, when_created text)
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
    SELECT (SELECT count(*) FROM nonces)::int AS wallets,
      (SELECT count(*) FROM new_objects) + (SELECT count(*) FROM changed_objects)
        + (SELECT count(*) FROM logs) + (SELECT count(*) FROM sign_counts) AS written`);
  return rows[0]!.wallets;
}

/**
 * Debits the group's fees and writes its ledger rows, only if the balance covers them all:
 * `false` (nothing written) otherwise. Each ledger row's balance_after is the balance left
 * after the debit plus what the group's later rows still take, so the rows read in order
 * as one debit after another.
 */
export async function chargeGroup(tx: Executor, c: GroupCharge): Promise<boolean> {
  const total = c.totalFeeWei.toString();
  const { rows } = await tx.execute<{ n: number }>(sql`
    WITH debit AS (
      UPDATE organizations SET balance_wei = balance_wei - ${total}::numeric
      WHERE id = ${c.orgId} AND deleted_at IS NULL AND balance_wei >= ${total}::numeric
      RETURNING balance_wei
    ), ledger AS (
      INSERT INTO ledger_entries (id, organization_id, kind, amount_wei, balance_after_wei, ref_id, created_at)
      SELECT r.id, ${c.orgId}, 'action_fee', r.amount_wei::numeric,
        d.balance_wei + r.after_offset_wei::numeric, r.ref_id, ${c.now}
      FROM debit d, jsonb_to_recordset(${json(c.ledger)}) AS r(id text, amount_wei text,
        after_offset_wei text, ref_id text)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM debit)::int AS n, (SELECT count(*) FROM ledger)::int AS rows`);
  return rows[0]!.n === 1;
}

export interface GroupInputs {
  balance: bigint | null;
  nonces: Map<string, number>;
  templates: TemplateInfo[];
}

/**
 * One round trip for what every group reads first: locks the signer wallets (in id order)
 * and answers their next nonces, the paying organization's balance (not locked: the debit
 * re-checks it) and the templates already known to be needed (those of mints).
 */
export async function lockGroupInputs(
  tx: Executor,
  orgId: string,
  walletIds: readonly string[],
  templateIds: readonly string[],
): Promise<GroupInputs> {
  const { rows } = await tx.execute<{
    balance: string | null;
    wallets: { id: string; next_nonce: number | string }[];
    templates: (Omit<TemplateInfo, 'updated_at'> & { updated_at: string })[];
  }>(sql`
    WITH w AS (
      SELECT id, next_nonce FROM wallets
      WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(walletIds)}::jsonb))
      ORDER BY id FOR UPDATE
    )
    SELECT
      (SELECT balance_wei::text FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL)
        AS balance,
      (SELECT coalesce(json_agg(json_build_object('id', id, 'next_nonce', next_nonce)), '[]')
        FROM w) AS wallets,
      (SELECT coalesce(json_agg(t), '[]') FROM (
        SELECT id, organization_id, name, description, category, faces, actions, custom_schema,
          is_public, updated_at
        FROM templates
        WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(templateIds)}::jsonb))
      ) t) AS templates`);
  const r = rows[0]!;
  return {
    balance: r.balance === null ? null : BigInt(r.balance),
    nonces: new Map(r.wallets.map((w) => [w.id, Number(w.next_nonce)])),
    templates: r.templates.map((t) => ({ ...t, updated_at: asDate(t.updated_at) })),
  };
}
