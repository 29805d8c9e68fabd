import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db, Executor } from '../../db/pool.js';
import type { SecretTable } from '../../db/sealed-columns.js';
import type { Clock } from '../../lib/clock.js';
import { SecretSealer } from '../../lib/sealed-secret.js';
import type { ApplyHooks, BatchSizeSource } from '../ebus/index.js';
import { HeaderPool } from './header-pool.js';
import { SealedLeaves } from './sealed-leaves.js';
import { Ed25519Prover, rawPublicKey, type Prover } from './prover.js';
import { recentAverageSize } from './repo/batches.js';
import { batchJoin } from './repo/join.js';
import {
  BATCH_KEY,
  batchKeys,
  ensureBatchKey,
  ensureSaltKey,
  SALT_KEY,
  saltKeys,
  storeBatchKeys,
  storeSaltKeys,
} from './repo/keys.js';
import type { Anchor } from './anchor/anchor.js';
import { createViemAnchor } from './anchor/viem-anchor.js';
import { BatchSealer } from './sealer.js';
import { BatchExplorer } from './service.js';

export interface Batches {
  /** The event bus's join: every applied action joins the building batch. */
  hook: ApplyHooks;
  /** The recent average batch size, for the fee's proving part. */
  sizes: BatchSizeSource;
  explorer: BatchExplorer;
  sealer: BatchSealer;
  /** The batch key's raw Ed25519 public key, 0x + hex (`GET /public/network`). */
  publicKey: string;
  /** Releases the chain client (on shutdown). */
  close(): Promise<void>;
}

export interface BatchWiring {
  db: Db;
  /** Where the explorer's anonymous reads run (the public reads' pool); `db` when absent. */
  publicDb?: Executor;
  clock: Clock;
  config: Pick<Config, 'batches' | 'anchor' | 'secrets'>;
  logger: Logger;
  /** The chain client; by default made from ANCHOR_* (docs/anchoring.md), null when off. */
  anchor?: Anchor | null;
  /** Replaces the default Ed25519 attestation (a zero-knowledge prover, a test's). */
  prover?: Prover;
  /**
   * The database's connection string: the header thread then reads each sealed batch's
   * actions on a connection of its own (header-pool.ts); without it they are read here.
   */
  databaseUrl?: string;
}

/** The batch key and the salt key, for the start-up pass (src/stored-secrets.ts). */
export const batchSecrets: SecretTable[] = [
  {
    table: 'batch_keys',
    columns: [{ name: BATCH_KEY, read: batchKeys, store: storeBatchKeys }],
  },
  {
    table: 'batch_salt_keys',
    columns: [{ name: SALT_KEY, read: saltKeys, store: storeSaltKeys }],
  },
];

/**
 * Builds the batches feature. The first instance to start makes the batch key; every
 * instance signs with that one (repo/keys.ts). Both keys are stored sealed under SECRETS_KEY
 * when it is set (src/lib/sealed-secret.ts); a stored key that does not open stops the start
 * and is never replaced.
 */
export async function createBatches(w: BatchWiring): Promise<Batches> {
  const secrets = new SecretSealer(w.config.secrets);
  const batchKeyAt = { column: BATCH_KEY, row: 'current' };
  const saltKeyAt = { column: SALT_KEY, row: 'current' };
  const { privateKey } = generateKeyPairSync('ed25519');
  const stored = await ensureBatchKey(w.db, {
    privateKeyPem: secrets.sealText(
      privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      batchKeyAt,
    ),
    publicKey: rawPublicKey(privateKey),
    now: w.clock.now(),
  });
  const attestation = new Ed25519Prover(secrets.openText(stored, batchKeyAt));
  const saltKey = secrets.openText(
    await ensureSaltKey(w.db, {
      secret: secrets.sealText(randomBytes(32).toString('hex'), saltKeyAt),
      now: w.clock.now(),
    }),
    saltKeyAt,
  );
  const anchor =
    w.anchor !== undefined ? w.anchor : w.config.anchor ? createViemAnchor(w.config.anchor) : null;
  // The leaves the header thread computes, kept for the log's append (sealed-leaves.ts).
  const sealedLeaves = new SealedLeaves();
  const headers = new HeaderPool(w.logger, {
    leaves: sealedLeaves,
    ...(w.databaseUrl ? { databaseUrl: w.databaseUrl } : {}),
    priority: w.config.batches.headerPriority,
  });
  const sealer = new BatchSealer({
    headers,
    db: w.db,
    clock: w.clock,
    config: w.config,
    prover: w.prover ?? attestation,
    anchor,
    logger: w.logger,
    saltKey,
  });
  return {
    hook: w.config.batches.enabled ? { writes: () => [], batchJoin } : { writes: () => [] },
    sizes: { recentAverageBatchSize: (window) => recentAverageSize(w.db, window) },
    explorer: new BatchExplorer(
      w.db,
      w.logger,
      Buffer.from(saltKey, 'hex'),
      w.publicDb ?? w.db,
      sealedLeaves,
      w.clock,
    ),
    sealer,
    publicKey: attestation.publicKey,
    close: async () => {
      await headers.close();
      await anchor?.close?.();
    },
  };
}
