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

/**
 * Soft delete: the row stays (ledger and deposits refer to it). Its memberships and the
 * wallets' default context are ended by their owners (OrganizationService.remove).
 */
export async function softDeleteOrganization(exec: Executor, orgId: string, now: Date) {
  await exec.execute(sql`UPDATE organizations SET deleted_at = ${now}, updated_at = ${now}
    WHERE id = ${orgId}`);
}

/**
 * The group statement's (ebus/repo/group-write.ts) debit of each paying organization's fees:
 * it reads the statement's `fees` and `payers` CTEs and answers `(id, balance_wei,
 * template_switches)` for the debited, live organizations that could pay, whose spend
 * policies are still the version the group checked (`fees.pv`; null: none checked).
 */
export function debitFees(): SQL {
  return sql`UPDATE organizations o SET balance_wei = o.balance_wei - f.total
      FROM fees f
      WHERE o.id = f.id AND o.id IN (SELECT id FROM payers) AND o.deleted_at IS NULL
        AND o.balance_wei >= f.total AND (f.pv IS NULL OR o.policy_version = f.pv)
      RETURNING o.id, o.balance_wei, o.template_switches`;
}

/**
 * Marks a switch of one of the organization's templates' visibility on its row
 * (`template_switches`, migration 0024), waiting for the event bus's groups that hold the
 * row (each locks it last, to debit the fees, and keeps it until it commits). A group
 * statement that read the template before this commits and locks the row after it sees the
 * count moved and fails its guard (ebus/repo/group-write.ts, `fenced`).
 */
export async function markTemplateSwitch(exec: Executor, orgId: string): Promise<void> {
  await exec.execute(sql`UPDATE organizations SET template_switches = template_switches + 1
    WHERE id = ${orgId}`);
}

/**
 * Adds `amountWei` (signed) to the balance unless it would go below zero, in one statement
 * (`recordLedgerEntry` says why). The balance after, or null when nothing changed.
 */
export async function addToBalance(
  exec: Executor,
  orgId: string,
  amountWei: bigint,
): Promise<bigint | null> {
  const { rows } = await exec.execute<{ balance_wei: string }>(sql`
    UPDATE organizations SET balance_wei = balance_wei + ${amountWei.toString()}::numeric
    WHERE id = ${orgId} AND balance_wei + ${amountWei.toString()}::numeric >= 0
    RETURNING balance_wei`);
  return rows[0] ? BigInt(rows[0].balance_wei) : null;
}

// Columns other modules keep on an organization's row (this module writes them for them):
// the low-balance threshold and its notices (balance), the spend policies' version (policies).

/** Sets (or with null removes) the threshold; a new threshold is a new crossing to tell. */
export async function setLowBalance(
  exec: Executor,
  orgId: string,
  wei: bigint | null,
): Promise<boolean> {
  const { rows } = await exec.execute(sql`UPDATE organizations
    SET low_balance_wei = ${wei === null ? null : wei.toString()}::numeric,
      low_balance_armed = true
    WHERE id = ${orgId} AND deleted_at IS NULL RETURNING id`);
  return rows.length > 0;
}

/** An organization whose balance fell below its threshold, and who to tell. */
export type LowBalanceNotice = {
  id: string;
  name: string;
  balance_wei: string;
  low_balance_wei: string;
  recipients: string[];
};

/**
 * One pass of the low-balance notifier, in one statement: arms again every organization at
 * or above its threshold, then claims (disarms, stamps) those below it that are armed and
 * were not told in the last 24 hours, skipping rows another process holds. Answers the
 * claimed ones with the confirmed emails of their active owners and admins (an address an
 * account only names could be anyone's: it gets no mail). An organization below its
 * threshold but told less than 24 hours ago stays armed and is told once the day has passed.
 */
export async function claimLowBalances(
  exec: Executor,
  now: Date,
  limit = 100,
): Promise<LowBalanceNotice[]> {
  await exec.execute(sql`UPDATE organizations SET low_balance_armed = true
    WHERE low_balance_wei IS NOT NULL AND deleted_at IS NULL AND NOT low_balance_armed
      AND balance_wei >= low_balance_wei`);
  const since = new Date(now.getTime() - 86_400_000);
  const { rows } = await exec.execute<LowBalanceNotice>(sql`
    WITH due AS (
      SELECT id FROM organizations
      WHERE low_balance_wei IS NOT NULL AND deleted_at IS NULL AND low_balance_armed
        AND balance_wei < low_balance_wei
        AND (low_balance_notified_at IS NULL OR low_balance_notified_at <= ${since})
      ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE organizations o SET low_balance_armed = false, low_balance_notified_at = ${now}
      FROM due WHERE o.id = due.id
      RETURNING o.id, o.name, o.balance_wei::text AS balance_wei,
        o.low_balance_wei::text AS low_balance_wei
    )
    SELECT c.*, coalesce((SELECT array_agg(DISTINCT w.email)
      FROM members m JOIN wallets w ON w.id = m.wallet_id
      WHERE m.organization_id = c.id AND m.status = 'active' AND m.role IN ('owner', 'admin')
        AND w.email IS NOT NULL AND w.email_confirmed_at IS NOT NULL), '{}') AS recipients
    FROM claimed c`);
  return rows;
}

/**
 * Takes the organization's row lock and moves its policy version (policies/service.ts): every
 * change of a policy set is ordered with the event bus's groups (which take the same row to
 * debit) and makes the statements of groups checked against the former set fail their guard.
 * Answers false when the organization is gone.
 */
export async function bumpPolicyVersion(exec: Executor, orgId: string): Promise<boolean> {
  const { rows } = await exec.execute(sql`UPDATE organizations
    SET policy_version = policy_version + 1
    WHERE id = ${orgId} AND deleted_at IS NULL RETURNING id`);
  return rows.length > 0;
}

/** Serialises the organizations one wallet creates (their count, then their rows). */
export async function lockFoundingsOf(exec: Executor, walletId: string): Promise<void> {
  await exec.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`orgs-of:${walletId}`}))`);
}

/** Live organizations in which the wallet is an active owner. */
export async function countOwnedBy(exec: Executor, walletId: string): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`SELECT count(*)::int AS n
    FROM members m JOIN organizations o ON o.id = m.organization_id
    WHERE m.wallet_id = ${walletId} AND m.role = 'owner' AND m.status = 'active'
      AND o.deleted_at IS NULL`);
  return rows[0]?.n ?? 0;
}
