import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import type { Executor } from './db/pool.js';
import type { Clock } from './lib/clock.js';
import { registerBatchMetrics } from './modules/batches/metrics.js';
import { registerOutboxMetrics } from './modules/webhooks/metrics.js';

/**
 * The database-wide queues on /metrics (docs/self-hosting.md, "Metrics"), reported by the
 * processes that work them: the webhook outbox where the delivery loop runs
 * (WEBHOOK_DELIVERY), the batches where the sealer runs (BATCH_SEALER) — so an `api`
 * process reports neither, and `all` and `worker` processes report them by default. Every
 * reporting process shows the same figures (aggregate with max, not sum). The group-commit
 * queue is each API process's own (ebus/metrics.ts).
 */
export function queueMetrics(deps: {
  db: Executor;
  clock: Clock;
  config: Config;
}): ((registry: Registry) => void)[] {
  const { db, clock, config } = deps;
  const out: ((registry: Registry) => void)[] = [];
  if (config.webhooks.deliveryInProcess) out.push((r) => registerOutboxMetrics(r, db, clock));
  if (config.batches.sealerInProcess) out.push((r) => registerBatchMetrics(r, db, clock));
  return out;
}
