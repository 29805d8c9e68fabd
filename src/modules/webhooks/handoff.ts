import type { Logger } from 'pino';
import type { Db } from '../../db/pool.js';
import { releaseHanded, type HandedDelivery } from './repo/claims.js';

export type { HandedDelivery };

/**
 * The fast lane from the event bus to this process's delivery worker (docs/webhooks.md,
 * "Delivery"). When a worker is attached, the outbox rows a group writes are already claimed
 * by it (a lease, as a claim would set), and once the group has committed they are handed
 * over in memory and sent at once: no claim query, no second write before the outcome. The
 * outbox stays the record: a process that dies holding handed deliveries leaves them due
 * again when their lease ends, and what the worker cannot take now (its room is full, or it
 * is stopping) is released here for any worker's next claim.
 */
export class DeliveryHandoff {
  private taker: ((deliveries: HandedDelivery[]) => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Whether a worker takes deliveries now: only then are rows written claimed. */
  get open(): boolean {
    return this.taker !== null;
  }

  attach(taker: (deliveries: HandedDelivery[]) => void): void {
    this.taker = taker;
  }

  detach(): void {
    this.taker = null;
  }

  /** Called once the group that wrote them has committed. */
  hand(deliveries: HandedDelivery[]): void {
    if (deliveries.length === 0) return;
    if (this.taker) this.taker(deliveries);
    else void this.release(deliveries);
  }

  /** Gives the claim up, so any worker's next claim takes them. Never throws. */
  async release(deliveries: readonly HandedDelivery[]): Promise<void> {
    try {
      await releaseHanded(this.db, deliveries);
    } catch (err) {
      // Not lost: their lease ends and they are due again then.
      this.logger.warn({ err, deliveries: deliveries.length }, 'could not release deliveries');
    }
  }
}
