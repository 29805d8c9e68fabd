import path from 'node:path';
import type { Config } from '../config.js';
import { embeddedUrl, findRunning } from '../db/embedded.js';
import { openDatabase } from '../db/open.js';
import { migrate } from '../db/migrate.js';
import { createDatabase, type Database } from '../db/pool.js';

/**
 * The database for an operator command: DATABASE_URL's; else the embedded server a running
 * service already has on DATA_DIR (found through postmaster.pid); else an embedded server
 * started for this command alone and stopped after it.
 */
export async function withCliDatabase<T>(
  config: Config,
  fn: (database: Database) => Promise<T>,
): Promise<T> {
  if (!config.databaseUrl) {
    const running = await findRunning(path.join(config.dataDir, 'postgres'));
    if (running) {
      const database = createDatabase(await embeddedUrl(config.dataDir, running.port), 2);
      try {
        await migrate(database.pool);
        return await fn(database);
      } finally {
        await database.close();
      }
    }
  }
  const opened = await openDatabase({ ...config, dbPoolSize: 2 });
  try {
    return await fn(opened.database);
  } finally {
    await opened.close();
  }
}
