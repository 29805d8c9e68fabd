import type { App } from './types.js';
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics, one registry per app so tests can run several side by side. */
export function registerMetrics(
  app: App,
  pool: pg.Pool,
  more: readonly ((registry: Registry) => void)[] = [],
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const add of more) add(registry);
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });

  // Share of time the event loop was busy since the previous scrape (0–1): the figure that
  // says when one process is the bottleneck, which CPU time does not.
  let lastElu = performance.eventLoopUtilization();
  new Gauge({
    name: 'nodejs_eventloop_utilization',
    help: 'Event loop utilization since the previous scrape',
    registers: [registry],
    collect() {
      const now = performance.eventLoopUtilization();
      this.set(performance.eventLoopUtilization(now, lastElu).utilization);
      lastElu = now;
    },
  });

  app.addHook('onResponse', (req, reply, done) => {
    const labels = {
      method: req.method,
      route: req.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => {
    void reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  return registry;
}
