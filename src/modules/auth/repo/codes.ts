import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';

/** Every kind of emailed or texted code; one allowance rule covers them all. */
export const CODE_PURPOSES = ['verification', 'otp', 'password_reset'] as const;
export type CodePurpose = (typeof CODE_PURPOSES)[number];
export type Channel = 'email' | 'sms';

/** Serialises the requests for one address and purpose (their counts, then their rows). */
export async function lockRecipient(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
): Promise<void> {
  await exec.execute(
    sql`SELECT pg_advisory_xact_lock(hashtext(${`code:${purpose}:${recipient}`}))`,
  );
}

/** Requests older than `before` count for nothing: a few are deleted on every request. */
export async function pruneRequests(exec: Executor, before: Date): Promise<void> {
  await exec.execute(sql`DELETE FROM code_requests WHERE id IN (
    SELECT id FROM code_requests WHERE created_at < ${before} LIMIT 100
    FOR UPDATE SKIP LOCKED)`);
}

/** This requester's requests for this address and purpose since `since`, and the oldest. */
export async function requestsOf(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
  requester: string,
  since: Date,
): Promise<{ n: number; oldest: Date | null }> {
  const { rows } = await exec.execute<{ n: number; oldest: DbTime | null }>(sql`
    SELECT count(*)::int AS n, min(created_at) AS oldest FROM code_requests
    WHERE purpose = ${purpose} AND recipient = ${recipient} AND requester = ${requester}
      AND created_at > ${since}`);
  const row = rows[0];
  return { n: row?.n ?? 0, oldest: row?.oldest ? asDate(row.oldest) : null };
}

/** Codes sent to this address for this purpose since `since` on untrusted requests. */
export async function untrustedSentSince(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
  since: Date,
): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`SELECT count(*)::int AS n
    FROM code_requests WHERE purpose = ${purpose} AND recipient = ${recipient}
      AND sent AND NOT trusted AND created_at > ${since}`);
  return rows[0]?.n ?? 0;
}

export async function insertRequest(
  exec: Executor,
  r: {
    id: string;
    purpose: CodePurpose;
    recipient: string;
    requester: string;
    trusted: boolean;
    sent: boolean;
    now: Date;
  },
): Promise<void> {
  await exec.execute(sql`INSERT INTO code_requests
      (id, purpose, recipient, requester, trusted, sent, created_at)
    VALUES (${r.id}, ${r.purpose}, ${r.recipient}, ${r.requester}, ${r.trusted}, ${r.sent},
      ${r.now})`);
}

/** Whether this requester proved this address since `since`. */
export async function isTrusted(
  exec: Executor,
  recipient: string,
  requester: string,
  since: Date,
): Promise<boolean> {
  const { rows } = await exec.execute(sql`SELECT 1 FROM code_trusted_requesters
    WHERE recipient = ${recipient} AND requester = ${requester} AND last_success_at > ${since}`);
  return rows.length > 0;
}

/** Remembers that this requester proved this address now; forgets stale ones. */
export async function trust(
  exec: Executor,
  recipient: string,
  requester: string,
  now: Date,
  forgetBefore: Date,
): Promise<void> {
  await exec.execute(sql`INSERT INTO code_trusted_requesters AS t
      (recipient, requester, last_success_at) VALUES (${recipient}, ${requester}, ${now})
    ON CONFLICT (recipient, requester) DO UPDATE SET last_success_at = ${now}`);
  await exec.execute(sql`DELETE FROM code_trusted_requesters WHERE (recipient, requester) IN (
    SELECT recipient, requester FROM code_trusted_requesters
    WHERE last_success_at < ${forgetBefore} LIMIT 100 FOR UPDATE SKIP LOCKED)`);
}

/** Uses up every other live code for this address and purpose (one of them was used). */
export async function retireOthers(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
  usedId: string,
  now: Date,
): Promise<void> {
  await exec.execute(sql`UPDATE codes SET used_at = ${now}
    WHERE purpose = ${purpose} AND recipient = ${recipient} AND used_at IS NULL
      AND id <> ${usedId}`);
}

/** Uses up every live code of the wallet sent on these channels (its address there went). */
export async function retireWalletCodes(
  exec: Executor,
  walletId: string,
  channels: Channel[],
  now: Date,
): Promise<void> {
  if (channels.length === 0) return;
  await exec.execute(sql`UPDATE codes SET used_at = ${now}
    WHERE wallet_id = ${walletId} AND used_at IS NULL
      AND channel = ANY(${`{${channels.join(',')}}`}::text[])`);
}

export interface NewCode {
  id: string;
  purpose: CodePurpose;
  walletId: string;
  channel: Channel;
  recipient: string;
  codeHash: string;
  expiresAt: Date;
  now: Date;
}

export async function insertCode(exec: Executor, c: NewCode): Promise<void> {
  await exec.execute(sql`INSERT INTO codes
      (id, purpose, wallet_id, channel, recipient, code_hash, expires_at, created_at)
    VALUES (${c.id}, ${c.purpose}, ${c.walletId}, ${c.channel}, ${c.recipient},
      ${c.codeHash}, ${c.expiresAt}, ${c.now})`);
}

export type LiveCodeRow = {
  id: string;
  code_hash: string;
  wallet_id: string;
  channel: Channel;
};

/**
 * Counts one attempt on each of the newest `maxLive` live codes for this address and purpose
 * that had fewer than `maxAttempts`; answers those codes, newest first. A new code does not
 * retire older ones, so one guess is tried against each (and costs each an attempt).
 */
export async function spendAttempts(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
  maxAttempts: number,
  maxLive: number,
  now: Date,
  walletId: string | null = null,
): Promise<LiveCodeRow[]> {
  const ofWallet = walletId === null ? sql`` : sql` AND wallet_id = ${walletId}`;
  const { rows } = await exec.execute<LiveCodeRow & { created_at: DbTime }>(sql`
    UPDATE codes SET attempts = attempts + 1
    WHERE id IN (SELECT id FROM codes WHERE purpose = ${purpose}
        AND recipient = ${recipient} AND used_at IS NULL AND expires_at > ${now}${ofWallet}
      ORDER BY created_at DESC, id DESC LIMIT ${maxLive})
      AND attempts < ${maxAttempts}
    RETURNING id, code_hash, wallet_id, channel, created_at`);
  return rows
    .sort((a, b) => asDate(b.created_at).getTime() - asDate(a.created_at).getTime())
    .map(({ id, code_hash, wallet_id, channel }) => ({ id, code_hash, wallet_id, channel }));
}

/** Uses the code up; false when it already was (a concurrent attempt won). */
export async function markUsed(exec: Executor, id: string, now: Date): Promise<boolean> {
  const { rows } = await exec.execute(sql`UPDATE codes SET used_at = ${now}
    WHERE id = ${id} AND used_at IS NULL RETURNING id`);
  return rows.length === 1;
}
