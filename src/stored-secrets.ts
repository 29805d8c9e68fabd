import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/pool.js';
import { sealStoredSecrets, type SecretTable } from './db/sealed-columns.js';
import { SecretSealer } from './lib/sealed-secret.js';
import { signingKeySecrets } from './modules/auth/token-service.js';
import { batchSecrets } from './modules/batches/wiring.js';
import { logSecrets } from './modules/log/wiring.js';
import { webhookSecrets } from './modules/webhooks/keys.js';

/**
 * Every column that keeps a secret, each read and written by its table's owner
 * (docs/architecture.md, "Tables and their owners"): the access-token keys, the webhooks'
 * keys, the batch and salt keys, the log key's seed.
 */
export const SECRET_TABLES: readonly SecretTable[] = [
  signingKeySecrets,
  webhookSecrets,
  ...batchSecrets,
  logSecrets,
];

/**
 * Run by every process at start, before any module reads a key (src/container.ts,
 * src/worker-service.ts): with SECRETS_KEY set, seals the clear values and seals again those
 * sealed under a key of SECRETS_KEY_PREVIOUS (logging counts only); without it, checks that
 * nothing is sealed. A sealed value no key given opens stops the start with a message naming
 * the setting (src/db/sealed-columns.ts).
 */
export async function secureStoredSecrets(
  db: Db,
  config: Pick<Config, 'secrets'>,
  logger: Logger,
): Promise<void> {
  const counts = await sealStoredSecrets(db, new SecretSealer(config.secrets), SECRET_TABLES);
  for (const [table, c] of Object.entries(counts)) {
    if (c.sealed + c.resealed > 0) {
      logger.info({ table, ...c }, 'stored secrets sealed under SECRETS_KEY');
    }
  }
}

/**
 * Whether the stored secrets open with the keys given (a restore's check, src/cli/backup.ts):
 * nothing is written; throws the first SealedSecretError.
 */
export async function checkStoredSecrets(db: Db, config: Pick<Config, 'secrets'>): Promise<void> {
  await sealStoredSecrets(db, new SecretSealer(config.secrets), SECRET_TABLES, false);
}
