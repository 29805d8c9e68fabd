import { contentDigest, sortedAffectedObjects, type ContentAction } from './content.js';
import {
  actionsHash,
  commitment,
  GENESIS_HASH,
  headerHash,
  integrityRoot,
  ipfsUrlOfDigest,
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

/** The header, hash and `ipfs_url` of a sealed batch, from its actions as logged. Pure. */
export async function computeHeader({
  batch,
  prev,
  actions,
}: HeaderInput): Promise<ComputedHeader> {
  const actionsHashValue = actionsHash(actions.map((a) => a.record.hash));
  const objects = sortedAffectedObjects(actions);
  const root = integrityRoot(objects, true);
  const prevIntegrityRoot = prev?.integrity_root ?? GENESIS_HASH;
  let fee = 0n;
  for (const a of actions) fee += BigInt(a.record.fee_wei);
  const head: BatchHeader = {
    id: batch.id,
    sequence: batch.sequence,
    prev_hash: prev?.hash ?? GENESIS_HASH,
    prev_integrity_root: prevIntegrityRoot,
    integrity_root: root,
    actions_hash: actionsHashValue,
    commitment: commitment(prevIntegrityRoot, root, actionsHashValue, batch.sequence),
    actions_count: actions.length,
    total_fee_wei: fee.toString(),
    when_created: batch.when_created,
  };
  const hash = headerHash(head);
  const digest = await contentDigest(batch.version, head, hash, actions, objects);
  return { ...head, hash, ipfs_url: ipfsUrlOfDigest(digest) };
}
