import type { HeaderLeaves } from './header.js';

/** Batches whose leaves are kept at most: the log appends each soon after its header. */
const KEPT = 8;

/**
 * The leaves of the batches this process sealed, kept from their headers' computation until
 * the transparency log appends them (docs/log.md, "The tree"): the log would otherwise read
 * each batch's actions back from the database and hash them again on the event loop, which
 * the header thread had just done from the same rows (docs/performance.md, "Wave 3, session
 * 17"). A batch's leaves are taken once; only the last few batches are kept, and a batch
 * whose leaves are not here (sealed by another process, or before a restart) is read as
 * before.
 *
 * Leaves are handed over only for the `actions_hash` they were computed with: the header
 * written for the batch may be another process's (two sealers raced), and only when its
 * `actions_hash` is the same are these exactly its leaves.
 */
export class SealedLeaves {
  private readonly kept = new Map<string, HeaderLeaves>();

  /** Keeps a batch's leaves, dropping the oldest kept beyond the last few batches. */
  keep(batchId: string, leaves: HeaderLeaves): void {
    this.kept.delete(batchId);
    this.kept.set(batchId, leaves);
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= KEPT) break;
      this.kept.delete(oldest);
    }
  }

  /**
   * The batch's leaves, in `actions_hash` order, if kept for that `actions_hash`; else null.
   * Either way the batch's entry is gone afterwards.
   */
  take(batchId: string, actionsHash: string): { id: string; leaf: Buffer }[] | null {
    const l = this.kept.get(batchId);
    this.kept.delete(batchId);
    if (!l || l.actionsHash !== actionsHash || l.data.length !== l.ids.length * 32) return null;
    const data = Buffer.from(l.data.buffer, l.data.byteOffset, l.data.byteLength);
    return l.ids.map((id, i) => ({ id, leaf: data.subarray(i * 32, i * 32 + 32) }));
  }

  /** How many batches' leaves are kept (for tests). */
  get size(): number {
    return this.kept.size;
  }
}
