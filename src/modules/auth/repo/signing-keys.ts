import { sql } from 'drizzle-orm';
import type { JWK } from 'jose';
import type { Executor } from '../../../db/pool.js';
import type { SecretChange, StoredSecret } from '../../../db/sealed-columns.js';

const KEY_LOCK = 7_411_002_002;

/** The private key column (src/lib/sealed-secret.ts): sealed, a JSON string; else the JWK. */
export const PRIVATE_JWK = 'signing_keys.private_jwk';

export type SigningKeyRow = { kid: string; private_jwk: JWK | string; public_jwk: JWK };

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

/** Private keys as text (`#>> '{}'`: a sealed one is its string) that do or do not start with `prefix`. */
export async function privateJwks(
  exec: Executor,
  prefix: string,
  starting: boolean,
): Promise<StoredSecret<string>[]> {
  const { rows } = await exec.execute<StoredSecret<string>>(sql`
    SELECT kid AS row, private_jwk #>> '{}' AS value FROM signing_keys
    WHERE starts_with(private_jwk #>> '{}', ${prefix}) = ${starting}`);
  return rows;
}

/** Stores each private key (sealed: a JSON string) over the one it was made from. */
export async function storePrivateJwks(
  exec: Executor,
  changes: readonly SecretChange<string>[],
): Promise<number> {
  const { rows } = await exec.execute(sql`
    UPDATE signing_keys s SET private_jwk = to_jsonb(v.value)
    FROM unnest(${sql.param(changes.map((c) => c.row))}::text[],
      ${sql.param(changes.map((c) => c.old))}::text[],
      ${sql.param(changes.map((c) => c.value))}::text[]) AS v(kid, old, value)
    WHERE s.kid = v.kid AND s.private_jwk #>> '{}' = v.old
    RETURNING s.kid`);
  return rows.length;
}
