import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db, Executor } from '../../db/pool.js';
import type { SecretTable } from '../../db/sealed-columns.js';
import type { Clock } from '../../lib/clock.js';
import { SecretSealer } from '../../lib/sealed-secret.js';
import { NoteSigner, privateKeyOfSeed } from './note.js';
import { ensureLogKey, LOG_SEED, logSeeds, storeLogSeeds } from './repo.js';
import { LogService, type LeafSource } from './service.js';
import { parseWitnesses, type WitnessConfig } from './witness.js';

export interface LogWiring {
  db: Db;
  /** Where the anonymous reads run (the public reads' pool); `db` when absent. */
  publicDb?: Executor;
  clock: Clock;
  config: Pick<Config, 'log' | 'networkId' | 'secrets'>;
  logger: Logger;
  /** The batches feature's leaves of a sealed batch. */
  leaves: LeafSource;
  /** Replaces LOG_WITNESSES (tests). */
  witnesses?: WitnessConfig[];
}

/** The log key's seed, for the start-up pass (src/stored-secrets.ts). */
export const logSecrets: SecretTable = {
  table: 'log_keys',
  columns: [{ name: LOG_SEED, read: logSeeds, store: storeLogSeeds }],
};

/**
 * Builds the transparency log. Its key is LOG_SIGNING_KEY when set, else the one the first
 * instance to start made and stored (every instance signs with the same key), sealed under
 * SECRETS_KEY when that is set (src/lib/sealed-secret.ts).
 */
export async function createLog(w: LogWiring): Promise<LogService> {
  const seed = w.config.log.signingKey ?? (await storedSeed(w));
  const signer = new NoteSigner(w.config.log.origin, privateKeyOfSeed(Buffer.from(seed, 'hex')));
  return new LogService({
    db: w.db,
    clock: w.clock,
    logger: w.logger,
    signer,
    witnesses: w.witnesses ?? parseWitnesses(w.config.log.witnesses),
    witnessRefreshMs: w.config.log.witnessRefreshSeconds * 1000,
    leaves: w.leaves,
    network: w.config.networkId,
    ...(w.publicDb ? { publicDb: w.publicDb } : {}),
  });
}

/** The stored seed (hex), made by the first instance to start; opened when sealed. */
async function storedSeed(w: LogWiring): Promise<string> {
  const secrets = new SecretSealer(w.config.secrets);
  const at = { column: LOG_SEED, row: 'current' };
  const candidate = secrets.sealText(randomBytes(32).toString('hex'), at);
  return secrets.openText(await ensureLogKey(w.db, candidate, w.clock.now()), at);
}
