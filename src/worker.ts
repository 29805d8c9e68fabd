import { loadConfig } from './config.js';
import { withCliDatabase } from './cli/database.js';
import { createLogger } from './http/logger.js';
import { systemClock } from './lib/clock.js';
import { createWebhooks } from './modules/webhooks/wiring.js';
import { WebhookDeliveryWorker } from './workers/webhook-delivery.js';

/**
 * `npm run worker`: the webhook delivery loop alone, no HTTP (design.md §9). It shares the
 * outbox with the API processes (which deliver too unless WEBHOOK_DELIVERY=false): claims
 * never overlap. The database is DATABASE_URL's, else the embedded server a running service
 * has on DATA_DIR, else one started for this process.
 */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  await withCliDatabase(config, async (database) => {
    const webhooks = createWebhooks({ db: database.db, clock: systemClock, config, logger });
    const worker = new WebhookDeliveryWorker(webhooks.runner, logger);
    worker.start();
    logger.info('webhook delivery worker started');
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        logger.info({ signal }, 'stopping webhook delivery worker');
        resolve();
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    await worker.stop();
    await webhooks.client.close();
    logger.info('stopped');
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
