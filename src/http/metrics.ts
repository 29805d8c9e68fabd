import type { App } from './types.js';
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** How long one rendering of /metrics is reused (ms). */
export const METRICS_REUSE_MS = 1000;

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
  registerPoolGauge(registry, pool, 'db_pool_connections', 'Database pool connections by state');

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

  // Public, and counted against the anonymous per-address limit like any anonymous call. The
  // text is rendered at most once a second and shared by every caller in that second, so
  // its cost stays bounded however many addresses ask (Prometheus scrapes every 15 s or so).
  let rendered: { at: number; text: Promise<string> } | null = null;
  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => {
    void reply.header('content-type', registry.contentType);
    const now = performance.now();
    if (!rendered || now - rendered.at >= METRICS_REUSE_MS) {
      rendered = { at: now, text: registry.metrics() };
      rendered.text.catch(() => (rendered = null));
    }
    return rendered.text;
  });
  return registry;
}

/** A pool's connections by state (`total`, `idle`) and the queries `waiting` for one. */
export function registerPoolGauge(registry: Registry, pool: pg.Pool, name: string, help: string) {
  new Gauge({
    name,
    help,
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
}
