import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';

/** The batches not yet proven, as /metrics shows them (batches/metrics.ts). */
export interface BatchDepth {
  /** Building (open; at most one). */
  unsealed: number;
  /** Sealed, header and proof not written yet (`proving`). */
  unproven: number;
  /** When the oldest of those sealed; null: none. */
  oldestUnprovenSealedAt: Date | null;
}

/** One statement over the status indexes (`batches_building`, `batches_open_work`). */
export async function batchDepth(exec: Executor): Promise<BatchDepth> {
  const { rows } = await exec.execute<{
    unsealed: number;
    unproven: number;
    oldest: DbTime | null;
  }>(sql`
    SELECT (SELECT count(*)::int FROM batches WHERE status = 'building') AS unsealed,
      (SELECT count(*)::int FROM batches WHERE status = 'proving') AS unproven,
      (SELECT min(sealed_at) FROM batches WHERE status = 'proving') AS oldest`);
  const r = rows[0]!;
  return {
    unsealed: Number(r.unsealed),
    unproven: Number(r.unproven),
    oldestUnprovenSealedAt: r.oldest === null ? null : asDate(r.oldest),
  };
}
