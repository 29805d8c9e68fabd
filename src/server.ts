import type { Registry } from 'prom-client';
import { buildApp, routeTableOf, type App, type RouteEntry } from './http/app.js';
import { registerPoolGauge } from './http/metrics.js';
import { createContainer, type BaseDeps, type Container } from './container.js';
import { registerEbusMetrics } from './modules/ebus/metrics.js';
import { registerOpenedKeysMetric, registerRetentionMetrics } from './modules/webhooks/metrics.js';
import { queueMetrics } from './queue-metrics.js';
import { registerRoutes } from './routes.js';
import { registerRevocationMetrics } from './revocations.js';

export interface Service {
  app: App;
  container: Container;
  /** Readies what the loops start lazily (the batch header thread) before the process serves. */
  warm(): Promise<void>;
  startWorkers(): void;
  /** Every registered route with its declared auth and permission. */
  routeTable(): RouteEntry[];
  /** Stops workers, then the HTTP server (in-flight requests finish first). */
  close(): Promise<void>;
}

/** The service without I/O setup: used by main.ts and by the integration tests. */
export async function createService(
  deps: BaseDeps,
  extraRoutes?: (app: App, container: Container) => void,
): Promise<Service> {
  const container = await createContainer(deps);
  const app = await buildApp({
    logger: deps.logger,
    bodyLimitBytes: deps.config.bodyLimitBytes,
    timeouts: deps.config.http,
    publicUrl: deps.config.publicUrl,
    consoleDir: deps.config.consoleDir,
    verifiers: container.verifiers,
    pool: deps.database.pool,
    metrics: [
      (registry) =>
        registerEbusMetrics(
          registry,
          container.ebus.committer.stats,
          () => container.ebus.committer.depth,
        ),
      ...queueMetrics({ db: container.db, clock: deps.clock, config: deps.config }),
      (registry) => registerOpenedKeysMetric(registry, container.webhooks.secrets),
      // Where the retention loop runs (not in an API-only process).
      ...(deps.config.role === 'api'
        ? []
        : [
            (registry: Registry) =>
              registerRetentionMetrics(registry, container.webhooks.retention),
          ]),
      (registry) =>
        registerPoolGauge(
          registry,
          container.publicDatabase.pool,
          'db_public_pool_connections',
          'Connections of the anonymous public reads pool by state',
        ),
      (registry) =>
        registerPoolGauge(
          registry,
          container.reportsDatabase.pool,
          'db_reports_pool_connections',
          "Connections of the reports pool (members' reads that grow with an organization's data) by state",
        ),
      (registry) => registerRevocationMetrics(registry, container.notices),
    ],
    trustProxy: deps.config.trustProxy,
    v2: { sunset: deps.config.v2Sunset, clock: deps.clock },
    rateLimit: deps.config.rateLimits.enabled
      ? {
          limiter: container.rateLimiter,
          defaults: {
            perMinute: deps.config.rateLimits.defaultPerMinute,
            perSecond: deps.config.rateLimits.defaultPerSecond,
          },
          anonymous: {
            perMinute: deps.config.rateLimits.anonymousPerMinute,
            perSecond: deps.config.rateLimits.anonymousPerSecond,
          },
        }
      : null,
    routes: (a) => {
      registerRoutes(a, container);
      extraRoutes?.(a, container);
    },
  });
  let started = false;
  return {
    app,
    container,
    async warm() {
      if (container.config.batches.sealerInProcess) await container.batches.sealer.warm();
    },
    startWorkers() {
      if (started) return;
      started = true;
      for (const w of container.workers) w.start();
    },
    routeTable: () => routeTableOf(app),
    async close() {
      // In-flight requests finish first (they may still need the workers, e.g. the event
      // bus committer or the last-used recorder), for at most SHUTDOWN_GRACE_MS: then their
      // connections are closed (a handler still running finishes unanswered). Then the
      // workers drain and stop.
      const cut = setTimeout(() => app.server.closeAllConnections(), deps.config.shutdownGraceMs);
      cut.unref();
      await app.close();
      clearTimeout(cut);
      await container.identity.accounts.notices.idle();
      await Promise.all(container.workers.map((w) => w.stop()));
      await container.rateLimitStore.close();
    },
  };
}
