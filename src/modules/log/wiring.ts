import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { NoteSigner, privateKeyOfSeed } from './note.js';
import { ensureLogKey } from './repo.js';
import { LogService, type LeafSource } from './service.js';
import { parseWitnesses, type WitnessConfig } from './witness.js';

export interface LogWiring {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'log' | 'networkId'>;
  logger: Logger;
  /** The batches feature's leaves of a sealed batch. */
  leaves: LeafSource;
  /** Replaces LOG_WITNESSES (tests). */
  witnesses?: WitnessConfig[];
}

/**
 * Builds the transparency log. Its key is LOG_SIGNING_KEY when set, else the one the first
 * instance to start made and stored (every instance signs with the same key).
 */
export async function createLog(w: LogWiring): Promise<LogService> {
  const seed =
    w.config.log.signingKey ??
    (await ensureLogKey(w.db, randomBytes(32).toString('hex'), w.clock.now()));
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
  });
}
