import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import type { SecretChange, StoredSecret } from '../../../db/sealed-columns.js';

/** The columns that keep the batch key and the salt key (src/lib/sealed-secret.ts). */
export const BATCH_KEY = 'batch_keys.private_key';
export const SALT_KEY = 'batch_salt_keys.secret';

/**
 * The service's batch key: the first instance to start makes it, every later one (and every
 * other instance) reads the same row. Stored like the token signing keys (signing_keys):
 * in the database the instances share, readable only by the service's database role.
 */
export async function ensureBatchKey(
  exec: Executor,
  candidate: { privateKeyPem: string; publicKey: string; now: Date },
): Promise<string> {
  await exec.execute(sql`
    INSERT INTO batch_keys (id, private_key, public_key, created_at)
    VALUES ('current', ${candidate.privateKeyPem}, ${candidate.publicKey}, ${candidate.now})
    ON CONFLICT (id) DO NOTHING`);
  const { rows } = await exec.execute<{ private_key: string }>(
    sql`SELECT private_key FROM batch_keys WHERE id = 'current'`,
  );
  return rows[0]!.private_key;
}

/**
 * The batch salt key (32 bytes, hex) private actions' salts are derived from (formulas.ts,
 * `actionSalt`): made by the first instance, read by every other. Never served or logged.
 */
export async function ensureSaltKey(
  exec: Executor,
  candidate: { secret: string; now: Date },
): Promise<string> {
  await exec.execute(sql`
    INSERT INTO batch_salt_keys (id, secret, created_at)
    VALUES ('current', ${candidate.secret}, ${candidate.now})
    ON CONFLICT (id) DO NOTHING`);
  const { rows } = await exec.execute<{ secret: string }>(
    sql`SELECT secret FROM batch_salt_keys WHERE id = 'current'`,
  );
  return rows[0]!.secret;
}

/** Batch keys that do or do not start with `prefix` (sealed ones: src/lib/sealed-secret.ts). */
export async function batchKeys(
  exec: Executor,
  prefix: string,
  starting: boolean,
): Promise<StoredSecret<string>[]> {
  const { rows } = await exec.execute<StoredSecret<string>>(sql`
    SELECT id AS row, private_key AS value FROM batch_keys
    WHERE starts_with(private_key, ${prefix}) = ${starting}`);
  return rows;
}

export async function storeBatchKeys(
  exec: Executor,
  changes: readonly SecretChange<string>[],
): Promise<number> {
  const { rows } = await exec.execute(sql`
    UPDATE batch_keys k SET private_key = v.value
    FROM unnest(${sql.param(changes.map((c) => c.row))}::text[],
      ${sql.param(changes.map((c) => c.old))}::text[],
      ${sql.param(changes.map((c) => c.value))}::text[]) AS v(id, old, value)
    WHERE k.id = v.id AND k.private_key = v.old
    RETURNING k.id`);
  return rows.length;
}

/** Salt keys that do or do not start with `prefix`. */
export async function saltKeys(
  exec: Executor,
  prefix: string,
  starting: boolean,
): Promise<StoredSecret<string>[]> {
  const { rows } = await exec.execute<StoredSecret<string>>(sql`
    SELECT id AS row, secret AS value FROM batch_salt_keys
    WHERE starts_with(secret, ${prefix}) = ${starting}`);
  return rows;
}

export async function storeSaltKeys(
  exec: Executor,
  changes: readonly SecretChange<string>[],
): Promise<number> {
  const { rows } = await exec.execute(sql`
    UPDATE batch_salt_keys k SET secret = v.value
    FROM unnest(${sql.param(changes.map((c) => c.row))}::text[],
      ${sql.param(changes.map((c) => c.old))}::text[],
      ${sql.param(changes.map((c) => c.value))}::text[]) AS v(id, old, value)
    WHERE k.id = v.id AND k.secret = v.old
    RETURNING k.id`);
  return rows.length;
}
