import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';

export type CodePurpose = 'verification' | 'otp' | 'password_reset';
export type Channel = 'email' | 'sms';

/** Codes made for this address and purpose since `since`. */
export async function countSentSince(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
  since: Date,
): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`SELECT count(*)::int AS n
    FROM codes WHERE purpose = ${purpose} AND recipient = ${recipient}
      AND created_at > ${since}`);
  return rows[0]?.n ?? 0;
}

/** Uses up every live code for this address and purpose (a new one replaces them). */
export async function retireLive(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
  now: Date,
): Promise<void> {
  await exec.execute(sql`UPDATE codes SET used_at = ${now}
    WHERE purpose = ${purpose} AND recipient = ${recipient} AND used_at IS NULL`);
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

/**
 * Counts one attempt on the newest live code for this address and purpose, unless it had
 * `maxAttempts` already; answers the code's row then, else null.
 */
export async function spendAttempt(
  exec: Executor,
  purpose: CodePurpose,
  recipient: string,
  maxAttempts: number,
  now: Date,
) {
  const { rows } = await exec.execute<{
    id: string;
    code_hash: string;
    wallet_id: string;
    channel: Channel;
  }>(sql`UPDATE codes SET attempts = attempts + 1
    WHERE id = (SELECT id FROM codes WHERE purpose = ${purpose}
        AND recipient = ${recipient} AND used_at IS NULL AND expires_at > ${now}
      ORDER BY created_at DESC, id DESC LIMIT 1)
      AND attempts < ${maxAttempts}
    RETURNING id, code_hash, wallet_id, channel`);
  return rows[0] ?? null;
}

/** Uses the code up; false when it already was (a concurrent attempt won). */
export async function markUsed(exec: Executor, id: string, now: Date): Promise<boolean> {
  const { rows } = await exec.execute(sql`UPDATE codes SET used_at = ${now}
    WHERE id = ${id} AND used_at IS NULL RETURNING id`);
  return rows.length === 1;
}
