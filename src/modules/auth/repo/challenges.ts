import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';

// The one-use challenges of the sign-in ceremonies: WebAuthn challenges and Sign-In with
// Ethereum nonces. Expired ones are of no use to anyone; each insert clears a few.

export type PasskeyPurpose = 'register' | 'login' | 'link';

export async function insertPasskeyChallenge(
  exec: Executor,
  c: { challenge: string; purpose: PasskeyPurpose; walletId: string | null; expiresAt: Date },
  now: Date,
): Promise<void> {
  await exec.execute(sql`INSERT INTO webauthn_challenges
      (challenge, purpose, wallet_id, expires_at, created_at)
    VALUES (${c.challenge}, ${c.purpose}, ${c.walletId}, ${c.expiresAt}, ${now})`);
  await exec.execute(sql`DELETE FROM webauthn_challenges WHERE challenge IN (
    SELECT challenge FROM webauthn_challenges WHERE expires_at < ${now} LIMIT 100)`);
}

/** Deletes the live challenge issued for this purpose and wallet; false when there is none. */
export async function takePasskeyChallenge(
  exec: Executor,
  challenge: string,
  purpose: PasskeyPurpose,
  walletId: string | null,
  now: Date,
): Promise<boolean> {
  const owner = walletId ? sql`wallet_id = ${walletId}` : sql`wallet_id IS NULL`;
  const { rows } = await exec.execute(sql`DELETE FROM webauthn_challenges
    WHERE challenge = ${challenge} AND purpose = ${purpose} AND ${owner}
      AND expires_at > ${now}
    RETURNING challenge`);
  return rows.length > 0;
}

export async function insertSiweNonce(
  exec: Executor,
  n: { nonce: string; address: string; expiresAt: Date },
  now: Date,
): Promise<void> {
  await exec.execute(sql`INSERT INTO siwe_nonces (nonce, address, expires_at, created_at)
    VALUES (${n.nonce}, ${n.address}, ${n.expiresAt}, ${now})`);
  await exec.execute(sql`DELETE FROM siwe_nonces WHERE nonce IN (
    SELECT nonce FROM siwe_nonces WHERE expires_at < ${now} LIMIT 100)`);
}

/** Spends the live nonce issued for this address; false when there is none. */
export async function spendSiweNonce(
  exec: Executor,
  nonce: string,
  address: string,
  now: Date,
): Promise<boolean> {
  const { rows } = await exec.execute(sql`UPDATE siwe_nonces SET used_at = ${now}
    WHERE nonce = ${nonce} AND address = ${address} AND used_at IS NULL
      AND expires_at > ${now}
    RETURNING nonce`);
  return rows.length > 0;
}

/**
 * Spends a provider's ID token (by its hash) until it expires; false when it was spent
 * already. Each spend clears a few expired ones.
 */
export async function spendIdToken(
  exec: Executor,
  tokenHash: Buffer,
  expiresAt: Date,
  now: Date,
): Promise<boolean> {
  const { rows } = await exec.execute(sql`INSERT INTO spent_id_tokens (token_hash, expires_at)
    VALUES (${tokenHash}, ${expiresAt}) ON CONFLICT (token_hash) DO NOTHING
    RETURNING 1`);
  await exec.execute(sql`DELETE FROM spent_id_tokens WHERE token_hash IN (
    SELECT token_hash FROM spent_id_tokens WHERE expires_at < ${now} LIMIT 100)`);
  return rows.length > 0;
}
