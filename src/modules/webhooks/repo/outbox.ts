import { sql, type SQL } from 'drizzle-orm';

/** One applied action as the outbox statement reads it. */
export interface OutboxAction {
  /** action id */
  a: string;
  /** paying organization */
  o: string;
  /** template id */
  t: string;
  /** action name */
  n: string;
  /** signer address, lowercase */
  w: string;
  /** when_created of the action: the delivery's too */
  c: string;
  /** delivery ids to use, one per webhook the organization may hold */
  ids: string[];
  /** the action as applied, as JSON without `batch_id` and without its closing brace */
  ea: string;
  /** the object as applied, as JSON */
  eo: string;
  /** the W3C traceparent of the request that sent the action (tracing on only) */
  tp?: string;
}

/** A delivery as {@link handedRows} reads it back. */
export interface HandedRow {
  id: string;
  webhook_id: string;
  action_id: string;
  url: string;
  /** hex */
  signing_key: string;
  previous_key: string | null;
}

/**
 * Reads back the rows `outboxInsert` wrote claimed (the group statement's `readBack`, `rows`
 * its CTE): each with its webhook's address and keys as the statement sees them — the
 * webhook is active there, since the insert matched it — and the previous key while it
 * still signs (24 h after a rotation, counted from the delivery's time). One JSON array.
 */
export function handedRows(rows: SQL): SQL {
  return sql`
    SELECT json_agg(json_build_object('id', h.id, 'webhook_id', h.webhook_id,
      'action_id', h.action_id, 'url', w.url, 'signing_key', encode(w.signing_key, 'hex'),
      'previous_key', CASE WHEN w.previous_key_until > h.created_at
        THEN encode(w.previous_signing_key, 'hex') END))
    FROM ${rows} h JOIN webhooks w ON w.id = h.webhook_id`;
}

/**
 * Between the events' texts in the statement's two text parameters: a character that JSON text
 * as `JSON.stringify` writes it never holds (it writes every character below U+0020 inside a
 * string as an escape), so splitting on it gives back each text whole.
 */
const EVENT_SEPARATOR = '\u0001';

/**
 * The outbox rows of a group (docs/webhooks.md, "What is sent"): one delivery per applied action
 * per active webhook of its organization with a matching rule. Rules are ORed (EXISTS over them),
 * the fields of a rule ANDed, an empty list matches all; a webhook matching through two rules
 * still gets one row. A data-modifying statement with RETURNING, for the group statement's
 * CTEs (src/modules/ebus/hooks.ts). The event is text put together from the JSON the
 * service wrote (nothing is parsed), so its bytes are the body's; the action's `batch_id`
 * comes from the group statement's `logs` rows (the batch it joined). With `claim`, the rows
 * are written claimed by it (as claimDue would), for this process's worker to send at once,
 * and due only when that claim's lease ends.
 * `trace_parent` is the action's `tp` (NULL with tracing off): the trace its delivery continues.
 *
 * The actions' JSON texts (`ea`, `eo`) travel as two plain text parameters, joined by
 * EVENT_SEPARATOR, not inside the JSON array of the rest: inside it each would be escaped as a
 * JSON string by the service and taken apart character by character by PostgreSQL's JSON
 * parser, which cost more than the rest of the row (docs/performance.md, "Wave 3, session 18").
 */
export function outboxInsert(
  actions: readonly OutboxAction[],
  claim: { id: string; leaseMs: number } | null,
): SQL {
  const leasedUntil = claim
    ? sql`r.c + ${`${claim.leaseMs} milliseconds`}::interval`
    : sql`NULL::timestamptz`;
  // A claimed row is due when its lease ends (should its process die holding it), not before:
  // the due index's range up to now then never holds the deliveries in flight, so a claim's
  // scan does not walk past them (releaseHanded makes a released one due at once).
  const nextAttempt = claim ? leasedUntil : sql`r.c`;
  const rows = actions.map(({ ea: _ea, eo: _eo, ...row }, i) => ({ ...row, i: i + 1 }));
  const ea = actions.map((x) => x.ea).join(EVENT_SEPARATOR);
  const eo = actions.map((x) => x.eo).join(EVENT_SEPARATOR);
  return sql`
    INSERT INTO webhook_deliveries (id, organization_id, webhook_id, action_id, event, status,
      next_attempt_at, leased_until, claim_id, created_at, updated_at, trace_parent)
    SELECT r.ids ->> (m.n - 1)::int, r.o, m.webhook_id, r.a,
      '{"action":' || e.ea || ',"batch_id":' || coalesce(to_json(l.batch_id)::text, 'null')
        || '},"object":' || e.eo || '}',
      'pending', ${nextAttempt}, ${leasedUntil}, ${claim?.id ?? null}::text, r.c, r.c, r.tp
    FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS r(i bigint, a text, o text, t text, n text, w text, c timestamptz, ids json, tp text)
    JOIN unnest(string_to_array(${ea}::text, ${EVENT_SEPARATOR}::text),
        string_to_array(${eo}::text, ${EVENT_SEPARATOR}::text))
      WITH ORDINALITY AS e(ea, eo, i) ON e.i = r.i
    JOIN logs l ON l.id = r.a
    CROSS JOIN LATERAL (
      SELECT wh.id AS webhook_id, row_number() OVER (ORDER BY wh.id) AS n
      FROM webhooks wh
      WHERE wh.organization_id = r.o AND wh.is_active AND wh.deleted_at IS NULL
        AND EXISTS (
          SELECT 1 FROM jsonb_array_elements(wh.rules) x
          WHERE x ->> 'template_id' = r.t
            AND (x -> 'actions' = '[]'::jsonb OR x -> 'actions' ? r.n)
            AND (x -> 'addresses' = '[]'::jsonb OR x -> 'addresses' ? r.w))
    ) m
    RETURNING id, webhook_id, action_id, created_at`;
}

/** Which of these organizations have an active webhook (rows `organization_id`). */
export function withActiveWebhooks(orgIds: readonly string[]): SQL {
  return sql`
    SELECT DISTINCT wh.organization_id FROM webhooks wh
    WHERE wh.organization_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(orgIds)}::jsonb))
      AND wh.is_active AND wh.deleted_at IS NULL`;
}

/**
 * A group statement's guard (ebus hooks): none of these organizations has an active webhook
 * in the statement's snapshot, so leaving their actions out of the outbox lost nothing.
 */
export function noActiveWebhooks(orgIds: readonly string[]): SQL {
  return sql`NOT EXISTS (${withActiveWebhooks(orgIds)})`;
}
