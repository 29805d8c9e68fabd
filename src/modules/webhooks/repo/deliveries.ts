import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';
import {
  and,
  byCreation,
  dateFilters,
  keysetCondition,
  orderBy,
  type ParsedList,
} from '../../../lib/list.js';
import type { Attempt, DeliveryStatus } from '../schema.js';

/** Paging of the list: newest first by creation, then id. */
export const DELIVERY_LIST = byCreation();

/** A delivery as the log shows it (docs/webhooks.md, "The delivery log, redelivery and replay"). */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  action_id: string;
  status: DeliveryStatus;
  attempts: Attempt[];
  next_attempt_at: Date | null;
  created_at: Date;
}

type RawDelivery = Omit<DeliveryRow, 'next_attempt_at' | 'created_at'> & {
  next_attempt_at: DbTime | null;
  created_at: DbTime;
};

const COLUMNS = sql`id, webhook_id, action_id, status, attempts, next_attempt_at, created_at`;

function toRow(r: RawDelivery): DeliveryRow {
  return {
    ...r,
    next_attempt_at: r.next_attempt_at === null ? null : asDate(r.next_attempt_at),
    created_at: asDate(r.created_at),
  };
}

export async function listDeliveries(
  exec: Executor,
  orgId: string,
  webhookId: string,
  page: ParsedList,
  query: Record<string, unknown>,
  status: DeliveryStatus | undefined,
): Promise<DeliveryRow[]> {
  const where = and([
    sql`webhook_id = ${webhookId}`,
    sql`organization_id = ${orgId}`,
    status !== undefined ? sql`status = ${status}` : undefined,
    ...dateFilters(query, sql`created_at`),
    keysetCondition(page),
  ]);
  const { rows } = await exec.execute<RawDelivery>(
    sql`SELECT ${COLUMNS} FROM webhook_deliveries WHERE ${where} ${orderBy(page)}
      LIMIT ${page.limit + 1}`,
  );
  return rows.map(toRow);
}

/** The statuses `status=open` lists: not delivered yet, or ended without delivery. */
export const OPEN_STATUSES: readonly DeliveryStatus[] = [
  'pending',
  'retrying',
  'failed',
  'stopped',
];

/**
 * The deliveries of every webhook of the organization that is not deleted (a deleted one's
 * page is gone, and so is what it could redeliver), newest first by default.
 */
export async function listOrganizationDeliveries(
  exec: Executor,
  orgId: string,
  page: ParsedList,
  query: Record<string, unknown>,
  statuses: readonly DeliveryStatus[] | undefined,
): Promise<DeliveryRow[]> {
  const where = and([
    sql`organization_id = ${orgId}`,
    sql`webhook_id IN (SELECT id FROM webhooks
      WHERE organization_id = ${orgId} AND deleted_at IS NULL)`,
    statuses !== undefined
      ? sql`status IN (SELECT jsonb_array_elements_text(${JSON.stringify(statuses)}::jsonb))`
      : undefined,
    ...dateFilters(query, sql`created_at`),
    keysetCondition(page),
  ]);
  const { rows } = await exec.execute<RawDelivery>(
    sql`SELECT ${COLUMNS} FROM webhook_deliveries WHERE ${where} ${orderBy(page)}
      LIMIT ${page.limit + 1}`,
  );
  return rows.map(toRow);
}

export async function findDelivery(
  exec: Executor,
  orgId: string,
  webhookId: string,
  id: string,
): Promise<DeliveryRow | null> {
  const { rows } = await exec.execute<RawDelivery>(sql`
    SELECT ${COLUMNS} FROM webhook_deliveries
    WHERE id = ${id} AND webhook_id = ${webhookId} AND organization_id = ${orgId}`);
  return rows[0] ? toRow(rows[0]) : null;
}

/** Queued again from scratch: a fresh round of attempts, due now, same id. */
const REQUEUE = (now: Date) => sql`status = 'pending', round_attempts = 0,
  next_attempt_at = ${now}, finished_at = NULL, claim_id = NULL, leased_until = NULL,
  updated_at = ${now}`;

/** Queues a `failed` or `stopped` delivery again; null when it is in no such state. */
export async function requeueFinished(
  exec: Executor,
  orgId: string,
  webhookId: string,
  id: string,
  now: Date,
): Promise<DeliveryRow | null> {
  const { rows } = await exec.execute<RawDelivery>(sql`
    UPDATE webhook_deliveries SET ${REQUEUE(now)}
    WHERE id = ${id} AND webhook_id = ${webhookId} AND organization_id = ${orgId}
      AND status IN ('failed', 'stopped')
    RETURNING ${COLUMNS}`);
  return rows[0] ? toRow(rows[0]) : null;
}

/**
 * Queues again every delivery in a final state created in [since, until), when there are
 * at most `max` of them; answers how many there were (more than `max`: nothing queued).
 */
export async function requeueRange(
  exec: Executor,
  orgId: string,
  webhookId: string,
  since: Date,
  until: Date,
  max: number,
  now: Date,
): Promise<number> {
  const inRange = sql`webhook_id = ${webhookId} AND organization_id = ${orgId}
    AND created_at >= ${since} AND created_at < ${until}
    AND status IN ('done', 'failed', 'stopped')`;
  const { rows: counted } = await exec.execute<{ n: number }>(sql`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM webhook_deliveries WHERE ${inRange} LIMIT ${max + 1}) x`);
  const n = counted[0]?.n ?? 0;
  if (n === 0 || n > max) return n;
  const { rows } = await exec.execute(
    sql`UPDATE webhook_deliveries SET ${REQUEUE(now)} WHERE ${inRange} RETURNING 1`,
  );
  return rows.length;
}

/**
 * Ends the queued deliveries of a webhook that was switched off or deleted (docs/webhooks.md:
 * they are `failed`). A worker's claim on one is void from here on.
 */
export async function failQueued(
  exec: Executor,
  webhookIds: readonly string[],
  now: Date,
): Promise<void> {
  if (webhookIds.length === 0) return;
  await exec.execute(sql`
    UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, claim_id = NULL,
      leased_until = NULL, finished_at = ${now}, updated_at = ${now}
    WHERE webhook_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(webhookIds)}::jsonb))
      AND status IN ('pending', 'retrying')`);
}

/**
 * Adds `n` replayed deliveries to the organization's count for `day` unless that would pass
 * `budget`; false then (nothing changes). One row per organization and day.
 */
export async function addReplayUsage(
  exec: Executor,
  orgId: string,
  day: string,
  n: number,
  budget: number,
): Promise<boolean> {
  const { rows } = await exec.execute(sql`
    INSERT INTO webhook_replay_usage AS u (organization_id, day, deliveries)
    SELECT ${orgId}, ${day}::date, ${n}::int WHERE ${n}::int <= ${budget}::int
    ON CONFLICT (organization_id, day) DO UPDATE SET deliveries = u.deliveries + EXCLUDED.deliveries
      WHERE u.deliveries + EXCLUDED.deliveries <= ${budget}::int
    RETURNING u.deliveries`);
  return rows.length === 1;
}
