import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTracing, stopTracing } from '../../src/lib/tracing.js';
import { startCollector, type Collector } from '../helpers/otlp-collector.js';

/**
 * `flush()` answers once every span ended so far has reached the collector, including those
 * an export started by the processor's own timer is still carrying. (The trace tests read the
 * collector right after a flush; a flush that did not wait for that export made them fail on
 * a loaded machine.) The collector here holds each export 400 ms, so the timer's export is
 * surely in flight when the flush starts.
 */
let collector: Collector;

beforeAll(async () => {
  collector = await startCollector({ holdMs: 400 });
});
afterAll(async () => {
  await stopTracing();
  await collector.close();
});

it('waits for the export the timer already started', async () => {
  const t = await startTracing({
    endpoint: collector.url,
    exporterHeaders: {},
    serviceName: 'ons-flush-test',
    sampleRatio: 1,
    exportDelayMs: 10,
    role: 'all',
  });
  const { span } = t.startRequest('GET', '/batches', 'req-flush-1', undefined);
  span.end();
  // The timer's export has left; the collector holds it.
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(collector.spans).toHaveLength(0);
  await t.flush();
  expect(collector.spans.map((s) => s.attributes['ons.request_id'])).toEqual(['req-flush-1']);
});
