import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';

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
