import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { RecoverPool } from '../../lib/crypto/recover-pool.js';
import { createDatabase, type Db } from '../../db/pool.js';
import { preparedRows } from '../../db/prepared.js';
import type { Clock } from '../../lib/clock.js';
import type { PolicyStates } from '../policies/index.js';
import { objectRules } from '../objects/index.js';
import { GroupApplier } from './apply-group.js';
import { FeeService, noBatchesYet, type BatchSizeSource } from './fees.js';
import { GroupCommitter } from './group-commit.js';
import { noHooks, type ApplyHooks } from './hooks.js';
import { EbusService, type NetworkLog } from './service.js';
import { GroupStateCache } from './state-cache.js';
import { SignatureVerifier } from './verify.js';

export interface Ebus {
  service: EbusService;
  committer: GroupCommitter;
  fees: FeeService;
  /** The signature verifier's memory of EOA signers (their memberships), to empty it. */
  signers: Pick<SignatureVerifier, 'forgetAll'>;
  /** Closes the signature-recovery thread and the group statements' connections (after a drain). */
  close(): Promise<void>;
}

export interface EbusWiring {
  db: Db;
  /**
   * The database `db` opens: the optimistic group statements run as named prepared statements
   * on connections of their own to it (`EBUS_MAX_CONCURRENT_GROUPS` +
   * `EBUS_MAX_STALLED_GROUPS` + 1, opened when first needed, each planning them
   * once: src/db/pool.ts, `genericPlans`).
   */
  databaseUrl: string;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Filled in by batches and webhooks (issue 7, acceptance 9). */
  hooks?: ApplyHooks;
  /** Supplied by the batches feature; without it fees assume full batches. */
  batchSizes?: BatchSizeSource;
  /** The batch key's public key, published in `GET /public/network`. */
  batchPublicKey?: string;
  /** Spend policies, checked with each action's fee and balance (docs/policies.md). */
  policies?: PolicyStates;
  /** The transparency log's keys, published in `GET /public/network`. */
  log?: NetworkLog;
}

/**
 * Builds the event bus: fees, signature verifier, the group applier, the group committer
 * that feeds it and the service that feeds the committer.
 */
export function createEbus(w: EbusWiring): Ebus {
  const fees = new FeeService(w.config, w.clock, w.batchSizes ?? noBatchesYet);
  const { ebus } = w.config;
  const groupDatabase = createDatabase(
    w.databaseUrl,
    ebus.maxConcurrentGroups + ebus.maxStalledGroups + 1,
    { genericPlans: true },
  );
  const applier = new GroupApplier({
    db: w.db,
    prepared: preparedRows(groupDatabase.pool),
    clock: w.clock,
    fees,
    hooks: w.hooks ?? noHooks,
    logger: w.logger,
    rules: objectRules,
    cache: new GroupStateCache(),
    ...(w.policies ? { policies: w.policies } : {}),
  });
  const committer = new GroupCommitter(applier, {
    maxWaitMs: ebus.groupWaitMs,
    maxGroup: ebus.maxGroup,
    maxConcurrent: ebus.maxConcurrentGroups,
    stallMs: ebus.groupStallMs,
    maxStalled: ebus.maxStalledGroups,
  });
  const recoverPool = w.config.ebus.recoveryThread ? new RecoverPool() : null;
  const verifier = new SignatureVerifier(w.db, w.config.webauthn, recoverPool);
  const service = new EbusService({
    db: w.db,
    clock: w.clock,
    config: w.config,
    fees,
    verifier,
    committer,
    logger: w.logger,
    batchPublicKey: w.batchPublicKey ?? '',
    ...(w.log ? { log: w.log } : {}),
  });
  const close = async () => {
    await recoverPool?.close();
    await groupDatabase.close();
  };
  return { service, committer, fees, signers: verifier, close };
}
