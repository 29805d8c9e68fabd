import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';

/** Held, for one transaction, by the one process pruning deliveries at a time. */
export const RETENTION_LOCK = 7_411_020_001;

/**
 * Takes the pruning's transaction-level advisory lock if free; false when another process
 * holds it (it is pruning: this one leaves the work to it).
 */
export async function tryRetentionLock(tx: Executor): Promise<boolean> {
  const { rows } = await tx.execute<{ ok: boolean }>(
    sql`SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK}::bigint) AS ok`,
  );
  return rows[0]?.ok === true;
}

/**
 * Deletes at most `limit` deliveries that ended (`done`, `failed`, `stopped`) and were created
 * before `before`; answers how many (docs/webhooks.md, "How long deliveries are kept"). Run
 * in a transaction of its own: it turns bitmap scans off until that transaction ends.
 *
 * The rows are found webhook by webhook (deleted webhooks too) through the list index
 * (`webhook_deliveries_list`: webhook_id, created_at, id), oldest first, so the outbox's
 * writes keep the indexes they had. Bitmap scans are off because one webhook may hold far more
 * rows than the planner's per-webhook average, and a bitmap scan would read every old row of
 * it before stopping at the limit, where the ordered index scan stops at once. Queued
 * deliveries (`pending`, `retrying`) are never deleted whatever their age, and rows another
 * transaction holds (a replay or a redelivery queueing them again) are skipped, never waited
 * for. The rows found and locked are deleted by their row address (a TID scan) in the same
 * statement.
 */
export async function deleteFinishedBefore(
  tx: Executor,
  before: Date,
  limit: number,
): Promise<number> {
  await tx.execute(sql`SELECT set_config('enable_bitmapscan', 'off', true)`);
  const { rows } = await tx.execute<{ n: number }>(sql`
    WITH picked AS (
      SELECT d.ctid AS t FROM webhooks w CROSS JOIN LATERAL (
        SELECT x.ctid FROM webhook_deliveries x
        WHERE x.webhook_id = w.id AND x.created_at < ${before}
          AND x.status IN ('done', 'failed', 'stopped')
        ORDER BY x.created_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED) d
      LIMIT ${limit}
    ), gone AS (
      DELETE FROM webhook_deliveries WHERE ctid = ANY (ARRAY(SELECT t FROM picked)) RETURNING 1
    )
    SELECT count(*)::int AS n FROM gone`);
  return rows[0]?.n ?? 0;
}
