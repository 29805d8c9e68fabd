import type { Config } from '../config.js';
import { startEmbedded, type EmbeddedServer, type RestartOptions } from './embedded.js';
import { migrate } from './migrate.js';
import { createDatabase, type Database } from './pool.js';

export interface OpenedDatabase {
  database: Database;
  embedded: EmbeddedServer | null;
  applied: string[];
  /** Closes the pool, then stops the embedded server if this process started one. */
  close(): Promise<void>;
}

/**
 * `DATABASE_URL` set → that server; unset → an embedded PostgreSQL in DATA_DIR/postgres,
 * restarted if it dies when `restart` is given. Either way the migrations run before
 * anything else touches the database.
 */
export async function openDatabase(
  config: Config,
  log: (msg: string) => void = () => undefined,
  restart?: RestartOptions,
): Promise<OpenedDatabase> {
  const embedded = config.databaseUrl ? null : await startEmbedded(config.dataDir, log, restart);
  const url = config.databaseUrl ?? embedded!.url;
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
