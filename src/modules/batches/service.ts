import { formatEther } from 'viem';
import type { Db, Executor } from '../../db/pool.js';
import type { Logger } from 'pino';
import { ByteLru } from '../../lib/byte-lru.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { AppError, Code, notFound } from '../../lib/errors.js';
import { pageOf, parseList } from '../../lib/list.js';
import { inclusionProof } from '../../lib/merkle.js';
import type { AuthContext } from '../../lib/permissions.js';
import { batchLeaves } from '../ebus/index.js';
import { contentBuildGate } from './content-gate.js';
import { actionSalt, hashBytes, ipfsUrl, privateCommitment } from './formulas.js';
import { privateActionRecord } from './private-actions.js';
import * as repo from './repo/batches.js';
import type { SealedLeaves } from './sealed-leaves.js';
import {
  LIST_AFFECTED_ACTIONS,
  type Batch,
  type BatchList,
  type InclusionProofSchema,
  type ListBatchesQuery,
} from './schema.js';
import { hiddenOf, isPublished, publishView, sameIds, viewBytes } from './views.js';

const iso = (d: Date | null): string => (d === null ? '' : d.toISOString());

/**
 * What the sealed batches' contents kept in memory hold at most, in bytes; one larger than a
 * quarter of it is served but not kept. A quarter holds a full batch of the default 1,000
 * actions each with 16 KB of custom data (about 17 MB).
 */
export const CONTENT_CACHE_BYTES = 128 * 1024 * 1024;

/**
 * The public explorer (`GET /batches/{batchId}`; docs/batches.md): batches, their
 * content and their actions' inclusion proofs. Needs no credential: everything here is
 * what anyone may check, and nothing of an action on a private object but what verifying
 * the batch needs and reveals nothing (docs/batches.md, "What is public").
 */
export class BatchExplorer {
  /**
   * Sealed batches' verified content bytes, by batch id and `ipfs_url`: the CID of the bytes,
   * so an entry is never stale; which one a request may be served is decided per request
   * (`content`).
   */
  private readonly contents = new ByteLru<string, Buffer>(CONTENT_CACHE_BYTES, (b) => b.length);
  /** Contents being published anew (views.ts), by batch, former CID and hidden actions. */
  private readonly publishing = new Map<string, Promise<{ row: repo.BatchRow; bytes: Buffer }>>();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    /** The batch salt key's 32 bytes (repo/keys.ts). */
    private readonly saltKey: Buffer,
    /**
     * Where the anonymous reads run (every public route here): the public reads' pool
     * (src/db/pool.ts). A content published anew, the log's leaves and an organization's own
     * private action use `db`.
     */
    private readonly publicDb: Executor = db,
    /** The leaves of the batches this process sealed, until the log takes them. */
    private readonly sealed?: SealedLeaves,
    private readonly clock: Clock = systemClock,
    /** How many contents are built at once, the rest waiting at most a while (content-gate.ts). */
    private readonly builds = contentBuildGate(),
  ) {}

  /**
   * A batch's leaves as this process's header computation handed them over, when it has them
   * for that `actions_hash` (sealed-leaves.ts); null: read them with `logLeaves`.
   */
  handedLeaves(batchId: string, actionsHash: string): { id: string; leaf: Buffer }[] | null {
    return this.sealed?.take(batchId, actionsHash) ?? null;
  }

  /**
   * The data of a private action's `actions_hash` leaf in a batch of `version`: its salted
   * commitment from version 4 on, its action hash before (what re-published batches'
   * headers committed to).
   */
  private leafOfPrivate(version: number, a: { id: string; hash: string; integrity_hash: string }) {
    if (version < 4) return a.hash;
    return privateCommitment(actionSalt(this.saltKey, a.id), a.hash, a.integrity_hash);
  }

  async get(id: string): Promise<Batch> {
    const found = await repo.findBatch(this.publicDb, id);
    if (found === null) throw notFound('batch');
    const members = (await repo.memberSummaries(this.publicDb, [id])).get(id)!;
    // Its `ipfs_url` names the content as shown now (it lists every action: their visibility
    // is read with them).
    const privateNow = members.filter((m) => m.private).map((m) => m.id);
    let row = found;
    try {
      if (isPublished(found)) row = (await this.shownNow(found, privateNow)).row;
    } catch (err) {
      // Its rows no longer make its roots (logged): the record still shows what is private.
      if (!(err instanceof AppError)) throw err;
    }
    return this.toBatch(row, members);
  }

  async list(query: ListBatchesQuery): Promise<BatchList> {
    const page = parseList(query, repo.BATCH_LIST);
    const rows = await repo.listBatches(this.publicDb, page, query, query.status);
    const out = pageOf(
      rows,
      page,
      (r) => r.created_at,
      (r) => r.id,
    );
    const members = await repo.memberSummaries(
      this.publicDb,
      out.items.map((r) => r.id),
      LIST_AFFECTED_ACTIONS,
    );
    const batches = await Promise.all(out.items.map((r) => this.toBatch(r, members.get(r.id)!)));
    return { batches, next: out.next, has_more: out.has_more };
  }

  /**
   * The canonical content bytes (docs/batches.md, "Content and `ipfs_url`"), rebuilt from the
   * batch's action log rows, which never change once it is sealed, and checked against its
   * `ipfs_url` before they are served. 404 until the batch's header is written. An action
   * sealed public whose object is private now is shown as private, whatever this or another
   * process kept: each request reads which of the batch's actions are on private objects
   * (with the batch's row, one statement), and a content that does not show them so is
   * published anew before anything is served (views.ts). Kept in memory by batch and
   * `ipfs_url` (a re-published batch's content has a new one), and built once for requests
   * that ask at the same time; at most a few builds run at once, and one that waits too long
   * for its turn is answered 503 (content-gate.ts).
   */
  async content(id: string): Promise<Buffer> {
    const found = await repo.findBatchWithPrivateNow(this.publicDb, id);
    if (found === null) throw notFound('batch');
    const { row, privateNow } = found;
    const { hash } = row;
    if (hash === null) throw notFound('batch content (the batch is not sealed yet)');
    // Its published content still shows private actions: never served again (the sealer
    // re-publishes it within seconds).
    if (row.republish) throw notFound('batch content (being re-published)');
    const shown = await this.shownNow(row, privateNow);
    if (shown.bytes) return shown.bytes;
    return this.contents.load(`${id} ${shown.row.ipfs_url}`, () =>
      this.builds.run(() => this.buildContent(shown.row)),
    );
  }

  /**
   * A published batch whose content shows as private exactly its actions sealed private and
   * those sealed public whose objects are private now (`privateNow`): the row as it is when it
   * does, else after its content was published anew, with those bytes.
   */
  private async shownNow(
    row: repo.BatchRow,
    privateNow: readonly string[],
  ): Promise<{ row: repo.BatchRow; bytes?: Buffer }> {
    const hidden = hiddenOf(row, privateNow);
    if (sameIds(hidden, row.hidden_actions)) return { row };
    const key = `${row.id} ${row.ipfs_url} ${hidden.join(',')}`;
    let pending = this.publishing.get(key);
    if (!pending) {
      pending = this.publishAnew(row, hidden).finally(() => this.publishing.delete(key));
      this.publishing.set(key, pending);
    }
    return pending;
  }

  private async publishAnew(
    row: repo.BatchRow,
    hidden: string[],
  ): Promise<{ row: repo.BatchRow; bytes: Buffer }> {
    const view = await publishView(this.db, row, hidden, this.saltKey, this.clock.now());
    if (view === null) throw this.noLongerMatches(row.id);
    this.contents.set(`${row.id} ${view.ipfsUrl}`, view.bytes);
    if (view.saved) {
      this.logger.info(
        { batch: row.id, ipfs_url: view.ipfsUrl, hidden: hidden.length },
        "a batch's content re-published: its objects' visibility changed",
      );
    }
    // Saved, or another process published a view meanwhile: the row as it is now.
    const now = (await repo.findBatch(this.db, row.id)) ?? row;
    return { row: now, bytes: view.bytes };
  }

  private async buildContent(row: repo.BatchRow): Promise<Buffer> {
    const content = await viewBytes(
      this.publicDb,
      row,
      row.hidden_actions,
      row.version,
      this.saltKey,
    );
    if (ipfsUrl(content) !== row.ipfs_url) throw this.noLongerMatches(row.id);
    return content;
  }

  private noLongerMatches(batchId: string): AppError {
    this.logger.error({ batch: batchId }, 'a batch content no longer matches its ipfs_url');
    return new AppError(Code.INTERNAL, 'the batch content does not match its ipfs_url');
  }

  /** An action of the caller's organization in a batch, in full (private-actions.ts). */
  privateAction(auth: AuthContext, batchId: string, actionId: string) {
    return privateActionRecord(this.db, this.saltKey, auth, batchId, actionId);
  }

  /**
   * A sealed batch's leaves in its `actions_hash` order, as the transparency log appends them
   * (docs/log.md): each action's leaf data as the proofs above use it — its action hash, or
   * for an action sealed private in content version 4, its salted commitment.
   */
  async logLeaves(batchId: string): Promise<{ id: string; leaf: Buffer }[]> {
    const row = await repo.findBatch(this.db, batchId);
    if (row === null || row.hash === null) throw notFound('sealed batch');
    const sealedPrivate = new Set(row.private_actions ?? []);
    return (await batchLeaves(this.db, batchId)).map((l) => ({
      id: l.id,
      leaf: hashBytes(sealedPrivate.has(l.id) ? this.leafOfPrivate(row.version, l) : l.hash),
    }));
  }

  /** The RFC 6962 inclusion proof of one action in the batch's `actions_hash`. */
  async proof(batchId: string, actionId: string): Promise<InclusionProofSchema> {
    const row = await repo.findBatch(this.publicDb, batchId);
    if (row === null) throw notFound('batch');
    if (row.actions_hash === null) throw notFound('inclusion proof (the batch is not sealed yet)');
    const leaves = await batchLeaves(this.publicDb, batchId);
    const index = leaves.findIndex((l) => l.id === actionId);
    if (index < 0) throw notFound('action in this batch');
    const sealedPrivate = new Set(row.private_actions ?? []);
    const proof = inclusionProof(
      leaves.map((l) =>
        hashBytes(sealedPrivate.has(l.id) ? this.leafOfPrivate(row.version, l) : l.hash),
      ),
      index,
    );
    // Sealed as a commitment, its object public now: the salt opens it to what the object's
    // public history shows anyway (docs/batches.md, "An object made public later").
    const leaf = leaves[index]!;
    if (row.version >= 4 && sealedPrivate.has(actionId) && !leaf.private) {
      return { ...proof, salt: `0x${actionSalt(this.saltKey, actionId).toString('hex')}` };
    }
    return proof;
  }

  /**
   * The API record; a building batch shows its actions so far. An action is private when its
   * object is private now or was when the header was computed; `hash` is its leaf (the
   * commitment of one sealed private in version 4, else its action hash).
   */
  private async toBatch(r: repo.BatchRow, members: repo.MemberSummary[]): Promise<Batch> {
    // Sealed: as its header sealed them, and made private since; before: as they are now.
    const sealedPrivate = r.private_actions === null ? null : new Set(r.private_actions);
    const affected = members.map((a): repo.AffectedAction => {
      const sealedAs = sealedPrivate?.has(a.id) ?? false;
      if (!sealedAs && !a.private) {
        return { id: a.id, hash: a.hash, name: a.name, alias: a.alias, private: false };
      }
      // Sealed public and private now: its leaf is its action hash (views.ts).
      const leaf = sealedPrivate && !sealedAs ? a.hash : this.leafOfPrivate(r.version, a);
      return { id: a.id, hash: leaf, name: '', alias: a.alias, private: true };
    });
    let count = r.actions_count;
    let fee = r.total_fee_wei;
    if (r.status === 'building') {
      const totals = await repo.memberTotals(this.publicDb, r.id);
      count = totals.count;
      fee = totals.feeWei;
    }
    return {
      id: r.id,
      sequence: r.sequence,
      hash: r.hash ?? '',
      prev_hash: r.prev_hash ?? '',
      integrity_root: r.integrity_root ?? '',
      prev_integrity_root: r.prev_integrity_root ?? '',
      sender: r.sender ?? '',
      l2_tx_hash: r.l2_tx_hash ?? '',
      l2_finalization_tx_hash: r.l2_finalization_tx_hash ?? '',
      commitment: r.commitment ?? '',
      actions_hash: r.actions_hash ?? '',
      log_tree_size: r.log_tree_size,
      affected_actions: affected,
      actions_count: count,
      total_fee: formatEther(BigInt(fee)),
      total_fee_wei: fee,
      version: r.version,
      ipfs_url: r.ipfs_url ?? '',
      superseded_ipfs_urls: r.superseded_ipfs_urls,
      status: r.status,
      proof: r.proof,
      proof_id: r.proof_id ?? '',
      error: r.error ?? '',
      challenge_window_end: iso(r.challenge_window_end),
      when_completed: iso(r.completed_at),
      when_modified: r.updated_at.toISOString(),
      when_created: r.created_at.toISOString(),
    };
  }
}
