import { sql } from 'drizzle-orm';
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
import type { RoleGrant } from '../../lib/grants.js';

export type MemberRow = {
  id: string;
  organization_id: string;
  wallet_id: string | null;
  email: string | null;
  name: string | null;
  role: string;
  status: string;
  invite_token_hash: string | null;
  invite_expires_at: DbTime | null;
  invited_by_wallet_id: string | null;
  invited_by_api_key_id: string | null;
  created_at: DbTime;
  updated_at: DbTime;
};

// A member's email is the one it was invited with until a wallet holds the membership, then
// that wallet's email once it is confirmed: an address nobody proved is not shown as theirs.
const COLUMNS = sql`m.id, m.organization_id, m.wallet_id,
  CASE WHEN m.wallet_id IS NULL THEN m.email
    WHEN w.email_confirmed_at IS NOT NULL THEN w.email END AS email,
  COALESCE(m.name, w.name) AS name, m.role, m.status, m.invite_token_hash,
  m.invite_expires_at, m.invited_by_wallet_id, m.invited_by_api_key_id, m.created_at,
  m.updated_at`;

export const MEMBER_LIST: ListSpec = {
  sortable: {
    when_created: { column: sql`m.created_at`, type: 'timestamp' },
    when_modified: { column: sql`m.updated_at`, type: 'timestamp' },
  },
  defaultSort: 'when_created',
  idColumn: sql`m.id`,
};

export interface NewMember {
  id: string;
  orgId: string;
  walletId: string | null;
  email: string | null;
  name: string | null;
  /** The role, as `requireGrant` (src/lib/grants.ts) let it be given. */
  grant: RoleGrant;
  status: 'invited' | 'active';
  inviteTokenHash?: string;
  inviteExpiresAt?: Date;
  /** Who invited: a person, or an API key (its id; `invitedByWallet` is then its creator). */
  invitedByWallet?: string;
  invitedByApiKey?: string | null;
  now: Date;
}

export async function insertMember(exec: Executor, m: NewMember): Promise<void> {
  await exec.execute(sql`INSERT INTO members
    (id, organization_id, wallet_id, email, name, role, status, invite_token_hash,
     invite_expires_at, invited_by_wallet_id, invited_by_api_key_id, created_at, updated_at)
    VALUES (${m.id}, ${m.orgId}, ${m.walletId}, ${m.email}, ${m.name}, ${m.grant.role},
      ${m.status}, ${m.inviteTokenHash ?? null}, ${m.inviteExpiresAt ?? null},
      ${m.invitedByWallet ?? null}, ${m.invitedByApiKey ?? null}, ${m.now}, ${m.now})`);
}

export async function listMembers(
  exec: Executor,
  orgId: string,
  f: { id?: string; name?: string; status?: string; dates: Record<string, unknown> },
  p: ParsedList,
): Promise<MemberRow[]> {
  const where = and([
    sql`m.organization_id = ${orgId}`,
    f.status !== undefined ? sql`m.status = ${f.status}` : sql`m.status <> 'removed'`,
    f.id !== undefined ? sql`m.id = ${f.id}` : undefined,
    f.name !== undefined ? sql`lower(COALESCE(m.name, w.name)) = lower(${f.name})` : undefined,
    ...dateFilters(f.dates, sql`m.created_at`),
    keysetCondition(p),
  ]);
  const { rows } = await exec.execute<MemberRow>(sql`SELECT ${COLUMNS}
    FROM members m LEFT JOIN wallets w ON w.id = m.wallet_id
    WHERE ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows;
}

/** One membership row of `orgId`, whatever its status; `forUpdate` locks it. */
export async function findMember(
  exec: Executor,
  orgId: string,
  memberId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<MemberRow | null> {
  const { rows } = await exec.execute<MemberRow>(sql`SELECT ${COLUMNS}
    FROM members m LEFT JOIN wallets w ON w.id = m.wallet_id
    WHERE m.organization_id = ${orgId} AND m.id = ${memberId}
    ${opts.forUpdate ? sql`FOR UPDATE OF m` : sql``}`);
  return rows[0] ?? null;
}

/**
 * Locks the active owners of `orgId` and answers how many there are. Every change that
 * could take away an owner takes these locks first, so two concurrent demotions cannot
 * both see "another owner remains".
 */
export async function lockActiveOwners(exec: Executor, orgId: string): Promise<number> {
  // An accepted invitation whose address has no wallet yet is no owner anyone can act as.
  const { rows } = await exec.execute<{ id: string }>(sql`SELECT id FROM members
    WHERE organization_id = ${orgId} AND role = 'owner' AND status = 'active'
      AND wallet_id IS NOT NULL
    ORDER BY id FOR UPDATE`);
  return rows.length;
}

export async function lockInvitationEmail(exec: Executor, orgId: string, email: string) {
  await exec.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`invite:${orgId}:${email}`}))`);
}

/**
 * A live membership (invited or active) of that email: an invitation not yet bound to a
 * wallet, or a wallet that confirmed the email. A wallet that only names it (unconfirmed)
 * does not count, so it cannot stand in the way of inviting the address's owner.
 */
export async function findLiveByEmail(
  exec: Executor,
  orgId: string,
  email: string,
): Promise<{ id: string } | null> {
  const { rows } = await exec.execute<{ id: string }>(sql`SELECT m.id FROM members m
    LEFT JOIN wallets w ON w.id = m.wallet_id
    WHERE m.organization_id = ${orgId} AND m.status <> 'removed'
      AND ((m.wallet_id IS NULL AND lower(m.email) = ${email})
        OR (w.email = ${email} AND w.email_confirmed_at IS NOT NULL))
    LIMIT 1`);
  return rows[0] ?? null;
}

/** The wallet that confirmed this email (invitations bind to nobody else). */
export async function findHolderOfEmail(
  exec: Executor,
  email: string,
): Promise<{ id: string; name: string | null } | null> {
  const { rows } = await exec.execute<{ id: string; name: string | null }>(
    sql`SELECT id, name FROM wallets WHERE email = ${email} AND email_confirmed_at IS NOT NULL`,
  );
  return rows[0] ?? null;
}

/** The wallet's active role in `orgId` (a live organization), or null. */
export async function activeRoleOf(
  exec: Executor,
  orgId: string,
  walletId: string,
): Promise<string | null> {
  const { rows } = await exec.execute<{ role: string }>(sql`SELECT m.role FROM members m
    JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL
    WHERE m.organization_id = ${orgId} AND m.wallet_id = ${walletId} AND m.status = 'active'`);
  return rows[0]?.role ?? null;
}

export async function walletIsActiveMember(
  exec: Executor,
  orgId: string,
  walletId: string,
): Promise<boolean> {
  const { rows } = await exec.execute<{ id: string }>(sql`SELECT id FROM members
    WHERE organization_id = ${orgId} AND wallet_id = ${walletId} AND status = 'active'`);
  return rows.length > 0;
}

/**
 * Sets a member's role. `grantedBy`, for an invitation: who set the role, recorded as its
 * inviter, since confirming checks the role against the inviter as it is then.
 */
export async function setRole(
  exec: Executor,
  memberId: string,
  grant: RoleGrant,
  now: Date,
  grantedBy: { walletId: string; apiKeyId: string | null } | null = null,
) {
  const inviter = grantedBy
    ? sql`, invited_by_wallet_id = ${grantedBy.walletId},
        invited_by_api_key_id = ${grantedBy.apiKeyId}`
    : sql``;
  await exec.execute(sql`UPDATE members SET role = ${grant.role}, updated_at = ${now}${inviter}
    WHERE id = ${memberId}`);
}

export async function markRemoved(exec: Executor, memberId: string, now: Date) {
  await exec.execute(sql`UPDATE members SET status = 'removed', invite_token_hash = NULL,
      invite_expires_at = NULL, updated_at = ${now}
    WHERE id = ${memberId}`);
}

/** Spends the invitation: active, bound to the wallet of that email when there is one. */
export async function activateInvited(
  exec: Executor,
  memberId: string,
  wallet: { id: string; name: string | null } | null,
  now: Date,
): Promise<void> {
  await exec.execute(sql`UPDATE members SET status = 'active', invite_token_hash = NULL,
      invite_expires_at = NULL, wallet_id = ${wallet?.id ?? null},
      name = COALESCE(name, ${wallet?.name ?? null}), updated_at = ${now}
    WHERE id = ${memberId} AND status = 'invited'`);
}

/**
 * The organizations `walletId` founded: those whose first membership, the owner row written
 * with the organization, is the wallet's (whatever it became since).
 */
export async function organizationsFoundedBy(exec: Executor, walletId: string): Promise<string[]> {
  const { rows } = await exec.execute<{ organization_id: string }>(sql`
    SELECT m.organization_id FROM members m
    WHERE m.wallet_id = ${walletId}
      AND NOT EXISTS (SELECT 1 FROM members f WHERE f.organization_id = m.organization_id
        AND (f.created_at, f.id) < (m.created_at, m.id))`);
  return rows.map((r) => r.organization_id);
}

/** Ends every live membership of the wallet; answers the organizations it was in. */
export async function endMembershipsOfWallet(
  exec: Executor,
  walletId: string,
  now: Date,
): Promise<string[]> {
  const { rows } = await exec.execute<{ organization_id: string }>(sql`UPDATE members
    SET status = 'removed', invite_token_hash = NULL, invite_expires_at = NULL,
      updated_at = ${now}
    WHERE wallet_id = ${walletId} AND status <> 'removed' RETURNING organization_id`);
  return rows.map((r) => r.organization_id);
}

/**
 * Withdraws every invitation of these organizations that no wallet holds yet: those not
 * opened, and those opened but waiting for a wallet to prove their email. Answers how many.
 */
export async function withdrawInvitationsIn(
  exec: Executor,
  orgIds: readonly string[],
  now: Date,
): Promise<number> {
  if (orgIds.length === 0) return 0;
  const { rows } = await exec.execute<{ id: string }>(sql`UPDATE members
    SET status = 'removed', invite_token_hash = NULL, invite_expires_at = NULL,
      updated_at = ${now}
    WHERE organization_id = ANY(${`{${orgIds.join(',')}}`}::text[])
      AND wallet_id IS NULL AND status <> 'removed' RETURNING id`);
  return rows.length;
}

/**
 * Accepted invitations sent to this email that no wallet had confirmed now belong to the wallet
 * that just confirmed it (never to one that only names it). An organization the wallet is
 * already a member of keeps that membership; the invitation stays unbound there.
 */
export async function bindInvitations(exec: Executor, walletId: string, email: string, now: Date) {
  await exec.execute(sql`UPDATE members m SET wallet_id = ${walletId}, updated_at = ${now}
    WHERE lower(m.email) = ${email} AND m.wallet_id IS NULL AND m.status = 'active'
      AND NOT EXISTS (SELECT 1 FROM members x WHERE x.organization_id = m.organization_id
        AND x.wallet_id = ${walletId} AND x.status <> 'removed')`);
}

export type OrganizationEntryRow = { id: string; name: string; allow_self_signup: boolean };

/** A live organization and whether it lets anyone sign up (a wallet entering it). */
export async function findOrganizationEntry(
  exec: Executor,
  orgId: string,
): Promise<OrganizationEntryRow | null> {
  const { rows } = await exec.execute<OrganizationEntryRow>(sql`SELECT id, name,
      COALESCE((settings->>'allow_self_signup')::boolean, false) AS allow_self_signup
    FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL`);
  return rows[0] ?? null;
}

/** The wallet's active role in `orgId` as sign-in reads it, or null. */
export async function activeRole(exec: Executor, orgId: string, walletId: string) {
  const { rows } = await exec.execute<{ role: string }>(sql`SELECT role FROM members
    WHERE organization_id = ${orgId} AND wallet_id = ${walletId} AND status = 'active'`);
  return rows[0]?.role ?? null;
}

/** An active membership joined at sign-in, with the role `requireGrant` let it have. */
export async function insertActiveMember(
  exec: Executor,
  m: {
    id: string;
    orgId: string;
    walletId: string;
    email: string | null;
    name: string | null;
    grant: RoleGrant;
    now: Date;
  },
) {
  await exec.execute(sql`INSERT INTO members
      (id, organization_id, wallet_id, email, name, role, status, created_at, updated_at)
    VALUES (${m.id}, ${m.orgId}, ${m.walletId}, ${m.email}, ${m.name}, ${m.grant.role},
      'active', ${m.now}, ${m.now})`);
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

/** Every membership of a deleted organization ends. */
export async function endMembershipsIn(exec: Executor, orgId: string, now: Date) {
  await exec.execute(sql`UPDATE members SET status = 'removed', invite_token_hash = NULL,
      updated_at = ${now}
    WHERE organization_id = ${orgId} AND status <> 'removed'`);
}
