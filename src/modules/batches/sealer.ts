import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { batchActions } from '../ebus/index.js';
import type { Anchor } from './anchor/anchor.js';
import { ipfsUrl } from './formulas.js';
import { computeHeader, type HeaderRequest } from './header.js';
import type { HeaderPool } from './header-pool.js';
import type { Prover } from './prover.js';
import * as repo from './repo/batches.js';
import { SEALER_LOCK } from './repo/join.js';
import { VisibilitySweep } from './view-sweep.js';
import { hiddenOf, viewBytes } from './views.js';

export interface SealerDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'batches'>;
  prover: Prover;
  anchor: Anchor | null;
  logger: Logger;
  /** Computes headers off the event loop; inline without it. */
  headers?: HeaderPool;
  /** The batch salt key, hex (repo/keys.ts): private actions' salts come from it. */
  saltKey: string;
}

/** What follows a written header: the transparency log's append (src/modules/log). */
export interface SealedBatchListener {
  /** Takes in every batch whose header is written; answers whether it did anything. */
  append(): Promise<boolean>;
}

/** How long closing a batch may wait for the groups that joined it. */
const JOIN_WAIT_MS = 250;
/** Attempts of one step (proving, anchoring) before the batch is `failed`. */
const MAX_ATTEMPTS = 10;
/** How long a process holds an anchoring batch while it talks to the chain. */
const ANCHOR_LEASE_MS = 60_000;
/** How often an idle sealer lets the transparency log look for batches to append. */
const LOG_LOOK_MS = 500;
/** How often a posted anchor is looked at until it is final. */
const ANCHOR_POLL_MS = 2_000;

/** 1 s, 2 s, 4 s … at most 5 minutes, ±20 %. */
export function backoffMs(attempt: number): number {
  const base = Math.min(300_000, 1_000 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

const isLockTimeout = (err: unknown): boolean => {
  const e = err as { code?: string; cause?: { code?: string } };
  return (e.code ?? e.cause?.code) === '55P03';
};

/**
 * The batch pipeline (docs/batches.md, "Life of a batch"): opens the building batch, seals it at
 * `BATCH_MAX_ACTIONS` or `BATCH_MAX_SECONDS` after its first action, writes each sealed
 * batch's header, content and proof in chain order, anchors it when anchoring is on, and
 * finalizes it once its challenge window has passed. Every step takes the sealer's advisory
 * lock, so any number of processes run it and one acts at a time; every step is one
 * transaction, so a crash leaves the previous state, which the next tick takes up again.
 */
export class BatchSealer {
  private log: SealedBatchListener | null = null;
  /** When the log was last asked to look (real time: an idle pass costs it two queries). */
  private logLookedAt = 0;
  /** Brings sealed batches' contents up to date with templates' visibility switches. */
  private readonly views: VisibilitySweep;

  constructor(private readonly deps: SealerDeps) {
    this.views = new VisibilitySweep({
      db: deps.db,
      clock: deps.clock,
      logger: deps.logger,
      saltKey: Buffer.from(deps.saltKey, 'hex'),
    });
  }

  /**
   * Starts the header thread now, and waits until it has loaded its code, rather than at the
   * first seal: a process that seals does so before its first requests (src/run.ts), so the
   * thread's start never competes with them.
   */
  async warm(): Promise<void> {
    await this.deps.headers?.threadInfo();
  }

  /** The transparency log: appended to right after each pass that writes headers. */
  setLog(log: SealedBatchListener): void {
    this.log = log;
  }

  /** One pass of every step; answers whether it did anything (the worker then goes on). */
  async tick(): Promise<boolean> {
    const closed = await this.openOrSeal();
    return (await this.advance()) || closed;
  }

  /**
   * The steps after the close: header and proof, anchoring, finality. The worker runs them
   * beside {@link openOrSeal}, never in front of it: a header (computed at a low priority)
   * does not hold up the close of the next batch. Answers whether it did anything.
   */
  async advance(): Promise<boolean> {
    let busy = (await this.proveSealed()) > 0;
    // Right after a pass that wrote headers; else every LOG_LOOK_MS (a header written by a
    // pass whose proof failed, another process's, or batches to back-fill).
    if (this.log && (busy || Date.now() - this.logLookedAt >= LOG_LOOK_MS)) {
      this.logLookedAt = Date.now();
      busy = (await this.log.append()) || busy;
    }
    busy = (await this.republishSealed()) > 0 || busy;
    busy = (await this.views.pass()) > 0 || busy;
    if (this.deps.anchor) busy = (await this.anchorProven()) > 0 || busy;
    busy =
      (await repo.finalizeDue(this.deps.db, this.deps.clock.now(), !!this.deps.anchor)) > 0 || busy;
    return busy;
  }

  /** Opens a building batch when none is open, seals the open one when it is due. */
  async openOrSeal(): Promise<boolean> {
    const building = await repo.buildingState(this.deps.db);
    if (building !== null && !this.due(building)) return false;
    try {
      return await this.deps.db.transaction((tx) => this.switchBatch(tx));
    } catch (err) {
      // Groups held the join lock too long (or waited on a lock this step holds): try later.
      if (isLockTimeout(err)) return false;
      throw err;
    }
  }

  private due({ batch, nextSeq, firstActionAt }: repo.BuildingState): boolean {
    if (nextSeq >= batch.seq_start + batch.capacity) return true;
    const { clock, config } = this.deps;
    return (
      firstActionAt !== null &&
      clock.now().getTime() - firstActionAt.getTime() >= config.batches.maxSeconds * 1000
    );
  }

  /**
   * Seals the building batch if it has actions and opens the next one, whose numbers start
   * where the sealed batch's ended (or at the next number, if it closed early). A batch is
   * closed only once no group that joined it is still open:
   * - full (every number of its range handed out): no new group can take one of its numbers,
   *   so this waits only for the groups that were already open then, and joins go on;
   * - closing early: the join lock is held exclusively, which waits for open groups and holds
   *   new ones off for the few milliseconds the switch takes.
   */
  private async switchBatch(tx: Executor): Promise<boolean> {
    const { clock, config } = this.deps;
    if (!(await repo.tryLock(tx, SEALER_LOCK))) return false;
    let b = await repo.findBuilding(tx);
    let next = await repo.nextSeq(tx);
    if (b !== null && next >= b.seq_start + b.capacity) {
      // Numbers are taken after the join lock: a group holding one of this batch's numbers
      // holds the lock and began before now.
      if (!(await repo.joinsSettled(tx, JOIN_WAIT_MS))) return false;
    } else {
      await repo.holdJoins(tx, JOIN_WAIT_MS);
      b = await repo.findBuilding(tx);
      next = await repo.nextSeq(tx);
    }
    const now = clock.now();
    if (b === null) {
      const seqStart = (await repo.lowestUnbatched(tx)) ?? next;
      await this.open(tx, newId('batch', now.getTime()), seqStart, config.batches.maxActions, now);
      return true;
    }
    const end = b.seq_start + b.capacity;
    const nextCapacity = b.next_capacity ?? config.batches.maxActions;
    // Actions of its range logged while no batch was open (at a first start) join it now.
    await repo.adoptWaiting(tx, b.id, b.seq_start, b.capacity);
    const totals = await repo.memberTotals(tx, b.id);
    if (totals.count === 0) {
      // Every number it handed out was rolled back: nothing to seal, start it again, over
      // the numbers of the batch named to follow it too (whose actions it takes).
      if (next < end) return false;
      const seqStart = Math.min(end, (await repo.lowestUnbatched(tx)) ?? next);
      await repo.restartEmpty(tx, b.id, b.next_id, {
        seqStart,
        capacity: end + nextCapacity - seqStart,
        nextId: newId('batch', now.getTime()),
        nextCapacity: config.batches.maxActions,
        now,
      });
      return true;
    }
    const windowEnd = new Date(now.getTime() + config.batches.challengeWindowSeconds * 1000);
    await repo.markSealed(tx, b.id, {
      now,
      windowEnd,
      count: totals.count,
      feeWei: totals.feeWei,
    });
    // The next batch takes the id and size named when this one opened: actions numbered past
    // this one's end may have joined it already. Its own successor is named now.
    const id = b.next_id ?? newId('batch', now.getTime());
    await this.open(tx, id, Math.min(end, next), nextCapacity, now);
    return true;
  }

  private async open(tx: Executor, id: string, seqStart: number, capacity: number, now: Date) {
    await repo.openBatch(tx, {
      id,
      sequence: (await repo.lastSequence(tx)) + 1,
      seqStart,
      capacity,
      nextId: newId('batch', now.getTime()),
      nextCapacity: this.deps.config.batches.maxActions,
      now,
    });
  }

  /**
   * Writes the header, content and proof of every sealed batch still `proving`, in chain
   * order (each header names the previous one's hash). Answers how many became `proven`.
   *
   * A header and its proof are computed outside any transaction and lock: a sealed batch's
   * actions and its predecessor's header no longer change, and a header takes tens of
   * milliseconds (more at the header thread's low priority on a busy machine), which the
   * close of the next batch must not wait for. Only the writes take the sealer's lock; if
   * another process wrote them meanwhile, nothing is written twice.
   */
  async proveSealed(): Promise<number> {
    const { db, clock, prover, logger } = this.deps;
    // A sealed batch's rows rest first (BATCH_PROVE_DELAY_MS): read at once, the
    // just-committed rows of a batch cost the event bus ~4 % of its throughput; read seconds
    // later, nothing measurable (docs/performance.md, "Transaction batches", session 9).
    const restedBy = new Date(clock.now().getTime() - this.deps.config.batches.proveDelayMs);
    // Most passes find nothing: a look costs one query.
    if (!(await repo.hasProvingWork(db, clock.now(), restedBy))) return 0;
    let proven = 0;
    for (const b of await repo.unprovenBatches(db, restedBy)) {
      if (b.next_attempt_at !== null && b.next_attempt_at > clock.now()) break;
      const prev = b.sequence > 1 ? await repo.findBySequence(db, b.sequence - 1) : null;
      if (b.sequence > 1 && (prev === null || prev.hash === null)) break;
      const header = b.hash === null ? await this.header(db, b, prev) : null;
      let proof: Awaited<ReturnType<Prover['prove']>> | null = null;
      let failure: Error | null = null;
      try {
        proof = await prover.prove(header?.commitment ?? b.commitment!);
      } catch (err) {
        failure = err as Error;
        logger.error({ err, batch: b.id }, 'proving a batch failed; will retry');
      }
      // The header is written either way: a batch whose proof keeps failing still chains.
      const written = await db.transaction(async (tx) => {
        if (!(await repo.tryLock(tx, SEALER_LOCK))) return false;
        const now = clock.now();
        if (header) await repo.saveHeader(tx, b.id, header, now, b.version);
        if (proof) return repo.saveProof(tx, b.id, proof.proof, proof.proofId, now);
        await repo.recordFailure(tx, b.id, {
          error: `proving failed: ${failure!.message}`,
          retryAt: new Date(now.getTime() + backoffMs(b.attempts)),
          maxAttempts: MAX_ATTEMPTS,
          now,
        });
        return false;
      });
      if (!written) break;
      proven++;
    }
    return proven;
  }

  /** A sealed batch's header and content, from its actions as logged (docs/batches.md). */
  private async header(
    exec: Executor,
    b: repo.BatchRow,
    prev: repo.BatchRow | null,
  ): Promise<repo.SealedHeader> {
    const request: HeaderRequest = {
      batch: {
        id: b.id,
        sequence: b.sequence,
        version: b.version,
        when_created: b.created_at.toISOString(),
      },
      prev: prev ? { hash: prev.hash!, integrity_root: prev.integrity_root! } : null,
      saltKey: this.deps.saltKey,
    };
    const read = () => batchActions(exec, b.id);
    return this.deps.headers
      ? this.deps.headers.compute(request, read)
      : computeHeader({ ...request, actions: await read() });
  }

  /**
   * Re-publishes, a few per pass and oldest first, the sealed batches whose content (versions
   * 1 and 2, sealed before migration 0021) still shows the actions on private objects: as
   * content version 3, where those keep only their action hash and the integrity hash they
   * left — what the batch's header already committed to, so that header, proof, chain and
   * anchor stay as they are (docs/batches.md, "Re-published batches"). An action it sealed
   * public whose object is private now is shown so too (views.ts). The former CID stays in
   * `superseded_ipfs_urls`. Answers how many.
   */
  async republishSealed(): Promise<number> {
    const { db, clock } = this.deps;
    let done = 0;
    for (; done < 4; done++) {
      const b = await repo.nextToRepublish(db);
      if (b === null || b.hash === null || b.ipfs_url === null) break;
      const hidden = hiddenOf(b, await repo.privateNowActions(db, b.id));
      const saltKey = Buffer.from(this.deps.saltKey, 'hex');
      const url = ipfsUrl(await viewBytes(db, b, hidden, 3, saltKey));
      const written = await db.transaction(async (tx) => {
        if (!(await repo.tryLock(tx, SEALER_LOCK))) return false;
        return repo.saveRepublished(tx, b.id, {
          version: 3,
          ipfsUrl: url,
          formerIpfsUrl: b.ipfs_url!,
          hidden,
          now: clock.now(),
        });
      });
      if (!written) break;
      this.deps.logger.info(
        { batch: b.id, ipfs_url: url },
        'a batch re-published without its private actions',
      );
    }
    return done;
  }

  /** Posts proven batches' commitments and follows them until final; answers steps taken. */
  async anchorProven(): Promise<number> {
    const { db, clock, anchor, logger } = this.deps;
    if (!anchor) return 0;
    let steps = 0;
    for (; steps < 16; steps++) {
      const now = clock.now();
      const b = await repo.claimAnchorWork(db, now, ANCHOR_LEASE_MS);
      if (b === null) break;
      try {
        if (b.l2_tx_hash === null) {
          const txHash = await anchor.submit(b.commitment as `0x${string}`);
          await repo.saveAnchorTx(db, b.id, {
            sender: anchor.sender,
            txHash,
            checkAt: new Date(clock.now().getTime() + ANCHOR_POLL_MS),
            now: clock.now(),
          });
        } else {
          const st = await anchor.status(b.l2_tx_hash as `0x${string}`);
          if (st === 'pending') {
            await repo.checkAgainAt(db, b.id, new Date(clock.now().getTime() + ANCHOR_POLL_MS));
          } else if (st === 'dropped') {
            // Gone from the chain: post it again at once.
            await repo.saveAnchorTx(db, b.id, {
              sender: anchor.sender,
              txHash: null,
              checkAt: clock.now(),
              now: clock.now(),
            });
          } else {
            await repo.saveAnchorFinal(db, b.id, st.blockHash, clock.now());
          }
        }
      } catch (err) {
        logger.warn({ err, batch: b.id }, 'anchoring a batch failed; will retry');
        await repo.recordFailure(db, b.id, {
          error: `anchoring failed: ${(err as Error).message}`,
          retryAt: new Date(clock.now().getTime() + backoffMs(b.attempts)),
          maxAttempts: MAX_ATTEMPTS,
          now: clock.now(),
        });
      }
    }
    return steps;
  }
}
