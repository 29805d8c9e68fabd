import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { DbTime } from '../../db/values.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  type ListSpec,
  type ParsedList,
} from '../../lib/list.js';

export type OrganizationRow = {
  id: string;
  name: string;
  description: string;
  settings: { allow_self_signup?: boolean };
  role: string | null;
  balance_wei: string;
  created_at: DbTime;
  updated_at: DbTime;
};

export const ORGANIZATION_LIST: ListSpec = {
  sortable: {
    when_created: { column: sql`o.created_at`, type: 'timestamp' },
    when_modified: { column: sql`o.updated_at`, type: 'timestamp' },
    name: { column: sql`o.name`, type: 'text' },
  },
  defaultSort: 'when_created',
  idColumn: sql`o.id`,
};

export interface OrganizationFilters {
  id?: string;
  name?: string;
  autocomplete?: string;
  roleName?: string;
  /** Only for an API key: the one organization it belongs to. */
  onlyOrgId?: string;
  dates: Record<string, unknown>;
}

/** `ILIKE '%term%'` (served by the trigram index on name), wildcards of the term escaped. */
function containsMatch(column: SQL, term: string): SQL {
  const escaped = term.replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql`${column} ILIKE ${'%' + escaped + '%'}`;
}

/** The live organizations `walletId` is an active member of, with its role there. */
export async function listForWallet(
  exec: Executor,
  walletId: string,
  f: OrganizationFilters,
  p: ParsedList,
): Promise<OrganizationRow[]> {
  const where = and([
    sql`m.wallet_id = ${walletId}`,
    sql`m.status = 'active'`,
    sql`o.deleted_at IS NULL`,
    f.onlyOrgId !== undefined ? sql`o.id = ${f.onlyOrgId}` : undefined,
    f.id !== undefined ? sql`o.id = ${f.id}` : undefined,
    f.name !== undefined ? sql`lower(o.name) = lower(${f.name})` : undefined,
    f.autocomplete ? containsMatch(sql`o.name`, f.autocomplete) : undefined,
    f.roleName !== undefined ? sql`m.role = ${f.roleName}` : undefined,
    ...dateFilters(f.dates, sql`o.created_at`),
    keysetCondition(p),
  ]);
  const { rows } = await exec.execute<OrganizationRow>(sql`
    SELECT o.id, o.name, o.description, o.settings, m.role, o.balance_wei, o.created_at,
           o.updated_at
    FROM organizations o JOIN members m ON m.organization_id = o.id
    WHERE ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows;
}

/** One live organization with the role of `walletId` in it (null when not a member). */
export async function findOrganization(
  exec: Executor,
  orgId: string,
  walletId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<OrganizationRow | null> {
  const { rows } = await exec.execute<OrganizationRow>(sql`
    SELECT o.id, o.name, o.description, o.settings, o.balance_wei, o.created_at, o.updated_at,
      (SELECT m.role FROM members m WHERE m.organization_id = o.id AND m.wallet_id = ${walletId}
         AND m.status = 'active') AS role
    FROM organizations o WHERE o.id = ${orgId} AND o.deleted_at IS NULL
    ${opts.forUpdate ? sql`FOR UPDATE OF o` : sql``}`);
  return rows[0] ?? null;
}

export async function liveOrganizationExists(exec: Executor, orgId: string): Promise<boolean> {
  const { rows } = await exec.execute<{ id: string }>(
    sql`SELECT id FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL`,
  );
  return rows.length > 0;
}

/** The wallet's role as an active member of the live organization, or null. */
export async function activeRoleIn(
  exec: Executor,
  orgId: string,
  walletId: string,
): Promise<string | null> {
  const { rows } = await exec.execute<{ role: string }>(sql`
    SELECT m.role FROM members m JOIN organizations o ON o.id = m.organization_id
    WHERE m.organization_id = ${orgId} AND m.wallet_id = ${walletId}
      AND m.status = 'active' AND o.deleted_at IS NULL`);
  return rows[0]?.role ?? null;
}

export async function insertOrganization(
  exec: Executor,
  org: { id: string; name: string; description: string; allowSelfSignup: boolean; now: Date },
): Promise<void> {
  await exec.execute(sql`INSERT INTO organizations
    (id, name, description, settings, balance_wei, created_at, updated_at)
    VALUES (${org.id}, ${org.name}, ${org.description},
      ${JSON.stringify({ allow_self_signup: org.allowSelfSignup })}::jsonb, 0, ${org.now},
      ${org.now})`);
}

/** The wallet's email and name, copied onto its membership rows. */
export async function findWallet(
  exec: Executor,
  walletId: string,
): Promise<{ email: string | null; name: string | null } | null> {
  const { rows } = await exec.execute<{ email: string | null; name: string | null }>(
    sql`SELECT email, name FROM wallets WHERE id = ${walletId}`,
  );
  return rows[0] ?? null;
}

/** Makes `orgId` the wallet's default context when it has none yet (a standalone account). */
export async function setDefaultOrgIfNone(exec: Executor, walletId: string, orgId: string) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = ${orgId}
    WHERE id = ${walletId} AND default_org_id IS NULL`);
}

export async function setDefaultOrg(exec: Executor, walletId: string, orgId: string, now: Date) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = ${orgId}, updated_at = ${now}
    WHERE id = ${walletId}`);
}

export async function updateOrganization(
  exec: Executor,
  orgId: string,
  patch: { name?: string; description?: string; settings?: Record<string, unknown> },
  now: Date,
): Promise<void> {
  const sets: SQL[] = [sql`updated_at = ${now}`];
  if (patch.name !== undefined) sets.push(sql`name = ${patch.name}`);
  if (patch.description !== undefined) sets.push(sql`description = ${patch.description}`);
  if (patch.settings !== undefined) {
    sets.push(sql`settings = settings || ${JSON.stringify(patch.settings)}::jsonb`);
  }
  await exec.execute(sql`UPDATE organizations SET ${sql.join(sets, sql`, `)}
    WHERE id = ${orgId} AND deleted_at IS NULL`);
}

/** Active members other than `walletId`. */
export async function countOtherActiveMembers(
  exec: Executor,
  orgId: string,
  walletId: string,
): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM members
    WHERE organization_id = ${orgId} AND status = 'active'
      AND wallet_id IS DISTINCT FROM ${walletId}`);
  return rows[0]?.n ?? 0;
}

/** Soft delete: the row stays (ledger and deposits refer to it); memberships end. */
export async function softDeleteOrganization(exec: Executor, orgId: string, now: Date) {
  await exec.execute(sql`UPDATE organizations SET deleted_at = ${now}, updated_at = ${now}
    WHERE id = ${orgId}`);
  await exec.execute(sql`UPDATE members SET status = 'removed', invite_token_hash = NULL,
      updated_at = ${now}
    WHERE organization_id = ${orgId} AND status <> 'removed'`);
  await exec.execute(sql`UPDATE wallets SET default_org_id = NULL, updated_at = ${now}
    WHERE default_org_id = ${orgId}`);
}
