import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';
import type { DeliveryStatus } from '../schema.js';

/** The outbox by status, as /metrics shows it (webhooks/metrics.ts). */
export interface OutboxDepth {
  /** Deliveries by status: the queued ones (pending, retrying) and those that ended failed or stopped. */
  counts: Map<DeliveryStatus, number>;
  /** When the longest-waiting pending delivery became due (queued or requeued); null: none. */
  oldestPendingDue: Date | null;
}

/**
 * One statement, two index scans: the queued deliveries through the due index (partial on
 * `next_attempt_at`; its rows are the queue, so the cost follows its depth) and the failed
 * or stopped ones through `webhook_deliveries_final` (migration 0031). `done` deliveries,
 * the bulk of the table, are not counted: a count of them would read all of it.
 */
export async function outboxDepth(exec: Executor): Promise<OutboxDepth> {
  const { rows } = await exec.execute<{ status: DeliveryStatus; n: number; due: DbTime | null }>(
    sql`
    SELECT status, count(*)::int AS n, min(next_attempt_at) AS due FROM webhook_deliveries
    WHERE next_attempt_at IS NOT NULL GROUP BY status
    UNION ALL
    SELECT status, count(*)::int, NULL FROM webhook_deliveries
    WHERE finished_at IS NOT NULL GROUP BY status`,
  );
  const counts = new Map<DeliveryStatus, number>();
  let oldestPendingDue: Date | null = null;
  for (const r of rows) {
    counts.set(r.status, (counts.get(r.status) ?? 0) + Number(r.n));
    if (r.status === 'pending' && r.due !== null) oldestPendingDue = asDate(r.due);
  }
  return { counts, oldestPendingDue };
}
