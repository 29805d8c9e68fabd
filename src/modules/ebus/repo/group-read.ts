import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import type { RowRunner } from '../../../db/prepared.js';
import { asDate } from '../../../db/values.js';
import type { TemplateInfo } from '../../objects/index.js';
import type { ObjectState } from '../../objects/index.js';
import { credentialKey } from '../group-items.js';
import type { SigningCredential } from '../types.js';

/**
 * What a group's checks read before they run (docs/ebus.md, "Inside"): the paying organizations'
 * balances, the signer wallets' next nonces, the objects and the templates. The locked path
 * reads it under row locks (`lockGroupInputs`, then `lockObjects` in lookups.ts); the
 * optimistic path reads only what its cache lacks, without locks (`readGroupInputsQuery`).
 */
export interface GroupInputs {
  /** Balance of each paying organization that exists and is not closed. */
  balances: Map<string, bigint>;
  nonces: Map<string, number>;
  objects: ObjectState[];
  templates: TemplateInfo[];
}

const OBJECT_SELECT = sql.raw(`id, organization_id, template_id, owner, metadata, custom,
  custom_hash, latitude, longitude, geo_hash, ownership_claimed, is_redeemed, is_dropped,
  is_public, nonce, version, state_hash, content_hash, integrity_hash, prev_integrity_hash,
  collection_id, created_at, updated_at`);

const TEMPLATE_SELECT = sql.raw(`id, organization_id, name, description, category, faces,
  actions, custom_schema, is_public, version, updated_at`);

const list = (ids: readonly string[]) =>
  sql`(SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`;

const balancesOf = (orgIds: readonly string[]) => sql`
  (SELECT coalesce(json_agg(json_build_object('id', id, 'balance', balance_wei::text)), '[]')
    FROM organizations WHERE id IN ${list(orgIds)} AND deleted_at IS NULL) AS balances`;

type RawInputs = {
  balances: { id: string; balance: string }[];
  wallets: { id: string; next_nonce: number | string }[];
  objects?: (Omit<ObjectState, 'created_at' | 'updated_at'> & {
    created_at: string;
    updated_at: string;
  })[];
  templates: (Omit<TemplateInfo, 'updated_at'> & { updated_at: string })[];
};

function parseGroupInputs(r: RawInputs): GroupInputs {
  return {
    balances: new Map(r.balances.map((b) => [b.id, BigInt(b.balance)])),
    nonces: new Map(r.wallets.map((w) => [w.id, Number(w.next_nonce)])),
    objects: (r.objects ?? []).map((o) => ({
      ...o,
      created_at: asDate(o.created_at),
      updated_at: asDate(o.updated_at),
    })),
    templates: r.templates.map((t) => ({ ...t, updated_at: asDate(t.updated_at) })),
  };
}

/**
 * The locked path's first read, one round trip: locks the signer wallets (in id order) and
 * answers their next nonces, the paying organization's balance (not locked: the debit
 * re-checks it) and the templates already known to be needed (those of mints), share-locked
 * until the transaction ends: a template switch (templates/service.ts) locks its template
 * first, so it waits for this group to commit and then copies the flag to its new objects,
 * or this read waits for the switch and sees the new flag. A mint of another organization's
 * template is only applied here, and the template guard can then never fail on a mint's
 * template. The optimistic path takes no such lock: its statement is fenced
 * (repo/group-write.ts, `fenced`).
 */
export async function lockGroupInputs(
  tx: Executor,
  orgId: string,
  walletIds: readonly string[],
  templateIds: readonly string[],
): Promise<GroupInputs> {
  const { rows } = await tx.execute<RawInputs>(sql`
    WITH w AS (
      SELECT id, next_nonce FROM wallets WHERE id IN ${list(walletIds)} ORDER BY id FOR UPDATE
    ), t AS (
      SELECT ${TEMPLATE_SELECT} FROM templates WHERE id IN ${list(templateIds)}
      ORDER BY id FOR SHARE
    )
    SELECT ${balancesOf([orgId])},
      (SELECT coalesce(json_agg(json_build_object('id', id, 'next_nonce', next_nonce)), '[]')
        FROM w) AS wallets,
      (SELECT coalesce(json_agg(t), '[]') FROM t) AS templates`);
  return parseGroupInputs(rows[0]!);
}

/**
 * The optimistic path's read, without locks, of what its cache lacks: balances, wallets'
 * next nonces, objects, and the templates named or used by those objects. One round trip,
 * as a named prepared statement (`run`).
 */
export async function readGroupInputs(
  run: RowRunner,
  ids: { orgs: string[]; wallets: string[]; objects: string[]; templates: string[] },
): Promise<GroupInputs> {
  const rows = await run<RawInputs>(sql`
    SELECT ${balancesOf(ids.orgs)},
      (SELECT coalesce(json_agg(json_build_object('id', id, 'next_nonce', next_nonce)), '[]')
        FROM wallets WHERE id IN ${list(ids.wallets)}) AS wallets,
      (SELECT coalesce(json_agg(o), '[]') FROM (
        SELECT ${OBJECT_SELECT} FROM objects WHERE id IN ${list(ids.objects)}) o) AS objects,
      (SELECT coalesce(json_agg(t), '[]') FROM (
        SELECT ${TEMPLATE_SELECT} FROM templates
        WHERE id IN ${list(ids.templates)}
          OR id IN (SELECT template_id FROM objects WHERE id IN ${list(ids.objects)})) t)
        AS templates`);
  return parseGroupInputs(rows[0]!);
}

/**
 * Which of these signing credentials are still live and their wallet's, as
 * `credentialKey`s. The locked path calls it once the wallets are locked (a removal locks
 * its wallet too); no credentials, no query.
 */
export async function liveCredentials(
  tx: Executor,
  creds: readonly (SigningCredential & { walletId: string })[],
): Promise<Set<string>> {
  if (creds.length === 0) return new Set();
  const pairs = creds.map((c) => ({
    wallet_id: c.walletId,
    type: c.type,
    external_id: c.externalId,
  }));
  const { rows } = await tx.execute<{
    wallet_id: string;
    type: 'eoa' | 'passkey';
    external_id: string;
  }>(sql`
    SELECT c.wallet_id, c.type, c.external_id FROM credentials c
    JOIN jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb)
      AS r(wallet_id text, type text, external_id text)
      ON c.type = r.type AND c.external_id = r.external_id AND c.wallet_id = r.wallet_id
    WHERE c.removed_at IS NULL`);
  return new Set(
    rows.map((r) => credentialKey(r.wallet_id, { type: r.type, externalId: r.external_id })),
  );
}
