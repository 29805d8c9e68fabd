import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, failedPrecondition, invalid, notFound } from '../../lib/errors.js';
import { pageOf, parseList } from '../../lib/list.js';
import { requireOrg, requirePermission, type AuthContext } from '../../lib/permissions.js';
import { requireDeliveryReads } from './reach.js';
import * as deliveries from './repo/deliveries.js';
import type { DeliveryRow } from './repo/deliveries.js';
import { findWebhook } from './repo/webhooks.js';
import type {
  Delivery,
  DeliveryList,
  ListEventsQuery,
  ListOrganizationEventsQuery,
  ReplayInput,
} from './schema.js';

/**
 * Replay covers at most this range and this many deliveries per call (docs/webhooks.md, "The
 * delivery log, redelivery and replay").
 */
export const MAX_REPLAY_RANGE_MS = 31 * 24 * 3_600_000;
export const MAX_REPLAY_DELIVERIES = 10_000;
/** Deliveries one organization may queue again by replays per UTC day (two full replays). */
export const REPLAY_DELIVERIES_PER_DAY = 2 * MAX_REPLAY_DELIVERIES;

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    action_id: row.action_id,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    when_created: row.created_at.toISOString(),
  };
}

/** A webhook's deliveries: the log, redelivery of one, replay of a time range. */
export class DeliveryLogService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Deliveries with their attempts, newest first by default (list conventions). */
  async list(auth: AuthContext, webhookId: string, query: ListEventsQuery): Promise<DeliveryList> {
    requirePermission(auth, 'webhooks.read');
    const orgId = await this.webhookOf(auth, webhookId);
    const page = parseList(query, deliveries.DELIVERY_LIST);
    const rows = await deliveries.listDeliveries(
      this.db,
      orgId,
      webhookId,
      page,
      query,
      query.status,
    );
    const out = pageOf(
      rows,
      page,
      (r) => r.created_at,
      (r) => r.id,
    );
    return { events: out.items.map(toDelivery), next: out.next, has_more: out.has_more };
  }

  /**
   * The deliveries of all the organization's webhooks (not deleted ones), newest first by
   * default; `status=open` lists those not delivered yet or that ended without delivery.
   */
  async listForOrganization(
    auth: AuthContext,
    query: ListOrganizationEventsQuery,
  ): Promise<DeliveryList> {
    requirePermission(auth, 'webhooks.read');
    const orgId = requireOrg(auth);
    const page = parseList(query, deliveries.DELIVERY_LIST);
    const statuses =
      query.status === undefined
        ? undefined
        : query.status === 'open'
          ? deliveries.OPEN_STATUSES
          : [query.status];
    const rows = await deliveries.listOrganizationDeliveries(this.db, orgId, page, query, statuses);
    const out = pageOf(
      rows,
      page,
      (r) => r.created_at,
      (r) => r.id,
    );
    return { events: out.items.map(toDelivery), next: out.next, has_more: out.has_more };
  }

  /**
   * Queues one new attempt of a `failed` or `stopped` delivery, with the same event id;
   * any other status is 400 code 9. The webhook must be active: an inactive one gets
   * nothing (docs/webhooks.md, "Answers, retries and statuses"), so it is switched on first.
   */
  async redeliver(auth: AuthContext, webhookId: string, eventId: string): Promise<Delivery> {
    requirePermission(auth, 'webhooks.update');
    requireDeliveryReads(auth);
    const orgId = await this.webhookOf(auth, webhookId, true);
    const now = this.clock.now();
    const row = await deliveries.requeueFinished(this.db, orgId, webhookId, eventId, now);
    if (row) return toDelivery(row);
    const found = await deliveries.findDelivery(this.db, orgId, webhookId, eventId);
    if (!found) throw notFound('event');
    throw failedPrecondition(
      `only a failed or stopped delivery can be redelivered; this one is ${found.status}`,
    );
  }

  /**
   * Queues again every delivery created in [since, until) that is in a final state (done,
   * failed, stopped), once: those queued are not final until attempted, so calling again
   * for the same range meanwhile adds none. More than MAX_REPLAY_DELIVERIES → 400 code 3;
   * past REPLAY_DELIVERIES_PER_DAY for the organization that UTC day → 429 code 8, nothing
   * queued (a replay sends to any public address: its volume is bounded).
   */
  async replay(
    auth: AuthContext,
    webhookId: string,
    input: ReplayInput,
  ): Promise<{ queued: number }> {
    requirePermission(auth, 'webhooks.update');
    requireDeliveryReads(auth);
    const orgId = await this.webhookOf(auth, webhookId, true);
    const since = new Date(input.since);
    const until = new Date(input.until);
    if (until.getTime() <= since.getTime()) {
      throw invalid('until must be after since', [
        { field: 'until', reason: 'must be after since' },
      ]);
    }
    if (until.getTime() - since.getTime() > MAX_REPLAY_RANGE_MS) {
      throw invalid('a replay covers at most 31 days', [
        { field: 'until', reason: 'must be at most 31 days after since' },
      ]);
    }
    const now = this.clock.now();
    const n = await this.db.transaction(async (tx) => {
      const queued = await deliveries.requeueRange(
        tx,
        orgId,
        webhookId,
        since,
        until,
        MAX_REPLAY_DELIVERIES,
        now,
      );
      // Counted with the requeue: a replay past the day's budget queues nothing.
      if (queued > 0 && queued <= MAX_REPLAY_DELIVERIES) {
        const day = now.toISOString().slice(0, 10);
        if (!(await deliveries.addReplayUsage(tx, orgId, day, queued, REPLAY_DELIVERIES_PER_DAY))) {
          throw new AppError(
            Code.RESOURCE_EXHAUSTED,
            `replays may queue at most ${REPLAY_DELIVERIES_PER_DAY} deliveries per organization and UTC day; this one holds ${queued}`,
            { replay_deliveries_per_day: REPLAY_DELIVERIES_PER_DAY, deliveries: queued },
          );
        }
      }
      return queued;
    });
    if (n > MAX_REPLAY_DELIVERIES) {
      throw invalid(`more than ${MAX_REPLAY_DELIVERIES} deliveries in the range; narrow it`, [
        { field: 'until', reason: `the range holds more than ${MAX_REPLAY_DELIVERIES} deliveries` },
      ]);
    }
    return { queued: n };
  }

  /** The caller's organization, once the webhook is known to be its own (else 404). */
  private async webhookOf(
    auth: AuthContext,
    webhookId: string,
    mustBeActive = false,
  ): Promise<string> {
    const orgId = requireOrg(auth);
    const webhook = await findWebhook(this.db, orgId, webhookId);
    if (!webhook) throw notFound('webhook');
    if (mustBeActive && !webhook.is_active) {
      throw failedPrecondition('the webhook is inactive; set is_active to true first');
    }
    return orgId;
  }
}
