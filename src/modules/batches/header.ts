import { createHash, type Hash } from 'node:crypto';
import {
  assertContentVersion,
  CONTENT_HEAD,
  contentTail,
  recordText,
  type ContentAction,
} from './content.js';
import {
  actionsHashOfBytes,
  commitment,
  GENESIS_HASH,
  hashBytes,
  headerHash,
  integrityRoot,
  ipfsUrlOfDigest,
  sortedById,
  type BatchHeader,
} from './formulas.js';

/** Which header to compute: plain data, so a thread can take it. */
export interface HeaderRequest {
  batch: { id: string; sequence: number; version: number; when_created: string };
  /** The batch before it in the chain (null for the first). */
  prev: { hash: string; integrity_root: string } | null;
}

/** What a sealed batch's header is computed from. */
export interface HeaderInput extends HeaderRequest {
  /** Its actions as logged, in execution order. */
  actions: ContentAction[];
}

/** A sealed batch's header (design.md §6) with its hash and content CID. */
export type ComputedHeader = BatchHeader & { hash: string; ipfs_url: string };

/** Content text gathered before it goes to the hash (one call per record costs more). */
const DIGEST_CHUNK = 64 * 1024;

/**
 * A sealed batch's header, hash and `ipfs_url`, built from its actions as they are read, in
 * execution order, page by page: what it keeps is each action's 32-byte hash, the affected
 * objects' last integrity hashes, the fee so far and the content's running SHA-256, never
 * the actions themselves (a reader then holds one page of rows at a time, not the megabyte
 * of a 1,000-action batch: docs/performance.md, "Transaction batches"). The content's
 * actions come before its header (content.ts), so they are hashed as they come.
 */
export class HeaderBuilder {
  private readonly leaves: Buffer[] = [];
  /** Object id → the integrity hash its last action so far left, in first-seen order. */
  private readonly objects = new Map<string, string>();
  private fee = 0n;
  private readonly digest: Hash = createHash('sha256');
  private text = CONTENT_HEAD;
  private done = false;

  constructor(private readonly request: HeaderRequest) {
    // An unknown content version fails here, before any action is read.
    assertContentVersion(request.batch.version);
  }

  /** The next actions in execution order. */
  add(actions: readonly ContentAction[]): void {
    if (this.done) throw new Error('HeaderBuilder: the header was already built');
    const { version } = this.request.batch;
    for (const a of actions) {
      this.leaves.push(hashBytes(a.record.hash));
      if (a.record.object_id !== null) this.objects.set(a.record.object_id, a.integrityHash);
      this.fee += BigInt(a.record.fee_wei);
      const record = recordText(version, a);
      this.text += this.leaves.length === 1 ? record : `,${record}`;
      if (this.text.length >= DIGEST_CHUNK) {
        this.digest.update(this.text, 'utf8');
        this.text = '';
      }
    }
  }

  /** The header of the actions added: the batch's, once every one of them was. */
  build(): ComputedHeader {
    if (this.done) throw new Error('HeaderBuilder: the header was already built');
    this.done = true;
    const { batch, prev } = this.request;
    const actionsHashValue = actionsHashOfBytes(this.leaves);
    const objects = sortedById(
      [...this.objects].map(([id, integrity_hash]) => ({ id, integrity_hash })),
    );
    const root = integrityRoot(objects, true);
    const prevIntegrityRoot = prev?.integrity_root ?? GENESIS_HASH;
    const head: BatchHeader = {
      id: batch.id,
      sequence: batch.sequence,
      prev_hash: prev?.hash ?? GENESIS_HASH,
      prev_integrity_root: prevIntegrityRoot,
      integrity_root: root,
      actions_hash: actionsHashValue,
      commitment: commitment(prevIntegrityRoot, root, actionsHashValue, batch.sequence),
      actions_count: this.leaves.length,
      total_fee_wei: this.fee.toString(),
      when_created: batch.when_created,
    };
    const hash = headerHash(head);
    this.digest.update(`${this.text}${contentTail(batch.version, head, hash, objects)}`, 'utf8');
    return { ...head, hash, ipfs_url: ipfsUrlOfDigest(this.digest.digest()) };
  }
}

/** Actions added between two turns given to the event loop by {@link computeHeader}. */
const ACTIONS_PER_TURN = 64;

/**
 * The header, hash and `ipfs_url` of a sealed batch, from its actions as logged. Pure. Headers
 * are computed on their own thread (header-pool.ts); when that thread is unavailable they run
 * on the event loop, which this gives a turn after every {@link ACTIONS_PER_TURN} actions.
 */
export async function computeHeader({ actions, ...request }: HeaderInput): Promise<ComputedHeader> {
  const builder = new HeaderBuilder(request);
  for (let i = 0; i < actions.length; i += ACTIONS_PER_TURN) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    builder.add(actions.slice(i, i + ACTIONS_PER_TURN));
  }
  return builder.build();
}
