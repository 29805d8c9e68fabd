import { Gauge, type Registry } from 'prom-client';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { ageSeconds, sharedReading } from '../../lib/shared-reading.js';
import { batchDepth, type BatchDepth } from './repo/depth.js';

/**
 * The batch pipeline on /metrics, read from the database at scrape time (one statement,
 * repo/depth.ts): the same figures from every process that reports them (src/queue-metrics.ts
 * says which). If the database does not answer, the series are left out of that scrape.
 */
export function registerBatchMetrics(registry: Registry, db: Executor, clock: Clock): void {
  const read = sharedReading(() => batchDepth(db));
  const gauge = (name: string, help: string, value: (d: BatchDepth) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.reset();
        const depth = await read().catch(() => null);
        if (depth) this.set(value(depth));
      },
    });
  gauge('ons_batches_unsealed', 'Batches building (open to actions)', (d) => d.unsealed);
  gauge(
    'ons_batches_unproven',
    'Sealed batches whose header and proof are not written yet (proving)',
    (d) => d.unproven,
  );
  gauge(
    'ons_batch_oldest_unproven_seconds',
    'How long ago the oldest unproven batch sealed (0: none)',
    (d) => ageSeconds(clock.now(), d.oldestUnprovenSealedAt),
  );
}
