import { createHash, type Hash } from 'node:crypto';
import {
  actionLeaf,
  assertContentVersion,
  CONTENT_HEAD,
  contentTail,
  leafValue,
  recordText,
  sealPrivate,
  type ContentAction,
  type ObjectLeaf,
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
  /**
   * The batch salt key, hex (repo/keys.ts): content version 4 commits to each private action
   * with a salt made from it (formulas.ts, `actionSalt`).
   */
  saltKey?: string;
}

/** What a sealed batch's header is computed from. */
export interface HeaderInput extends HeaderRequest {
  /** Its actions as logged, in execution order. */
  actions: ContentAction[];
}

/**
 * A sealed batch's header (docs/batches.md) with its hash and content CID, and the ids of the
 * actions it sealed as private (in execution order): `batches.private_actions`, so that the
 * content is served as it was hashed whatever the objects' visibility later becomes.
 */
export type ComputedHeader = BatchHeader & {
  hash: string;
  ipfs_url: string;
  private_actions: string[];
};

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
  /** The actions' ids, in the leaves' order. */
  private readonly ids: string[] = [];
  /** Object id → its `integrity_root` leaf as its last action so far left it, first-seen order. */
  private readonly objects = new Map<string, ObjectLeaf>();
  private readonly privateIds: string[] = [];
  private readonly saltKey: Buffer;
  private fee = 0n;
  private readonly digest: Hash = createHash('sha256');
  private text = CONTENT_HEAD;
  private done = false;

  constructor(private readonly request: HeaderRequest) {
    // An unknown content version fails here, before any action is read.
    assertContentVersion(request.batch.version);
    this.saltKey = Buffer.from(request.saltKey ?? '', 'hex');
  }

  /** The next actions in execution order. */
  add(actions: readonly ContentAction[]): void {
    if (this.done) throw new Error('HeaderBuilder: the header was already built');
    const { version } = this.request.batch;
    if (version >= 4 && this.saltKey.length !== 32 && actions.some((a) => a.private === true)) {
      throw new Error('HeaderBuilder: a private action and no 32-byte batch salt key');
    }
    for (const a of sealPrivate(version, actions, this.saltKey)) {
      this.leaves.push(hashBytes(actionLeaf(a)));
      this.ids.push(a.record.id);
      if (a.private === true) this.privateIds.push(a.record.id);
      if (a.record.object_id !== null) {
        this.objects.set(a.record.object_id, {
          id: a.record.object_id,
          integrity_hash: a.integrityHash,
          ...(a.commitment !== undefined ? { commitment: a.commitment } : {}),
        });
      }
      this.fee += BigInt(a.record.fee_wei);
      const record = recordText(version, a);
      this.text += this.leaves.length === 1 ? record : `,${record}`;
      if (this.text.length >= DIGEST_CHUNK) {
        this.digest.update(this.text, 'utf8');
        this.text = '';
      }
    }
  }

  /** `build`, and the leaves the header's `actions_hash` was made of. */
  buildWithLeaves(): { header: ComputedHeader; leaves: HeaderLeaves } {
    const header = this.build();
    return {
      header,
      // A buffer of their own: a view into Buffer's shared pool would post the whole pool.
      leaves: {
        actionsHash: header.actions_hash,
        ids: this.ids,
        data: new Uint8Array(Buffer.concat(this.leaves)),
      },
    };
  }

  /** The header of the actions added: the batch's, once every one of them was. */
  build(): ComputedHeader {
    if (this.done) throw new Error('HeaderBuilder: the header was already built');
    this.done = true;
    const { batch, prev } = this.request;
    const actionsHashValue = actionsHashOfBytes(this.leaves);
    const objects = sortedById([...this.objects.values()]);
    const root = integrityRoot(
      objects.map((o) => ({ id: o.id, integrity_hash: leafValue(o) })),
      true,
    );
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
    return {
      ...head,
      hash,
      ipfs_url: ipfsUrlOfDigest(this.digest.digest()),
      private_actions: this.privateIds,
    };
  }
}

/**
 * A sealed batch's leaves as its header hashed them into `actions_hash`: the transparency
 * log appends exactly these (docs/log.md), so the header's computation hands them on
 * (sealed-leaves.ts) instead of the log reading the batch's actions again.
 */
export interface HeaderLeaves {
  /** The `actions_hash` they make: whoever takes them checks it against the batch's. */
  actionsHash: string;
  /** The actions' ids, in order. */
  ids: string[];
  /** Their leaf data, 32 bytes each, in the same order. */
  data: Uint8Array;
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
