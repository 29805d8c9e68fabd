import type { Executor } from '../../db/pool.js';
import { AppError, Code, failedPrecondition, invalid, notFound } from '../../lib/errors.js';
import { hasPermission, type AuthContext } from '../../lib/permissions.js';
import { setLogTreeSize } from '../batches/index.js';
import { actionLogPage, type ActionLogRecord } from '../ebus/index.js';
import { merkleRootOfData } from '../../lib/merkle.js';
import {
  consistencyProofOf,
  extendTiles,
  inclusionProofOf,
  rootAt,
  subtreeHashes,
} from './hashes.js';
import { checkpointBody, type NoteSigner } from './note.js';
import * as repo from './repo.js';
import { leafHash, TILE_WIDTH } from './tree.js';
import type { TileRef } from './tiles.js';
import { Witnessing, type WitnessingDeps } from './witnessing.js';

/** A sealed batch's leaves, in its `actions_hash` order: what the batches feature gives. */
export interface LeafSource {
  logLeaves(batchId: string): Promise<{ id: string; leaf: Buffer }[]>;
  /**
   * The same leaves, when this process computed the batch's header and still holds what it
   * hashed into that `actions_hash`; null when it does not (then `logLeaves`).
   */
  handedLeaves?(batchId: string, actionsHash: string): { id: string; leaf: Buffer }[] | null;
  /** An action of the caller's organization as its batch sealed it, with its salt. */
  privateAction(
    auth: AuthContext,
    batchId: string,
    actionId: string,
  ): Promise<{ salt: string | null; commitment: string | null; integrity_hash: string }>;
}

export interface LogDeps extends WitnessingDeps {
  signer: NoteSigner;
  leaves: LeafSource;
  /** The network id (`GET /public/network`): the action text names it. */
  network: string;
  /**
   * Where the anonymous reads run (checkpoint, tiles, proofs, an anonymous caller's receipt):
   * the public reads' pool (src/db/pool.ts); `db` when absent.
   */
  publicDb?: Executor;
}

/** Batches appended per pass at most (a back-fill goes on at the next pass at once). */
const BATCHES_PER_PASS = 8;

const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;

export interface Receipt {
  version: 1;
  network: string;
  action: ActionLogRecord & { log_index: number };
  log_index: number;
  tree_size: number;
  leaf_hash: string;
  inclusion_proof: string[];
  checkpoint: string;
  /**
   * An action sealed private (content version 4): its leaf is the salted commitment, not the
   * action hash; for its organization, what opens it.
   */
  private?: { leaf: string; salt?: string; integrity_hash?: string };
}

export interface InclusionAnswer {
  log_index: number;
  tree_size: number;
  leaf_hash: string;
  proof: string[];
}

/** 400: a size past the tree (`details.tree_size` tells the current size). */
function beyondTheTree(field: string, current: number): AppError {
  return new AppError(
    Code.INVALID_ARGUMENT,
    `${field} is beyond the tree (its size is ${current})`,
    {
      fields: [{ field, reason: `must be at most ${current}` }],
      tree_size: current,
    },
  );
}

/**
 * The transparency log (docs/log.md): appends each sealed batch's leaves in chain order once
 * its header is written, signs a checkpoint per batch, answers tiles and proofs, and sends
 * each new checkpoint to the configured witnesses.
 */
export class LogService {
  /** Sends checkpoints to the witnesses (witnessing.ts). */
  readonly witnessing: Witnessing;

  /** Where the anonymous reads run (LogDeps.publicDb). */
  private readonly reads: Executor;

  constructor(private readonly deps: LogDeps) {
    this.witnessing = new Witnessing(deps);
    this.reads = deps.publicDb ?? deps.db;
  }

  /** Waits until no witness request is in flight (tests, shutdown). */
  settled(): Promise<void> {
    return this.witnessing.settled();
  }

  /** See Witnessing.refresh. */
  refreshCosignatures(): Promise<void> {
    return this.witnessing.refresh();
  }

  get origin(): string {
    return this.deps.signer.name;
  }

  /** What `GET /public/network` says of the log: names and keys only. */
  network(): {
    origin: string;
    verifier_key: string;
    witnesses: { name: string; verifier_key: string; url: string }[];
  } {
    return {
      origin: this.origin,
      verifier_key: this.deps.signer.verifierKey,
      witnesses: this.deps.witnesses.map((w) => ({
        name: w.verifier.name,
        verifier_key: w.vkey,
        url: w.url,
      })),
    };
  }

  /**
   * Appends the batches whose headers are written and that the log does not hold yet, in
   * sequence order, each in one transaction under the log's lock (any number of processes
   * may run this): its leaves, the tiles they complete, its signed checkpoint and the
   * batch's `log_tree_size`. Answers whether it appended any.
   */
  async append(): Promise<boolean> {
    let appended = 0;
    for (; appended < BATCHES_PER_PASS; appended++) {
      if (!(await this.appendOne())) break;
    }
    if (appended > 0) this.witnessing.sendInBackground();
    else await this.witnessing.refresh();
    return appended > 0;
  }

  private async appendOne(): Promise<boolean> {
    const { db, clock, signer } = this.deps;
    const last = await repo.latestCheckpoint(db);
    const b = await repo.batchAfter(db, last?.batch_sequence ?? 0);
    if (b === null || b.hash === null || b.actions_hash === null) return false;
    // Handed over, they are what made this very actions_hash; read back, they are checked.
    const handed = this.deps.leaves.handedLeaves?.(b.id, b.actions_hash) ?? null;
    const leaves = handed ?? (await this.deps.leaves.logLeaves(b.id));
    if (!handed && hex(merkleRootOfData(leaves.map((l) => l.leaf))) !== b.actions_hash) {
      // Never append what the batch's header did not commit to; an operator must look.
      this.deps.logger.error(
        { batch: b.id },
        "log: a batch's leaves do not match its actions_hash",
      );
      return false;
    }
    return db.transaction(async (tx) => {
      await repo.lock(tx);
      const head = await repo.latestCheckpoint(tx);
      if ((head?.batch_sequence ?? 0) !== (last?.batch_sequence ?? 0)) return true; // raced
      const start = head?.tree_size ?? 0;
      const end = start + leaves.length;
      await repo.insertEntries(
        tx,
        start,
        leaves.map((l) => ({ actionId: l.id, leaf: l.leaf })),
      );
      await extendTiles(tx, start, end);
      const root = await rootAt(tx, end);
      const note = signer.sign(
        checkpointBody(signer.name, end, root, { sequence: b.sequence, hash: b.hash! }),
      );
      await repo.saveCheckpoint(tx, {
        sequence: b.sequence,
        batchId: b.id,
        size: end,
        root,
        note,
        now: clock.now(),
      });
      await setLogTreeSize(tx, b.id, end);
      return true;
    });
  }

  /** The latest checkpoint with its cosignatures, or null while the log is empty. */
  async checkpoint(
    exec: Executor = this.reads,
  ): Promise<{ text: string; row: repo.CheckpointRow } | null> {
    const row = await repo.latestCheckpoint(exec);
    if (row === null) return null;
    const cosigs = await repo.cosignatures(exec, row.batch_sequence);
    return { text: row.note + cosigs.map((l) => `${l}\n`).join(''), row };
  }

  private async size(): Promise<number> {
    return (await repo.latestCheckpoint(this.reads))?.tree_size ?? 0;
  }

  /** A tile's bytes and whether it is full (immutable); 404 beyond the tree. */
  async tile(t: TileRef): Promise<{ bytes: Buffer; full: boolean }> {
    const size = await this.size();
    const level = t.level === 'entries' ? 0 : t.level;
    // Nodes of this tile level the tree holds: floor(size / 256^level).
    const nodes = Math.floor(size / 2 ** (8 * level));
    const first = t.index * TILE_WIDTH;
    if (first + t.width > nodes) throw notFound('tile (beyond the tree)');
    const from = first;
    const to = first + t.width;
    if (t.level === 'entries' || t.level === 0) {
      const leaves = await repo.leavesIn(this.reads, [{ from, to }]);
      const parts: Buffer[] = [];
      for (let i = from; i < to; i++) {
        const leaf = leaves.get(i)!;
        if (t.level === 'entries') {
          const len = Buffer.alloc(2);
          len.writeUInt16BE(leaf.length);
          parts.push(len, leaf);
        } else {
          parts.push(leafHash(leaf));
        }
      }
      return { bytes: Buffer.concat(parts), full: t.width === TILE_WIDTH };
    }
    const hashes = await subtreeHashes(
      this.reads,
      Array.from({ length: t.width }, (_, i) => ({ level: 8 * level, index: from + i })),
    );
    return { bytes: Buffer.concat(hashes), full: t.width === TILE_WIDTH };
  }

  private async checkSize(size: number, field: string): Promise<number> {
    const current = await this.size();
    if (size > current) throw beyondTheTree(field, current);
    return current;
  }

  /** The inclusion proof of a leaf (its data, `0x` hex) in the tree of `size` leaves. */
  async inclusion(hashHex: string, size: number): Promise<InclusionAnswer> {
    const { entry, size: current } = await repo.entryOfLeafAndSize(
      this.reads,
      Buffer.from(hashHex.slice(2), 'hex'),
    );
    if (size > current) throw beyondTheTree('size', current);
    if (entry === null) throw notFound('log entry');
    return this.inclusionOf(this.reads, entry, size);
  }

  private async inclusionOf(
    exec: Executor,
    entry: repo.EntryRow,
    size: number,
  ): Promise<InclusionAnswer> {
    if (entry.log_index >= size) {
      throw invalid(`the entry's index ${entry.log_index} is not inside a tree of ${size}`, [
        { field: 'size', reason: `must be greater than ${entry.log_index}` },
      ]);
    }
    const proof = await inclusionProofOf(exec, entry.log_index, size);
    return {
      log_index: entry.log_index,
      tree_size: size,
      leaf_hash: hex(leafHash(entry.leaf)),
      proof: proof.map(hex),
    };
  }

  async consistency(
    from: number,
    to: number,
  ): Promise<{ from: number; to: number; proof: string[] }> {
    await this.checkSize(to, 'to');
    if (from < 1 || from > to) {
      throw invalid('from must be between 1 and to', [{ field: 'from', reason: 'must be 1 … to' }]);
    }
    const proof = await consistencyProofOf(this.reads, from, to);
    return { from, to, proof: proof.map(hex) };
  }

  /** An action's log entry, or null until its batch is in the log. */
  entryOfAction(actionId: string): Promise<repo.EntryRow | null> {
    return repo.entryOfAction(this.deps.db, actionId);
  }

  /** The inclusion proof of an entry in the latest checkpoint, with its full text. */
  async proofToLatest(entry: repo.EntryRow, exec: Executor = this.deps.db) {
    const cp = await this.checkpoint(exec);
    if (cp === null) throw notFound('checkpoint');
    const proof = await this.inclusionOf(exec, entry, cp.row.tree_size);
    return { ...proof, checkpoint: cp.text };
  }

  /**
   * A self-contained receipt of an action (docs/log.md, "Receipts"): for its organization's
   * callers, and for anyone when its object is public. Another organization's private action
   * is not found (its existence is not told). A private action's opening (salt, integrity
   * hash) only for its organization's callers who may also read objects.
   */
  async receipt(auth: AuthContext | null, actionId: string): Promise<Receipt> {
    // An anonymous caller's reads run where every anonymous read does; a caller's, on `db`.
    const exec = auth === null ? this.reads : this.deps.db;
    const access = await repo.actionAccess(exec, actionId);
    if (access === null) throw notFound('action log');
    if (!access.public && auth?.orgId !== access.organization_id) throw notFound('action log');
    const page = await actionLogPage(exec, access.organization_id, { limit: 1 }, { id: actionId });
    const action = page.items[0];
    if (!action) throw notFound('action log');
    const entry = await repo.entryOfAction(exec, actionId);
    if (entry === null) {
      throw failedPrecondition(
        'the action is not in the log yet: its batch is not sealed (retry in seconds)',
      );
    }
    const p = await this.proofToLatest(entry, exec);
    const leaf = hex(entry.leaf);
    let opening: Receipt['private'];
    if (leaf !== action.hash) {
      opening = { leaf };
      // The opening is the private action's record in full, as its batch route gives it:
      // the same permission (objects.read) besides actions.read (docs/log.md, "Receipts").
      if (
        auth?.orgId === access.organization_id &&
        hasPermission(auth, 'objects.read') &&
        action.batch_id !== null
      ) {
        const sealed = await this.deps.leaves.privateAction(auth, action.batch_id, actionId);
        if (sealed.salt !== null && sealed.commitment === leaf) {
          opening = { leaf, salt: sealed.salt, integrity_hash: sealed.integrity_hash };
        }
      }
    }
    return {
      version: 1,
      network: this.deps.network,
      action: { ...action, log_index: entry.log_index },
      log_index: p.log_index,
      tree_size: p.tree_size,
      leaf_hash: p.leaf_hash,
      inclusion_proof: p.proof,
      checkpoint: p.checkpoint,
      ...(opening ? { private: opening } : {}),
    };
  }
}
