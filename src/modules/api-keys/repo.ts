import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import {
  and,
  byCreation,
  keysetCondition,
  orderBy,
  type ListSpec,
  type ParsedList,
} from '../../lib/list.js';
import { MAX_LIVE_KEYS } from './schema.js';
import type { PermissionsGrant } from '../../lib/grants.js';

/**
 * drizzle's node-postgres driver hands timestamptz back as PostgreSQL text
 * (`2026-11-21 10:00:00.123+00`) whatever the pool's type parsers say; read it as a Date.
 */
function asDate(value: Date | string): Date {
  if (value instanceof Date) return value;
  return new Date(value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
}

function asDateOrNull(value: Date | string | null): Date | null {
  return value === null ? null : asDate(value);
}

/** A row as the driver hands it over: timestamps possibly still text. */
type Raw<T> = {
  [K in keyof T]: T[K] extends Date
    ? Date | string
    : T[K] extends Date | null
      ? Date | string | null
      : T[K];
};

export type ApiKeyRow = {
  id: string;
  name: string;
  permissions: string[];
  expires_at: Date;
  last_used_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

/** What verification needs: the key and whether its creator still belongs to its organization. */
export type KeyForVerification = {
  id: string;
  organization_id: string;
  created_by: string;
  permissions: string[];
  expires_at: Date;
  deleted_at: Date | null;
  /** The creator's role in the key's organization now; null when no longer an active member. */
  creator_role: string | null;
};

export interface NewApiKey {
  id: string;
  orgId: string;
  createdBy: string;
  name: string;
  secretHash: string;
  /** The key's permissions, as `requireGrant` (src/lib/grants.ts) let them be given. */
  grant: PermissionsGrant;
  expiresAt: Date;
  now: Date;
}

/**
 * Holds the organization's row until the transaction ends, so the count-then-insert of
 * concurrent creates in one organization runs one at a time. False when it does not exist.
 */
export async function lockOrganization(exec: Executor, orgId: string): Promise<boolean> {
  const { rows } = await exec.execute<{ id: string }>(
    sql`SELECT id FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL FOR UPDATE`,
  );
  return rows.length > 0;
}

/** Keys that still work: neither deleted nor expired at `now`. */
export async function countLive(exec: Executor, orgId: string, now: Date): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`
    SELECT count(*)::int AS n FROM api_keys
    WHERE organization_id = ${orgId} AND deleted_at IS NULL AND expires_at > ${now}`);
  return rows[0]?.n ?? 0;
}

export async function insertKey(exec: Executor, k: NewApiKey): Promise<void> {
  await exec.execute(sql`INSERT INTO api_keys
    (id, organization_id, created_by, name, secret_hash, permissions, expires_at,
     created_at, updated_at)
    VALUES (${k.id}, ${k.orgId}, ${k.createdBy}, ${k.name}, ${k.secretHash},
      ${`{${k.grant.permissions.join(',')}}`}::text[], ${k.expiresAt}, ${k.now}, ${k.now})`);
}

/** A page holds every live key an organization may have; larger limits clamp to it. */
export const API_KEY_LIST: ListSpec = byCreation({
  defaultLimit: MAX_LIVE_KEYS,
  maxLimit: MAX_LIVE_KEYS,
  clampLimit: true,
});

/** Undeleted keys of the organization (expired ones included), one page plus one row. */
export async function listKeys(
  exec: Executor,
  orgId: string,
  page: ParsedList,
  name: string | undefined,
): Promise<ApiKeyRow[]> {
  const where = and([
    sql`organization_id = ${orgId}`,
    sql`deleted_at IS NULL`,
    name !== undefined ? sql`name = ${name}` : undefined,
    keysetCondition(page),
  ]);
  const { rows } = await exec.execute<Raw<ApiKeyRow>>(sql`
    SELECT id, name, permissions, expires_at, last_used_at, created_at, updated_at
    FROM api_keys WHERE ${where} ${orderBy(page)} LIMIT ${page.limit + 1}`);
  return rows.map((r) => ({
    ...r,
    expires_at: asDate(r.expires_at),
    last_used_at: asDateOrNull(r.last_used_at),
    created_at: asDate(r.created_at),
    updated_at: asDate(r.updated_at),
  }));
}

/** Marks the key deleted; false when the organization holds no such undeleted key. */
export async function deleteKey(
  exec: Executor,
  orgId: string,
  id: string,
  now: Date,
): Promise<boolean> {
  const { rows } = await exec.execute<{ id: string }>(sql`
    UPDATE api_keys SET deleted_at = ${now}, updated_at = ${now}
    WHERE id = ${id} AND organization_id = ${orgId} AND deleted_at IS NULL
    RETURNING id`);
  return rows.length > 0;
}

/**
 * The one lookup not scoped by organization: the secret's hash is what identifies the
 * organization. Deleted keys are answered too, so the caller can say why it refuses.
 */
export async function findForVerification(
  exec: Executor,
  secretHash: string,
): Promise<KeyForVerification | null> {
  const { rows } = await exec.execute<Raw<KeyForVerification>>(sql`
    SELECT k.id, k.organization_id, k.created_by, k.permissions, k.expires_at, k.deleted_at,
      (SELECT m.role FROM members m JOIN organizations o ON o.id = m.organization_id
        WHERE m.organization_id = k.organization_id AND m.wallet_id = k.created_by
          AND m.status = 'active' AND o.deleted_at IS NULL) AS creator_role
    FROM api_keys k WHERE k.secret_hash = ${secretHash}`);
  const row = rows[0];
  if (!row) return null;
  return { ...row, expires_at: asDate(row.expires_at), deleted_at: asDateOrNull(row.deleted_at) };
}

/**
 * Applies a batch of last-use times. GREATEST (which ignores NULL) keeps the column from
 * moving backwards when batches from several instances arrive out of order.
 */
export async function recordLastUsed(
  exec: Executor,
  uses: { id: string; at: Date }[],
): Promise<void> {
  if (uses.length === 0) return;
  const payload = JSON.stringify(uses.map((u) => ({ id: u.id, t: u.at.toISOString() })));
  await exec.execute(sql`
    UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, v.t)
    FROM jsonb_to_recordset(${payload}::jsonb) AS v(id text, t timestamptz)
    WHERE k.id = v.id`);
}

/**
 * A key of `orgId` as a granter now (an invitation it made is re-checked on confirmation):
 * its listed permissions and its creator's active role, or null when it is deleted, expired
 * or unknown.
 */
export async function findLiveKeyInOrg(
  exec: Executor,
  orgId: string,
  keyId: string,
  now: Date,
): Promise<{ permissions: string[]; creator_role: string | null } | null> {
  const { rows } = await exec.execute<{ permissions: string[]; creator_role: string | null }>(sql`
    SELECT k.permissions,
      (SELECT m.role FROM members m JOIN organizations o ON o.id = m.organization_id
        WHERE m.organization_id = k.organization_id AND m.wallet_id = k.created_by
          AND m.status = 'active' AND o.deleted_at IS NULL) AS creator_role
    FROM api_keys k
    WHERE k.organization_id = ${orgId} AND k.id = ${keyId} AND k.deleted_at IS NULL
      AND k.expires_at > ${now}`);
  return rows[0] ?? null;
}

/**
 * Revokes (deletes) every undeleted key the wallet created: in any organization (the hand-over
 * of a wallet to its address's owner: what the wallet set up goes, wherever), or in `orgId`
 * only (its member removed there). Answers their ids.
 */
export async function revokeKeysCreatedBy(
  exec: Executor,
  walletId: string,
  now: Date,
  orgId: string | null = null,
): Promise<string[]> {
  const { rows } = await exec.execute<{ id: string }>(sql`
    UPDATE api_keys SET deleted_at = ${now}, updated_at = ${now}
    WHERE created_by = ${walletId} AND deleted_at IS NULL
      ${orgId === null ? sql`` : sql`AND organization_id = ${orgId}`}
    RETURNING id`);
  return rows.map((r) => r.id);
}
