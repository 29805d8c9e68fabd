import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';

// The counts behind the limits on invitations (src/modules/members/invitation-caps.ts).

/**
 * Serialises the invitations of one address across every organization (their count, then
 * their rows), and of one organization (its pending count). Always taken in this order.
 */
export async function lockInvitationCounts(
  exec: Executor,
  orgId: string,
  email: string,
): Promise<void> {
  await exec.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`invite-to:${email}`}))`);
  await exec.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`invites-of:${orgId}`}))`);
}

/** Sends older than `before` count for nothing: a few are deleted on every invitation. */
export async function pruneEmails(exec: Executor, before: Date): Promise<void> {
  await exec.execute(sql`DELETE FROM invitation_emails WHERE id IN (
    SELECT id FROM invitation_emails WHERE created_at < ${before} LIMIT 100
    FOR UPDATE SKIP LOCKED)`);
}

/** Invitation emails sent to this address since `since` (any organization), and the oldest. */
export async function emailsSince(
  exec: Executor,
  recipient: string,
  since: Date,
): Promise<{ n: number; oldest: Date | null }> {
  const { rows } = await exec.execute<{ n: number; oldest: DbTime | null }>(sql`
    SELECT count(*)::int AS n, min(created_at) AS oldest FROM invitation_emails
    WHERE recipient = ${recipient} AND created_at > ${since}`);
  const row = rows[0];
  return { n: row?.n ?? 0, oldest: row?.oldest ? asDate(row.oldest) : null };
}

export async function insertEmail(
  exec: Executor,
  e: { id: string; recipient: string; orgId: string; now: Date },
): Promise<void> {
  await exec.execute(sql`INSERT INTO invitation_emails (id, recipient, organization_id, created_at)
    VALUES (${e.id}, ${e.recipient}, ${e.orgId}, ${e.now})`);
}

/** The organization's invitations still waiting to be confirmed (not expired, not withdrawn). */
export async function countPending(exec: Executor, orgId: string, now: Date): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM members
    WHERE organization_id = ${orgId} AND status = 'invited' AND invite_expires_at > ${now}`);
  return rows[0]?.n ?? 0;
}
