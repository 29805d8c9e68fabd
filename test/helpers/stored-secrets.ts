import { sql, type SQL } from 'drizzle-orm';
import { createDatabase, type Db } from '../../src/db/pool.js';

/** Every column that keeps a secret (src/stored-secrets.ts). */
export const COLUMNS = [
  'signing_keys.private_jwk',
  'webhooks.signing_key',
  'webhooks.previous_signing_key',
  'batch_keys.private_key',
  'batch_salt_keys.secret',
  'log_keys.seed',
];

export type Stored = { column: string; row: string; value: string };

/** Every value of the six columns, read directly; bytea ones as their bytes' latin1 text. */
export async function stored(db: Db): Promise<Stored[]> {
  const read = async (column: string, q: SQL, hex = false) =>
    (await db.execute<{ row: string; value: string }>(q)).rows.map((r) => ({
      column,
      row: r.row,
      value: hex ? Buffer.from(r.value, 'hex').toString('latin1') : r.value,
    }));
  return [
    ...(await read(
      COLUMNS[0]!,
      sql`SELECT kid AS row, private_jwk #>> '{}' AS value FROM signing_keys`,
    )),
    ...(await read(
      COLUMNS[1]!,
      sql`SELECT id AS row, encode(signing_key, 'hex') AS value FROM webhooks`,
      true,
    )),
    ...(await read(
      COLUMNS[2]!,
      sql`SELECT id AS row, encode(previous_signing_key, 'hex') AS value FROM webhooks
        WHERE previous_signing_key IS NOT NULL`,
      true,
    )),
    ...(await read(COLUMNS[3]!, sql`SELECT id AS row, private_key AS value FROM batch_keys`)),
    ...(await read(COLUMNS[4]!, sql`SELECT id AS row, secret AS value FROM batch_salt_keys`)),
    ...(await read(COLUMNS[5]!, sql`SELECT id AS row, seed AS value FROM log_keys`)),
  ];
}

/** The stored values of the database at `url`, read on a connection of their own. */
export async function storedAt(url: string): Promise<Stored[]> {
  const database = createDatabase(url, 1);
  try {
    return await stored(database.db);
  } finally {
    await database.close();
  }
}
