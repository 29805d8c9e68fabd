import { Counter, Gauge, type Registry } from 'prom-client';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretSealer } from '../../lib/sealed-secret.js';
import { ageSeconds, sharedReading } from '../../lib/shared-reading.js';
import { outboxDepth } from './repo/depth.js';
import type { DeliveryRetention } from './retention.js';
import type { DeliveryStatus } from './schema.js';

/** The statuses /metrics shows: the queue, and the deliveries that ended without success. */
const SHOWN: readonly DeliveryStatus[] = ['pending', 'retrying', 'failed', 'stopped'];

/**
 * The webhook outbox on /metrics, read from the database at scrape time (one statement,
 * repo/depth.ts): the same figures from every process that reports them (src/queue-metrics.ts
 * says which). If the database does not answer, the series are left out of that scrape.
 */
export function registerOutboxMetrics(registry: Registry, db: Executor, clock: Clock): void {
  const read = sharedReading(() => outboxDepth(db));
  new Gauge({
    name: 'ons_webhook_outbox_deliveries',
    help: 'Webhook deliveries queued (pending, retrying) or ended failed or stopped, by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      const depth = await read().catch(() => null);
      if (!depth) return;
      for (const status of SHOWN) this.set({ status }, depth.counts.get(status) ?? 0);
    },
  });
  new Gauge({
    name: 'ons_webhook_outbox_oldest_pending_seconds',
    help: 'How long the longest-waiting pending delivery has been due (0: none pending)',
    registers: [registry],
    async collect() {
      this.reset();
      const depth = await read().catch(() => null);
      if (depth) this.set(ageSeconds(clock.now(), depth.oldestPendingDue));
    },
  });
}

/**
 * The webhook keys this process holds opened (only with SECRETS_KEY set; sealed-secret.ts):
 * a rotated or deleted webhook's keys leave it at once, in every process, through the notice
 * src/notices.ts listens for. A figure that stays up after a rotation means a process that
 * does not hear.
 */
export function registerOpenedKeysMetric(
  registry: Registry,
  secrets: Pick<SecretSealer, 'openedCount'>,
): void {
  new Gauge({
    name: 'ons_webhook_keys_opened',
    help: 'Webhook signing keys this process holds opened (SECRETS_KEY set), forgotten when rotated or deleted',
    registers: [registry],
    collect() {
      this.set(secrets.openedCount);
    },
  });
}

/**
 * The deliveries this process has deleted past their retention (retention.ts), on /metrics
 * where the retention loop runs (the `all` and `worker` roles): each process counts its own,
 * so sum them.
 */
export function registerRetentionMetrics(
  registry: Registry,
  retention: Pick<DeliveryRetention, 'pruned'>,
): void {
  new Counter({
    name: 'ons_webhook_deliveries_pruned_total',
    help: 'Webhook deliveries deleted past WEBHOOK_DELIVERY_RETENTION_DAYS by this process since it started',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(retention.pruned);
    },
  });
}
