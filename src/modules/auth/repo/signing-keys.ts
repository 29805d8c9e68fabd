import { sql } from 'drizzle-orm';
import type { JWK } from 'jose';
import type { Executor } from '../../../db/pool.js';

const KEY_LOCK = 7_411_002_002;

export type SigningKeyRow = { kid: string; private_jwk: JWK; public_jwk: JWK };

/** Holds, until the transaction ends, the lock that lets one instance make the first key. */
export async function lockKeys(exec: Executor): Promise<void> {
  await exec.execute(sql`SELECT pg_advisory_xact_lock(${KEY_LOCK})`);
}

/** The keys in use, newest first. */
export async function liveKeys(exec: Executor): Promise<SigningKeyRow[]> {
  const { rows } = await exec.execute<SigningKeyRow>(
    sql`SELECT kid, private_jwk, public_jwk FROM signing_keys
        WHERE retired_at IS NULL ORDER BY created_at DESC`,
  );
  return rows;
}

export async function insertKey(exec: Executor, key: SigningKeyRow & { alg: string }) {
  await exec.execute(sql`INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at)
    VALUES (${key.kid}, ${key.alg}, ${JSON.stringify(key.private_jwk)}::jsonb,
      ${JSON.stringify(key.public_jwk)}::jsonb, now())`);
}
