import type { Logger } from 'pino';
import { Pause, type Worker } from '../lib/worker.js';
import {
  DeliveryRunner,
  type ClaimedDelivery,
  type Outcome,
} from '../modules/webhooks/delivery-runner.js';
import type { DeliveryHandoff, HandedDelivery } from '../modules/webhooks/handoff.js';

export interface DeliveryWorkerOptions {
  /** Attempts in flight at once in this process. */
  maxInFlight?: number;
  /** Attempts in flight at once per webhook: a hanging receiver holds at most this many. */
  perWebhook?: number;
  /**
   * Attempts in flight at once per organization, across its webhooks: an organization whose
   * every receiver hangs holds at most this many, well below `maxInFlight`, so the others
   * always find room.
   */
  perOrganization?: number;
  /** Most deliveries claimed by one query. */
  batch?: number;
  /** How often an idle worker looks for due deliveries. */
  idlePollMs?: number;
  /** How long outcomes wait to be written together. */
  flushMs?: number;
  /** Attempts that end before the loop claims again (sooner when nothing is in flight). */
  claimEvery?: number;
  /**
   * Takes, while running, the deliveries this process's groups write, and sends them at once
   * (src/modules/webhooks/handoff.ts).
   */
  handoff?: DeliveryHandoff;
}

/**
 * The delivery loop (docs/webhooks.md, "Where deliveries are sent from"): claims due deliveries
 * while it has room, sends each without waiting for the others, and writes outcomes in batches.
 * Runs in the API process (src/container.ts) or alone (`npm run worker`, src/worker.ts); any number
 * of them share the outbox safely.
 */
export class WebhookDeliveryWorker implements Worker {
  readonly name = 'webhook-delivery';
  private readonly maxInFlight: number;
  private readonly perWebhook: number;
  private readonly perOrganization: number;
  private readonly batch: number;
  private readonly idlePollMs: number;
  private readonly flushMs: number;
  private readonly claimEvery: number;
  /** Attempts ended since the last claim. */
  private ended = 0;
  /** Attempts in flight by webhook, and by organization. */
  private readonly inFlight = new Map<string, number>();
  private readonly inFlightByOrg = new Map<string, number>();
  private readonly sending = new Set<Promise<void>>();
  /** Handed deliveries being looked at (take). */
  private readonly taking = new Set<Promise<void>>();
  private outcomes: Outcome[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new Pause();
  private readonly handoff: DeliveryHandoff | null;

  constructor(
    private readonly runner: DeliveryRunner,
    private readonly logger: Logger,
    opts: DeliveryWorkerOptions = {},
  ) {
    this.handoff = opts.handoff ?? null;
    this.maxInFlight = opts.maxInFlight ?? 256;
    this.perWebhook = opts.perWebhook ?? 64;
    this.perOrganization = opts.perOrganization ?? 64;
    this.batch = opts.batch ?? 200;
    this.idlePollMs = opts.idlePollMs ?? 100;
    this.flushMs = opts.flushMs ?? 20;
    this.claimEvery = opts.claimEvery ?? 16;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.handoff?.attach((handed) => {
      const taking = this.take(handed).finally(() => this.taking.delete(taking));
      this.taking.add(taking);
    });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.handoff?.detach();
    this.running = false;
    this.pause.wake();
    await this.loop;
    await Promise.all(this.taking);
    await Promise.all(this.sending);
    await this.flush();
  }

  /**
   * Sends everything due now and waits for it, outcomes written (tests drive time with a
   * fake clock and call this instead of starting the loop).
   */
  async runOnce(): Promise<void> {
    for (;;) {
      const claimed = await this.pump();
      if (claimed === 0 && this.sending.size === 0) break;
      if (claimed === 0) await Promise.race(this.sending);
    }
    await this.flush();
  }

  private get busy(): number {
    return this.sending.size;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.pump();
      } catch (err) {
        this.logger.error({ err }, 'could not claim webhook deliveries; will retry');
      }
      // Attempts that ended while the claim ran found no sleeper to wake: claim again now.
      const endedMeanwhile = this.ended >= this.claimEvery || (claimed > 0 && this.busy === 0);
      if ((claimed === 0 || this.busy >= this.maxInFlight) && !endedMeanwhile && this.running) {
        await this.pause.wait(this.idlePollMs);
      }
    }
  }

  /** Claims what fits and starts sending it; answers how many were claimed. */
  private async pump(): Promise<number> {
    const room = this.maxInFlight - this.busy;
    if (room <= 0) return 0;
    const rooms = new Map<string, number>();
    for (const [id, n] of this.inFlight) rooms.set(id, this.perWebhook - n);
    const orgRooms = new Map<string, number>();
    for (const [id, n] of this.inFlightByOrg) orgRooms.set(id, this.perOrganization - n);
    this.ended = 0;
    const claimed = await this.runner.claim(Math.min(room, this.batch), {
      rooms,
      perWebhook: this.perWebhook,
      orgRooms,
      perOrganization: this.perOrganization,
    });
    for (const d of claimed) this.send(d);
    return claimed.length;
  }

  /**
   * Sends handed deliveries now, within the same limits as claimed ones; what does not fit
   * (or finds the worker stopping) is released for a later claim. Never throws.
   */
  private async take(handed: HandedDelivery[]): Promise<void> {
    const handoff = this.handoff!;
    const left = new Set(handed.map((d) => d.id));
    for (const d of DeliveryRunner.ready(handed)) {
      const used = this.inFlight.get(d.webhook_id) ?? 0;
      const usedByOrg = this.inFlightByOrg.get(d.organization_id) ?? 0;
      if (
        !this.running ||
        this.busy >= this.maxInFlight ||
        used >= this.perWebhook ||
        usedByOrg >= this.perOrganization
      ) {
        continue;
      }
      left.delete(d.id);
      this.send(d, false);
    }
    if (left.size > 0) await handoff.release(handed.filter((d) => left.has(d.id)));
  }

  /** `claimed`: it came from a claim, so its end counts towards claiming again. */
  private send(d: ClaimedDelivery, claimed = true): void {
    count(this.inFlight, d.webhook_id, 1);
    count(this.inFlightByOrg, d.organization_id, 1);
    const p = this.runner.attempt(d).then((outcome) => {
      this.outcomes.push(outcome);
      this.scheduleFlush();
    });
    const done = p.finally(() => {
      count(this.inFlight, d.webhook_id, -1);
      count(this.inFlightByOrg, d.organization_id, -1);
      this.sending.delete(done);
      // Claiming after every single attempt would cost a query per delivery; handed ones
      // leave room for the next handed ones, not for a claim.
      if (claimed && (++this.ended >= this.claimEvery || this.sending.size === 0)) {
        this.pause.wake();
      }
    });
    this.sending.add(done);
  }

  private scheduleFlush(): void {
    if (this.flushTimer || !this.running) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, this.flushMs);
  }

  /** Writes the outcomes collected. A failed write keeps them for the next one. */
  private async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const next = this.flushing.then(async () => {
      if (this.outcomes.length === 0) return;
      const batch = this.outcomes;
      this.outcomes = [];
      try {
        await this.runner.record(batch);
      } catch (err) {
        // Not lost either way: unrecorded deliveries are due again when their lease ends.
        this.logger.error({ err, outcomes: batch.length }, 'could not record webhook outcomes');
        this.outcomes.push(...batch);
        this.scheduleFlush();
      }
    });
    this.flushing = next;
    await next;
  }
}

/** Adds `by` to `key`'s count, dropping a count that reaches zero. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}
