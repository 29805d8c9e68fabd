import path from 'node:path';
import type { Config } from '../config.js';
import { embeddedUrl, findRunning, startEmbedded } from '../db/embedded.js';

/**
 * The service's database URL for a command that must see it as it is (no migrations run):
 * DATABASE_URL's; else the embedded server a running service already has on DATA_DIR (found
 * through postmaster.pid); else an embedded server started on DATA_DIR for this command alone
 * (created there when DATA_DIR is new) and stopped after it.
 */
export async function withRawDatabaseUrl<T>(
  config: Config,
  fn: (url: string) => Promise<T>,
): Promise<T> {
  if (config.databaseUrl) return fn(config.databaseUrl);
  const running = await findRunning(path.join(config.dataDir, 'postgres'));
  if (running) return fn(await embeddedUrl(config.dataDir, running.port));
  const embedded = await startEmbedded(config.dataDir);
  try {
    return await fn(embedded.url);
  } finally {
    await embedded.stop();
  }
}
