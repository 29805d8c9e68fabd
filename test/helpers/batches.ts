import { sql } from 'drizzle-orm';
import type { Db } from '../../src/db/pool.js';
import {
  actionsHash,
  affectedObjects,
  commitment,
  GENESIS_HASH,
  headerHash,
  integrityRoot,
} from '../../src/modules/batches/formulas.js';

type ChainRow = {
  id: string;
  sequence: number;
  status: string;
  hash: string | null;
  prev_hash: string | null;
  integrity_root: string | null;
  prev_integrity_root: string | null;
  actions_hash: string | null;
  commitment: string | null;
  actions_count: number;
  total_fee_wei: string;
  capacity: number;
  created_at: string;
};

/**
 * Checks the whole batch chain against the raw rows: sequences 1…n with no gap, one
 * building batch at most, every action in at most one batch (and all but those waiting for
 * the newest in one), no batch above its capacity, and every sealed header recomputed from
 * its actions and chained to the previous one. Answers the problems found (none: []).
 */
export async function chainProblems(db: Db): Promise<string[]> {
  const problems: string[] = [];
  const { rows: batches } = await db.execute<ChainRow>(sql`
    SELECT id, sequence::int AS sequence, status, hash, prev_hash, integrity_root,
      prev_integrity_root, actions_hash, commitment, actions_count, capacity,
      total_fee_wei::text AS total_fee_wei,
      to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
    FROM batches ORDER BY sequence`);
  batches.forEach((b, i) => {
    if (b.sequence !== i + 1) problems.push(`sequence ${b.sequence} at position ${i + 1}`);
  });
  if (batches.filter((b) => b.status === 'building').length > 1) problems.push('two building');
  const { rows: waiting } = await db.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM action_logs WHERE batch_id IS NULL`,
  );
  if (waiting[0]!.n > 0) problems.push(`${waiting[0]!.n} actions in no batch`);
  let prev: ChainRow | null = null;
  for (const b of batches) {
    const { rows } = await db.execute<{
      hash: string;
      object_id: string | null;
      integrity_hash: string;
      fee_wei: string;
    }>(sql`SELECT hash, object_id, integrity_hash, fee_wei::text AS fee_wei
      FROM action_logs WHERE batch_id = ${b.id} ORDER BY seq`);
    if (rows.length > b.capacity) problems.push(`${b.id}: ${rows.length} > ${b.capacity}`);
    if (b.status === 'building' || b.hash === null) {
      prev = b;
      continue;
    }
    const ah = actionsHash(rows.map((r) => r.hash));
    const root = integrityRoot(affectedObjects(rows));
    const prevRoot = prev?.integrity_root ?? GENESIS_HASH;
    const fee = rows.reduce((s, r) => s + BigInt(r.fee_wei), 0n).toString();
    const c = commitment(prevRoot, root, ah, b.sequence);
    const expected = {
      prev_hash: prev?.hash ?? GENESIS_HASH,
      prev_integrity_root: prevRoot,
      integrity_root: root,
      actions_hash: ah,
      commitment: c,
      actions_count: rows.length,
      total_fee_wei: fee,
      hash: headerHash({
        id: b.id,
        sequence: b.sequence,
        prev_hash: prev?.hash ?? GENESIS_HASH,
        prev_integrity_root: prevRoot,
        integrity_root: root,
        actions_hash: ah,
        commitment: c,
        actions_count: rows.length,
        total_fee_wei: fee,
        when_created: b.created_at,
      }),
    };
    for (const [k, v] of Object.entries(expected)) {
      if ((b as unknown as Record<string, unknown>)[k] !== v) {
        problems.push(
          `batch ${b.sequence} ${k}: ${String((b as unknown as Record<string, unknown>)[k])} ≠ ${v}`,
        );
      }
    }
    prev = b;
  }
  return problems;
}
