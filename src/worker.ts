import { loadConfig } from './config.js';
import { withCliDatabase } from './cli/database.js';
import { createLogger } from './http/logger.js';
import { systemClock } from './lib/clock.js';
import { createWebhooks } from './modules/webhooks/wiring.js';
import { WebhookDeliveryWorker } from './workers/webhook-delivery.js';
import { createBatches } from './modules/batches/wiring.js';
import { BatchSealerWorker } from './workers/batch-sealer.js';

/**
 * `npm run worker`: the webhook delivery loop and the batch sealer, no HTTP (design.md §9).
 * It shares the outbox with the API processes (which deliver too unless
 * WEBHOOK_DELIVERY=false): claims never overlap; and the batch pipeline (which they run too
 * unless BATCH_SEALER=false): one process acts at a time. The database is DATABASE_URL's, else the embedded server a running service
 * has on DATA_DIR, else one started for this process.
 */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  await withCliDatabase(config, async (database) => {
    const webhooks = createWebhooks({ db: database.db, clock: systemClock, config, logger });
    const worker = new WebhookDeliveryWorker(webhooks.runner, logger);
    const batches = await createBatches({
      db: database.db,
      clock: systemClock,
      config,
      logger,
      databaseUrl: database.url,
    });
    const sealer = new BatchSealerWorker(batches.sealer, logger);
    worker.start();
    sealer.start();
    logger.info('webhook delivery worker and batch sealer started');
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        logger.info({ signal }, 'stopping webhook delivery worker');
        resolve();
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    await Promise.all([worker.stop(), sealer.stop()]);
    await batches.close();
    await webhooks.client.close();
    logger.info('stopped');
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
