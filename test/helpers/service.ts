import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.js';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { createLogger } from '../../src/http/logger.js';
import { FakeClock } from '../../src/lib/clock.js';
import { createService, type Service } from '../../src/server.js';
import type { App } from '../../src/http/app.js';
import type { Container } from '../../src/container.js';
import { freshDatabaseUrl } from './db.js';

export interface TestService extends Service {
  clock: FakeClock;
  config: Config;
  database: Database;
  /** Every log line written so far, parsed. */
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  /** Start time of the fake clock; defaults to the real now so JWTs and dates look real. */
  now?: Date | string;
  /** Routes only this test needs (registered after the real ones). */
  extraRoutes?: (app: App, container: Container) => void;
  /** Another instance on the database of this one (its config.databaseUrl); else a fresh one. */
  databaseUrl?: string;
}

/**
 * A whole service (every route, real PostgreSQL) on a fresh database, driven with
 * `app.inject`. The clock is fake: move it with `clock.advance(ms)`.
 */
export async function startTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  const url = opts.databaseUrl ?? (await freshDatabaseUrl());
  const config = loadConfig({
    PORT: '8080',
    DATA_DIR: '/tmp/ons-test-data',
    NETWORK_ID: 'ons-test',
    LOG_LEVEL: 'info',
    // Feature tests call faster than docs/api.md "Rate limits" allows one caller;
    // test/rate-limit/limits.test.ts turns the limits back on.
    RATE_LIMIT_ENABLED: 'false',
    // Tests read their own writes at once; test/objects/public-cache.test.ts turns the cache on.
    PUBLIC_LIST_CACHE_MS: '0',
    // Tests prove a sealed batch at once; test/batches/batches.test.ts checks the default's rest.
    BATCH_PROVE_DELAY_MS: '0',
    ...opts.env,
    DATABASE_URL: url,
  });
  const database = createDatabase(url, 10);
  const clock = new FakeClock(opts.now ?? new Date());
  const logs: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      cb();
    },
  });
  const logger = createLogger(config.logLevel, stream);
  let service: Service;
  try {
    service = await createService({ config, database, clock, logger }, opts.extraRoutes);
  } catch (err) {
    // A service that refuses to start (tests of start-up checks) leaves no pool open.
    await database.close();
    throw err;
  }
  await service.app.ready();
  return {
    ...service,
    clock,
    config,
    database,
    logs,
    async stop() {
      await service.close();
      await database.close();
    },
  };
}
