import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { BaseDeps } from './container.js';
import type { App } from './http/app.js';
import { errorHandler } from './http/errors.js';
import { registerMetrics } from './http/metrics.js';
import { registerNodeRefusals, serverOptions } from './http/server-options.js';
import { Code } from './lib/errors.js';
import { createBatches } from './modules/batches/wiring.js';
import { createLog } from './modules/log/wiring.js';
import { registerHealthRoutes } from './modules/health/routes.js';
import { Readiness } from './modules/health/service.js';
import { queueMetrics } from './queue-metrics.js';
import { IdempotencySweeper } from './modules/idempotency/index.js';
import { AuthSweeper } from './modules/auth/sweeper.js';
import { requireRecentSignInOrKey } from './modules/auth/recent-sign-in.js';
import { LowBalanceNotifier } from './modules/balance/low-balance.js';
import { createSender } from './modules/notify/sender.js';
import { registerOpenedKeysMetric, registerRetentionMetrics } from './modules/webhooks/metrics.js';
import { createWebhooks } from './modules/webhooks/wiring.js';
import { createWorkerNoticeListener } from './notices.js';
import { secureStoredSecrets } from './stored-secrets.js';
import { BatchSealerWorker } from './workers/batch-sealer.js';
import { WebhookDeliveryWorker } from './workers/webhook-delivery.js';

/** A process's HTTP server and its background loops, as src/run.ts starts and stops them. */
export interface RunningService {
  app: App;
  /** Readies what the loops start lazily (the batch header thread) before the process serves. */
  warm(): Promise<void>;
  startWorkers(): void;
  /** Stops the loops (what they hold in hand finishes first), then the HTTP server. */
  close(): Promise<void>;
}

/**
 * The worker role (ONS_ROLE=worker, `npm run worker`): the background loops and nothing of
 * the API. It runs the webhook delivery loop (unless WEBHOOK_DELIVERY=false) and the batch
 * sealer, which proves and anchors (unless BATCH_SEALER=false), sweeps expired idempotency
 * keys and prunes webhook deliveries past their retention; any number of workers may
 * share a database with any number of API processes: delivery claims never overlap, and one
 * sealer acts at a time under its advisory lock. Its HTTP server answers only /healthz,
 * /readyz and /metrics, for the orchestrator and Prometheus (docs/self-hosting.md, "Roles").
 */
export async function createWorkerService(deps: BaseDeps): Promise<RunningService> {
  const { config, database, clock, logger } = deps;
  // Before any key is read: sealed under SECRETS_KEY, or refused (src/stored-secrets.ts).
  await secureStoredSecrets(database.db, config, logger);
  // The worker serves no webhook management; the rule is wired as the API's is, all the same.
  const webhooks = createWebhooks({
    db: database.db,
    clock,
    config,
    logger,
    sessions: {
      requireRecentSignInOrKey: (exec, auth, action) =>
        requireRecentSignInOrKey(exec, clock, auth, action),
    },
  });
  const delivery = new WebhookDeliveryWorker(webhooks.runner, logger);
  // The delivery loop remembers the webhook keys it opens, which only SECRETS_KEY makes it
  // do: then it hears which ones another process rotated or deleted (src/notices.ts).
  const notices =
    config.webhooks.deliveryInProcess && webhooks.secrets.sealing
      ? createWorkerNoticeListener(database.url, webhooks.secrets, logger)
      : null;
  const batches = await createBatches({
    db: database.db,
    clock,
    config,
    logger,
    databaseUrl: database.url,
  });
  const log = await createLog({ db: database.db, clock, config, logger, leaves: batches.explorer });
  batches.sealer.setLog(log);
  const sealer = new BatchSealerWorker(batches.sealer, logger);
  const sweeper = new IdempotencySweeper(database.db, clock, logger);
  const authSweeper = new AuthSweeper(database.db, clock, config.sessions, logger);
  const lowBalance = new LowBalanceNotifier(
    database.db,
    clock,
    createSender(database.db, clock, logger, config.smtp),
    logger,
  );
  const readiness = new Readiness({
    db: database.db,
    redis: null,
    chainRpcUrl: config.anchor && config.batches.sealerInProcess ? config.anchor.rpcUrl : null,
  });

  const loggerInstance: FastifyBaseLogger = logger;
  const app: App = Fastify({
    ...serverOptions(config.http),
    loggerInstance,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setErrorHandler(errorHandler);
  registerNodeRefusals(app);
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({
      code: Code.NOT_FOUND,
      message: `no route ${req.method} ${req.url.split('?')[0]} (a worker answers only /healthz, /readyz and /metrics)`,
    }),
  );
  registerMetrics(app, database.pool, [
    ...queueMetrics({ db: database.db, clock, config }),
    (registry) => registerRetentionMetrics(registry, webhooks.retention),
    (registry) => registerOpenedKeysMetric(registry, webhooks.secrets),
  ]);
  registerHealthRoutes(app, readiness);

  await notices?.start();
  let started = false;
  return {
    app,
    async warm() {
      if (config.batches.sealerInProcess) await batches.sealer.warm();
    },
    startWorkers() {
      if (started) return;
      started = true;
      if (config.webhooks.deliveryInProcess) delivery.start();
      if (config.batches.sealerInProcess) sealer.start();
      sweeper.start();
      authSweeper.start();
      webhooks.retention.start();
      lowBalance.start();
      logger.info(
        {
          webhookDelivery: config.webhooks.deliveryInProcess,
          batchSealer: config.batches.sealerInProcess,
        },
        'worker loops started',
      );
    },
    async close() {
      await Promise.all([
        delivery.stop(),
        sealer.stop(),
        sweeper.stop(),
        authSweeper.stop(),
        webhooks.retention.stop(),
        lowBalance.stop(),
        notices?.stop(),
      ]);
      await log.settled();
      await batches.close();
      await webhooks.client.close();
      await app.close();
    },
  };
}
