import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../../src/db/pool.js';

/**
 * A synthetic transparency log of any size, written straight into the log's tables (no
 * actions, no batches): leaf i's data is SHA-256 of i as 8 big-endian bytes, which
 * PostgreSQL computes as `sha256(int8send(i))`. Used by test/log/proofs.test.ts and the
 * 10⁷-leaf benchmark (bench/log-proofs.ts, which hashes the same leaves in bench/log-seed-hash.ts).
 */
export function syntheticLeaf(i: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(i));
  return createHash('sha256').update(b).digest();
}

/** Writes leaves [from, to) into log_entries, a million rows per statement at most. */
export async function insertSyntheticEntries(db: Db, from: number, to: number): Promise<void> {
  for (let a = from; a < to; a += 1_000_000) {
    const b = Math.min(to, a + 1_000_000) - 1;
    await db.execute(sql`
      INSERT INTO log_entries (log_index, action_id, leaf)
      SELECT i, 'syn_' || i, sha256(int8send(i))
      FROM generate_series(${a}::bigint, ${b}::bigint) AS i`);
  }
}
