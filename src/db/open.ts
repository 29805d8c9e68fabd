import path from 'node:path';
import type { Config } from '../config.js';
import {
  embeddedUrl,
  findRunning,
  startEmbedded,
  type EmbeddedServer,
  type RestartOptions,
} from './embedded.js';
import { migrate } from './migrate.js';
import { createDatabase, type Database } from './pool.js';

export interface OpenedDatabase {
  database: Database;
  embedded: EmbeddedServer | null;
  applied: string[];
  /** Closes the pool, then stops the embedded server if this process started one. */
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * Without DATABASE_URL, use the embedded server another process (a service) already runs
   * on DATA_DIR, found through its postmaster.pid, before starting one (a worker beside it).
   */
  attachToRunning?: boolean;
}

/**
 * `DATABASE_URL` set → that server; unset → an embedded PostgreSQL in DATA_DIR/postgres,
 * restarted if it dies when `restart` is given (or, with `attachToRunning`, the one another
 * process runs there, which that process owns). Either way the migrations run before
 * anything else touches the database.
 */
export async function openDatabase(
  config: Config,
  log: (msg: string) => void = () => undefined,
  restart?: RestartOptions,
  options: OpenOptions = {},
): Promise<OpenedDatabase> {
  let url = config.databaseUrl;
  if (!url && options.attachToRunning) {
    const running = await findRunning(path.join(config.dataDir, 'postgres'));
    if (running) url = await embeddedUrl(config.dataDir, running.port);
  }
  const embedded = url ? null : await startEmbedded(config.dataDir, log, restart);
  url ??= embedded!.url;
  const database = createDatabase(url, config.dbPoolSize);
  try {
    const { applied } = await migrate(database.pool);
    return {
      database,
      embedded,
      applied,
      close: async () => {
        await database.close();
        await embedded?.stop();
      },
    };
  } catch (err) {
    await database.close();
    await embedded?.stop();
    throw err;
  }
}
