import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';
import { KEPT_ATTEMPTS, type DeliveryStatus } from '../schema.js';

/**
 * A one-row FROM item that makes the statement's own transaction commit without waiting for
 * its WAL to reach the disk (`synchronous_commit = off` for that transaction alone). Used by
 * the statements that only move a delivery along — a claim, a release, an outcome — never by
 * the one that queues it (the group statement, always durable). If PostgreSQL itself
 * crashes, the last fraction of a second of such changes can be lost; every one of them then
 * leaves the delivery as it was before, due again, so it is sent again with the same
 * `X-Event-ID`: at least once, as promised (docs/webhooks.md). What it saves is a WAL flush
 * per claim and per outcome batch, which the action groups' commits would otherwise queue
 * behind (docs/performance.md, "Webhooks").
 */
const ASYNC_COMMIT = sql`(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`;

/** A delivery a worker has claimed, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  /** The organization whose action queued it (its webhook's). */
  organization_id: string;
  claim_id: string;
  /** `{action, object}`: the exact text of the body's `event` member. */
  event: string;
  status: DeliveryStatus;
  round_attempts: number;
  created_at: Date;
  url: string;
  signing_key: Buffer;
  /** The key before the last rotation, while it still signs (24 h). */
  previous_key: Buffer | null;
  /** False when the webhook was switched off or deleted since the delivery was queued. */
  live: boolean;
  /** The trace the delivery continues (src/lib/tracing.ts); null when queued untraced. */
  trace_parent: string | null;
}

type RawClaimed = Omit<ClaimedDelivery, 'created_at'> & { created_at: DbTime };

/**
 * A delivery its own group statement claimed for this process (src/modules/webhooks/handoff.ts),
 * with its webhook's address and keys as that statement saw them (it matched the webhook as
 * active there): ready to send as a claimed one.
 */
export type HandedDelivery = Omit<ClaimedDelivery, 'status' | 'round_attempts' | 'live'>;

/**
 * Gives up handed deliveries' claim: due at once for any worker's claim (written due when
 * their lease would end, they are made due at their creation, so they keep their place).
 */
export async function releaseHanded(
  exec: Executor,
  deliveries: readonly Pick<HandedDelivery, 'id' | 'claim_id'>[],
): Promise<void> {
  await exec.execute(sql`
    UPDATE webhook_deliveries d SET leased_until = NULL, claim_id = NULL,
      next_attempt_at = d.created_at
    FROM jsonb_to_recordset(${JSON.stringify(deliveries.map((x) => ({ id: x.id, claim_id: x.claim_id })))}::jsonb)
      AS r(id text, claim_id text), ${ASYNC_COMMIT}
    WHERE d.id = r.id AND d.claim_id = r.claim_id`);
}

export interface ClaimRequest {
  now: Date;
  /** The claim lasts until then; an attempt never outlives it (10 s timeout). */
  leaseUntil: Date;
  claimId: string;
  limit: number;
  /** Deliveries a webhook may still start here (per-webhook concurrency); absent: `perWebhook`. */
  rooms: Map<string, number>;
  perWebhook: number;
  /**
   * Deliveries an organization may still start here, across its webhooks; absent:
   * `perOrganization`.
   */
  orgRooms: Map<string, number>;
  perOrganization: number;
}

/**
 * Takes due deliveries for one worker (docs/webhooks.md, "Where deliveries are sent from"): `FOR
 * UPDATE SKIP LOCKED`, so workers in any number of processes never take the same row, and a lease
 * (`leased_until`), so a worker that dies mid-attempt loses nothing: the row is due again when the
 * lease ends. At most `room` rows per webhook and per organization, and webhooks and
 * organizations without room are not even looked at, so neither a hanging receiver's backlog
 * nor an organization's several hanging receivers can crowd out the others.
 */
export async function claimDue(exec: Executor, r: ClaimRequest): Promise<ClaimedDelivery[]> {
  const rooms = [...r.rooms].map(([webhook_id, room]) => ({ webhook_id, room }));
  const full = rooms.filter((x) => x.room <= 0).map((x) => x.webhook_id);
  const orgRooms = [...r.orgRooms].map(([organization_id, room]) => ({ organization_id, room }));
  const fullOrgs = orgRooms.filter((x) => x.room <= 0).map((x) => x.organization_id);
  const scan = Math.max(r.limit * 5, 500);
  const { rows } = await exec.execute<RawClaimed>(sql`
    WITH rooms AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rooms)}::jsonb)
        AS b(webhook_id text, room int)
    ), org_rooms AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(orgRooms)}::jsonb)
        AS b(organization_id text, room int)
    ), due AS (
      SELECT id, webhook_id, organization_id, next_attempt_at FROM webhook_deliveries
      WHERE next_attempt_at <= ${r.now}
        AND (leased_until IS NULL OR leased_until <= ${r.now})
        AND webhook_id NOT IN (SELECT jsonb_array_elements_text(${JSON.stringify(full)}::jsonb))
        AND organization_id NOT IN
          (SELECT jsonb_array_elements_text(${JSON.stringify(fullOrgs)}::jsonb))
      ORDER BY next_attempt_at LIMIT ${scan}
    ), fair AS (
      SELECT d.id, d.organization_id, d.next_attempt_at,
        row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id) AS rn,
        coalesce(b.room, ${r.perWebhook}) AS room
      FROM due d LEFT JOIN rooms b ON b.webhook_id = d.webhook_id
    ), fair_orgs AS (
      -- Within the webhooks' room, at most the organization's own across its webhooks.
      SELECT f.id, f.next_attempt_at,
        row_number() OVER (PARTITION BY f.organization_id ORDER BY f.next_attempt_at, f.id)
          AS orn,
        coalesce(o.room, ${r.perOrganization}) AS org_room
      FROM fair f LEFT JOIN org_rooms o ON o.organization_id = f.organization_id
      WHERE f.rn <= f.room
    ), picked AS (
      SELECT id FROM fair_orgs WHERE orn <= org_room ORDER BY next_attempt_at LIMIT ${r.limit}
    ), locked AS (
      SELECT d.id FROM webhook_deliveries d
      WHERE d.id IN (SELECT id FROM picked) AND d.next_attempt_at <= ${r.now}
        AND (d.leased_until IS NULL OR d.leased_until <= ${r.now})
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d SET leased_until = ${r.leaseUntil}, claim_id = ${r.claimId}
      FROM locked l, ${ASYNC_COMMIT} WHERE d.id = l.id
      RETURNING d.id, d.webhook_id, d.organization_id, d.claim_id, d.event, d.status, d.round_attempts, d.created_at,
        d.trace_parent
    )
    SELECT c.*, w.url, w.signing_key,
      CASE WHEN w.previous_key_until > ${r.now} THEN w.previous_signing_key END AS previous_key,
      (w.is_active AND w.deleted_at IS NULL) AS live
    FROM claimed c JOIN webhooks w ON w.id = c.webhook_id`);
  return rows.map((row) => ({ ...row, created_at: asDate(row.created_at) }));
}

/** What one attempt (or a decision not to send) changes in a claimed delivery. */
export interface Outcome {
  id: string;
  claim_id: string;
  status: DeliveryStatus;
  /** Null when nothing was sent (the webhook was switched off meanwhile). */
  attempt: {
    when_created: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
  } | null;
  round_attempts: number;
  next_attempt_at: string | null;
  finished_at: string | null;
}

/**
 * Records outcomes in one statement. An outcome whose claim is no longer the row's (the
 * lease ran out and another worker took it, or the webhook was switched off) changes
 * nothing. An attempt is appended to the delivery's list, of which the last KEPT_ATTEMPTS
 * stay. Answers the webhooks that had a delivery become `failed` or `stopped`.
 */
export async function recordOutcomes(
  exec: Executor,
  outcomes: readonly Outcome[],
  now: Date,
): Promise<string[]> {
  if (outcomes.length === 0) return [];
  const { rows } = await exec.execute<{ webhook_id: string }>(sql`
    UPDATE webhook_deliveries d SET status = r.status,
      attempts = CASE WHEN r.attempt IS NULL THEN d.attempts
        ELSE jsonb_path_query_array(d.attempts || jsonb_build_array(r.attempt),
          ${`$[last - ${KEPT_ATTEMPTS - 1} to last]`}::jsonpath) END,
      round_attempts = r.round_attempts, next_attempt_at = r.next_attempt_at,
      finished_at = r.finished_at, claim_id = NULL, leased_until = NULL, updated_at = ${now}
    FROM jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb) AS r(id text, claim_id text,
      status text, attempt jsonb, round_attempts int, next_attempt_at timestamptz,
      finished_at timestamptz), ${ASYNC_COMMIT}
    WHERE d.id = r.id AND d.claim_id = r.claim_id
    RETURNING CASE WHEN r.finished_at IS NOT NULL AND r.attempt IS NOT NULL
      THEN d.webhook_id END AS webhook_id`);
  return [...new Set(rows.map((x) => x.webhook_id).filter((x): x is string => x !== null))];
}

/**
 * Switches off each of `webhookIds` that has `threshold` deliveries `failed` or `stopped`
 * within the hour before `now` since it was last switched on (docs/webhooks.md, "Answers, retries
 * and statuses"); answers those switched off. The row lock of the UPDATE serialises two workers
 * deciding for one webhook.
 */
export async function deactivateFailing(
  exec: Executor,
  webhookIds: readonly string[],
  threshold: number,
  now: Date,
): Promise<string[]> {
  if (webhookIds.length === 0) return [];
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const { rows } = await exec.execute<{ id: string }>(sql`
    UPDATE webhooks w SET is_active = false, updated_at = ${now}
    WHERE w.id IN (SELECT jsonb_array_elements_text(${JSON.stringify(webhookIds)}::jsonb))
      AND w.is_active AND w.deleted_at IS NULL
      AND (SELECT count(*) FROM webhook_deliveries d
        WHERE d.webhook_id = w.id AND d.status IN ('failed', 'stopped')
          AND d.finished_at > ${hourAgo} AND d.finished_at >= w.active_since) >= ${threshold}
    RETURNING w.id`);
  return rows.map((r) => r.id);
}
