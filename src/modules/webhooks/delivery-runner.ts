import type { Logger } from 'pino';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { SealedSecretError, type SecretSealer } from '../../lib/sealed-secret.js';
import { tracing } from '../../lib/tracing.js';
import type { DeliveryClient } from './http-client/delivery-client.js';
import {
  claimDue,
  deactivateFailing,
  recordOutcomes,
  type ClaimedDelivery,
  type ClaimRequest,
  type HandedDelivery,
  type Outcome,
} from './repo/claims.js';
import { failQueued } from './repo/deliveries.js';
import { previousKeyAt, signingKeyAt } from './keys.js';

export type { ClaimedDelivery, Outcome };
import { signatureHeader } from './signing/sign.js';

/** What a claim may still start per webhook and per organization (see claimDue). */
export type ClaimRooms = Pick<
  ClaimRequest,
  'rooms' | 'perWebhook' | 'orgRooms' | 'perOrganization'
>;

/**
 * Waits before the second, third and fourth attempt (docs/webhooks.md, "Answers, retries and
 * statuses").
 */
export const RETRY_DELAYS_MS = [2 * 60_000, 4 * 60_000, 8 * 60_000] as const;
/** ± this share of each wait, so receivers coming back are not hit by every retry at once. */
export const RETRY_JITTER = 0.1;
/**
 * Failed or stopped deliveries within a rolling hour that switch a webhook off (docs/webhooks.md,
 * "Answers, retries and statuses").
 */
export const DEACTIVATE_AFTER = 3;
/**
 * The wait before trying again a delivery this process could not send for its own reasons
 * (its host lookups were busy: PostResult.busy), ± RETRY_JITTER. Such a try is no attempt: it
 * is not recorded and does not count towards `failed` or switching off (docs/webhooks.md).
 */
export const BUSY_RETRY_MS = 30_000;
/** How long a claim lasts: well beyond one attempt's 10 s. */
export const LEASE_MS = 60_000;

export const EVENT_TYPE = 'action.executed';

/**
 * The body of a delivery (docs/webhooks.md, "What is sent"), the same bytes on every attempt: what
 * `JSON.stringify({id, type, event, when_created})` writes, with the stored event text put in
 * as it is (it is the JSON the service wrote, so it is not parsed and written out again).
 */
export function deliveryBody(d: Pick<ClaimedDelivery, 'id' | 'event' | 'created_at'>): string {
  return `{"id":${JSON.stringify(d.id)},"type":"${EVENT_TYPE}","event":${d.event},"when_created":"${d.created_at.toISOString()}"}`;
}

/**
 * One delivery attempt at a time, for the worker loop (src/workers/webhook-delivery.ts),
 * which decides how many run at once: claim due deliveries, send one, record outcomes.
 */
export class DeliveryRunner {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly client: DeliveryClient,
    private readonly logger: Logger,
    /** Opens the webhooks' keys as stored (src/lib/sealed-secret.ts), remembering them. */
    private readonly secrets: SecretSealer,
    private readonly random: () => number = Math.random,
  ) {}

  /** Due deliveries for this worker, within each webhook's and organization's room (claimDue). */
  async claim(limit: number, rooms: ClaimRooms): Promise<ClaimedDelivery[]> {
    const now = this.clock.now();
    const claimed = await claimDue(this.db, {
      now,
      leaseUntil: new Date(now.getTime() + LEASE_MS),
      claimId: newId('event'),
      limit,
      ...rooms,
    });
    // A webhook whose key does not open holds up its own deliveries only (they stay leased
    // and come due again); the start-up pass opened every key, so only a value written since
    // by something else gets here.
    return claimed.filter((d) => {
      try {
        d.signing_key = this.secrets.openKey(d.signing_key, signingKeyAt(d.webhook_id));
        if (d.previous_key) {
          d.previous_key = this.secrets.openKey(d.previous_key, previousKeyAt(d.webhook_id));
        }
        return true;
      } catch (err) {
        if (!(err instanceof SealedSecretError)) throw err;
        this.logger.error(
          { webhook_id: d.webhook_id, delivery_id: d.id, reason: err.message },
          'a webhook signing key does not open: its delivery waits',
        );
        return false;
      }
    });
  }

  /** Handed deliveries (handoff.ts) as claimed ones: first attempts of live webhooks. */
  static ready(handed: readonly HandedDelivery[]): ClaimedDelivery[] {
    return handed.map((d) => ({ ...d, status: 'pending' as const, round_attempts: 0, live: true }));
  }

  /**
   * Sends one claimed delivery and answers what to record. Never throws. With tracing on,
   * the attempt is a span continuing the trace its outbox row names (src/lib/tracing.ts).
   */
  async attempt(d: ClaimedDelivery): Promise<Outcome> {
    const t = tracing();
    if (!t) return this.send(d);
    const span = t.startDelivery(d.trace_parent, {
      'ons.webhook_id': d.webhook_id,
      'ons.delivery_id': d.id,
      'ons.delivery.attempt': d.round_attempts + 1,
    });
    const outcome = await this.send(d);
    span.set({
      'ons.delivery.status': outcome.status,
      ...(outcome.attempt?.status_code != null
        ? { 'http.response.status_code': outcome.attempt.status_code }
        : {}),
    });
    span.end(outcome.attempt?.error ? new Error(outcome.attempt.error) : undefined);
    return outcome;
  }

  private async send(d: ClaimedDelivery): Promise<Outcome> {
    if (!d.live) {
      // Switched off or deleted after it was queued: nothing is sent (docs/webhooks.md).
      return {
        id: d.id,
        claim_id: d.claim_id,
        status: 'failed',
        attempt: null,
        round_attempts: d.round_attempts,
        next_attempt_at: null,
        finished_at: this.clock.now().toISOString(),
      };
    }
    const body = deliveryBody(d);
    const sentAt = this.clock.now();
    const keys = d.previous_key ? [d.signing_key, d.previous_key] : [d.signing_key];
    const result = await this.client.post(
      d.url,
      {
        'content-type': 'application/json',
        'user-agent': 'ons-webhooks/1',
        'x-webhook-id': d.webhook_id,
        'x-event-id': d.id,
        'x-webhook-signature': signatureHeader(keys, Math.floor(sentAt.getTime() / 1000), body),
      },
      body,
    );
    const now = this.clock.now();
    if (result.busy) {
      // Not the receiver's doing: the delivery keeps its status and its count, due again soon.
      const wait = BUSY_RETRY_MS * (1 + RETRY_JITTER * (2 * this.random() - 1));
      return {
        id: d.id,
        claim_id: d.claim_id,
        status: d.status,
        attempt: null,
        round_attempts: d.round_attempts,
        next_attempt_at: new Date(now.getTime() + Math.round(wait)).toISOString(),
        finished_at: null,
      };
    }
    const round = d.round_attempts + 1;
    const attempt = {
      when_created: sentAt.toISOString(),
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      error: result.error,
    };
    const base = { id: d.id, claim_id: d.claim_id, attempt, round_attempts: round };
    if (result.error === null) {
      return { ...base, status: 'done', next_attempt_at: null, finished_at: null };
    }
    if (result.statusCode === 410) {
      return { ...base, status: 'stopped', next_attempt_at: null, finished_at: now.toISOString() };
    }
    const wait = RETRY_DELAYS_MS[round - 1];
    if (wait === undefined) {
      return { ...base, status: 'failed', next_attempt_at: null, finished_at: now.toISOString() };
    }
    const jittered = wait * (1 + RETRY_JITTER * (2 * this.random() - 1));
    return {
      ...base,
      status: 'retrying',
      next_attempt_at: new Date(now.getTime() + Math.round(jittered)).toISOString(),
      finished_at: null,
    };
  }

  /**
   * Writes outcomes in one statement (a transaction of its own), then, when some delivery
   * failed for good, switches off the webhooks that reached DEACTIVATE_AFTER final failures
   * within the hour, failing what they had queued. Should the process stop in between, the
   * next final failure of that webhook counts the same failures again and switches it off.
   */
  async record(outcomes: readonly Outcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const now = this.clock.now();
    const failing = await recordOutcomes(this.db, outcomes, now);
    if (failing.length === 0) return;
    await this.db.transaction(async (tx) => {
      const off = await deactivateFailing(tx, failing, DEACTIVATE_AFTER, now);
      if (off.length > 0) {
        await failQueued(tx, off, now);
        this.logger.warn({ webhooks: off }, 'webhooks switched off after repeated failures');
      }
    });
  }
}
