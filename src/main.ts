import { loadConfig } from './config.js';
import { openDatabase } from './db/open.js';
import { createLogger } from './http/logger.js';
import { systemClock } from './lib/clock.js';
import { createService } from './server.js';

/** Composition root: config → database → services → HTTP + workers; clean shutdown. */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const opened = await openDatabase(config, (m) => logger.debug({ postgres: m }));
  if (opened.embedded) logger.info({ port: opened.embedded.port }, 'embedded PostgreSQL started');
  logger.info({ applied: opened.applied }, 'migrations up to date');

  const service = await createService({
    config,
    database: opened.database,
    clock: systemClock,
    logger,
  });
  await service.app.listen({ port: config.port, host: config.host });
  service.startWorkers();

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 15_000);
    force.unref();
    void (async () => {
      try {
        await service.close();
        await opened.close();
        logger.info('stopped');
        process.exit(0);
      } catch (err) {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      }
    })();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
