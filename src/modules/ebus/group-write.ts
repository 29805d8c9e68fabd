import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate } from '../../db/values.js';
import type { ActionLogRecord, ObjectState, TemplateInfo } from './types.js';

/**
 * The writes of one group (design.md §8) as ONE statement: new and changed objects, action
 * log rows, wallet nonces, passkey sign counts, the hooks' rows (batches, webhooks), the
 * debit of the organization's balance and the ledger rows. Every write that depends on state
 * read earlier is guarded by it (a wallet's nonce, an object's version, a template's
 * content, a balance that covers the fees) and `ons_group_guard` (migration 0010) aborts
 * the whole statement when a guard did not hold, so the group commits completely or not at
 * all: the locked path reads under row locks and its guards always hold; the optimistic
 * path reads from caches and falls back to the locked path when one does not.
 */

export interface GroupWrite {
  newObjects: ObjectState[];
  /** Changed objects, each with the version it had when read (the guard). */
  changedObjects: (ObjectState & { expected_version: number })[];
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

/** A guard of the group statement did not hold: nothing was written. */
export class GroupGuardFailed extends Error {
  constructor(
    message: string,
    /** The balance did not cover the fees (the rest held). */
    readonly balanceShort: boolean,
  ) {
    super(message);
  }
}

const OBJECT_COLUMNS = sql.raw(`id text, organization_id text, template_id text, owner text,
  metadata jsonb, custom jsonb, custom_hash text, latitude float8, longitude float8, geo_hash text,
  ownership_claimed boolean, is_redeemed boolean, is_dropped boolean, is_public boolean,
  nonce integer, version integer, state_hash text, content_hash text, integrity_hash text,
  prev_integrity_hash text, collection_id text, created_at timestamptz, updated_at timestamptz`);

const json = (v: unknown): SQL => sql`${JSON.stringify(v)}::jsonb`;

/**
 * The group's single statement. `templates` are the templates its checks read, as they were
 * then (each must be unchanged: every field the checks use, not only updated_at, since two
 * edits can share a millisecond); `hooks` are data-modifying statements (the hooks' rows), run
 * as CTEs of the same statement. Answers one row: `balance`, what the organization holds
 * after the debit.
 */
export function groupStatement(
  w: GroupWrite,
  c: GroupCharge,
  templates: readonly TemplateInfo[],
  hooks: readonly SQL[],
): SQL {
  const total = c.totalFeeWei.toString();
  const hookCtes = hooks.map((h, i) => sql`, ${sql.raw(`hook_${i}`)} AS (${h})`);
  return sql`
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
      FROM jsonb_to_recordset(${json(w.changedObjects)})
        AS r(${OBJECT_COLUMNS}, expected_version integer)
      WHERE o.id = r.id AND o.version = r.expected_version
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
    ), templates_unchanged AS (
      SELECT count(*) AS n FROM templates t
      JOIN jsonb_to_recordset(${json(templates)}) AS r(id text, organization_id text, name text,
        description text, category text, faces jsonb, actions text[], custom_schema jsonb,
        is_public boolean, updated_at timestamptz)
        ON t.id = r.id AND t.updated_at = r.updated_at AND t.organization_id = r.organization_id
          AND t.name = r.name AND t.description = r.description AND t.category = r.category
          AND t.faces = r.faces AND t.actions = r.actions AND t.is_public = r.is_public
          AND t.custom_schema IS NOT DISTINCT FROM r.custom_schema
    )${sql.join(hookCtes)}, debit AS (
      UPDATE organizations SET balance_wei = balance_wei - ${total}::numeric
      WHERE id = ${c.orgId} AND deleted_at IS NULL AND balance_wei >= ${total}::numeric
      RETURNING balance_wei
    ), ledger AS (
      INSERT INTO ledger_entries (id, organization_id, kind, amount_wei, balance_after_wei, ref_id, created_at)
      SELECT r.id, ${c.orgId}, 'action_fee', r.amount_wei::numeric,
        d.balance_wei + r.after_offset_wei::numeric, r.ref_id, ${c.now.toISOString()}::timestamptz
      FROM debit d, jsonb_to_recordset(${json(c.ledger)}) AS r(id text, amount_wei text,
        after_offset_wei text, ref_id text)
      RETURNING 1
    )
    SELECT ons_group_guard(
        (SELECT count(*) FROM nonces) = ${w.nonces.length}::int,
        (SELECT count(*) FROM changed_objects) = ${w.changedObjects.length}::int,
        (SELECT n FROM templates_unchanged) = ${templates.length}::int,
        (SELECT count(*) FROM debit) = 1
      ) AS ok,
      (SELECT balance_wei::text FROM debit) AS balance`;
}

/** The statement's answer, or GroupGuardFailed when a guard aborted it. */
export async function runGroupStatement(
  run: (query: SQL) => Promise<{ balance: string | null }[]>,
  statement: SQL,
): Promise<bigint> {
  try {
    const rows = await run(statement);
    return BigInt(rows[0]!.balance!);
  } catch (err) {
    const e = err as {
      code?: string;
      message?: string;
      cause?: { code?: string; message?: string };
    };
    // drizzle wraps driver errors; the SQLSTATE is on the error or its cause.
    const code = e.code ?? e.cause?.code;
    if (code === 'ONS01' || code === 'ONS02') {
      throw new GroupGuardFailed(e.cause?.message ?? e.message ?? 'guard', code === 'ONS02');
    }
    throw err;
  }
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
  const { rows } = await tx.execute<RawInputs>(sql`
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
        SELECT ${TEMPLATE_SELECT} FROM templates
        WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(templateIds)}::jsonb))
      ) t) AS templates`);
  return parseGroupInputs(rows[0]!);
}

export interface ReadInputs extends GroupInputs {
  objects: ObjectState[];
}

const OBJECT_SELECT = sql.raw(`id, organization_id, template_id, owner, metadata, custom,
  custom_hash, latitude, longitude, geo_hash, ownership_claimed, is_redeemed, is_dropped,
  is_public, nonce, version, state_hash, content_hash, integrity_hash, prev_integrity_hash,
  collection_id, created_at, updated_at`);

const TEMPLATE_SELECT = sql.raw(`id, organization_id, name, description, category, faces,
  actions, custom_schema, is_public, updated_at`);

/**
 * The optimistic path's read, without locks, of what its cache lacks: the balance, wallets'
 * next nonces, objects, and the templates named or used by those objects. One round trip.
 */
export function readGroupInputsQuery(
  orgId: string,
  walletIds: readonly string[],
  objectIds: readonly string[],
  templateIds: readonly string[],
): SQL {
  const list = (ids: readonly string[]) =>
    sql`(SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`;
  return sql`
    SELECT
      (SELECT balance_wei::text FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL)
        AS balance,
      (SELECT coalesce(json_agg(json_build_object('id', id, 'next_nonce', next_nonce)), '[]')
        FROM wallets WHERE id IN ${list(walletIds)}) AS wallets,
      (SELECT coalesce(json_agg(o), '[]') FROM (
        SELECT ${OBJECT_SELECT} FROM objects WHERE id IN ${list(objectIds)}) o) AS objects,
      (SELECT coalesce(json_agg(t), '[]') FROM (
        SELECT ${TEMPLATE_SELECT} FROM templates
        WHERE id IN ${list(templateIds)}
          OR id IN (SELECT template_id FROM objects WHERE id IN ${list(objectIds)})) t)
        AS templates`;
}

type RawInputs = {
  balance: string | null;
  wallets: { id: string; next_nonce: number | string }[];
  objects?: (Omit<ObjectState, 'created_at' | 'updated_at'> & {
    created_at: string;
    updated_at: string;
  })[];
  templates: (Omit<TemplateInfo, 'updated_at'> & { updated_at: string })[];
};

/** Parses the row of `readGroupInputsQuery` (or of `lockGroupInputs`). */
export function parseGroupInputs(r: RawInputs): ReadInputs {
  return {
    balance: r.balance === null ? null : BigInt(r.balance),
    nonces: new Map(r.wallets.map((w) => [w.id, Number(w.next_nonce)])),
    objects: (r.objects ?? []).map((o) => ({
      ...o,
      created_at: asDate(o.created_at),
      updated_at: asDate(o.updated_at),
    })),
    templates: r.templates.map((t) => ({ ...t, updated_at: asDate(t.updated_at) })),
  };
}
