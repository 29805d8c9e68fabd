import { createHash, createHmac } from 'node:crypto';
import { CID } from 'multiformats/cid';
import * as Digest from 'multiformats/hashes/digest';
import { canonicalJson } from '../../lib/canonical-json.js';
import { merkleRootOfData } from '../../lib/merkle.js';

/**
 * The batch formulas, byte for byte (docs/batches.md, "The formulas", writes them out for
 * outside verifiers). H = SHA-256; a "hash" is `0x` + 64 lowercase hex and enters a formula
 * as its 32 raw bytes; trees are RFC 6962's (src/lib/merkle.ts). Pure: no database, no clock.
 */

/** The first batch's `prev_hash` and `prev_integrity_root`. */
export const GENESIS_HASH = `0x${'0'.repeat(64)}`;

/** What `hash` covers (docs/batches.md, "The formulas"), in the types the JSON carries. */
export interface BatchHeader {
  id: string;
  sequence: number;
  prev_hash: string;
  prev_integrity_root: string;
  integrity_root: string;
  actions_hash: string;
  commitment: string;
  actions_count: number;
  total_fee_wei: string;
  /** When the batch was opened (ISO 8601, milliseconds, `Z`). */
  when_created: string;
}

const HASH_RE = /^0x[0-9a-f]{64}$/;

/** The 32 bytes of a hash; throws when it is not `0x` + 64 lowercase hex. */
export function hashBytes(h: string): Buffer {
  if (!HASH_RE.test(h)) throw new Error(`not a 0x + 64 lowercase hex hash: ${h.slice(0, 80)}`);
  return Buffer.from(h.slice(2), 'hex');
}

const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;
const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** `actions_hash`: the tree over the action hashes in execution order (32-byte leaves). */
export function actionsHash(actionHashes: readonly string[]): string {
  return actionsHashOfBytes(actionHashes.map(hashBytes));
}

/** {@link actionsHash} over the action hashes' raw 32 bytes. */
export function actionsHashOfBytes(actionHashes: readonly Uint8Array[]): string {
  return hex(merkleRootOfData(actionHashes));
}

/** An `integrity_root` leaf's data: UTF-8 of the object id ‖ 0x00 ‖ its integrity hash. */
export function integrityLeaf(objectId: string, integrityHash: string): Buffer {
  if (!HASH_RE.test(integrityHash)) {
    throw new Error(`not a 0x + 64 lowercase hex hash: ${integrityHash.slice(0, 80)}`);
  }
  const idLength = Buffer.byteLength(objectId, 'utf8');
  const leaf = Buffer.allocUnsafe(idLength + 33);
  leaf.write(objectId, 0, 'utf8');
  leaf[idLength] = 0;
  leaf.write(integrityHash.slice(2), idLength + 1, 'hex');
  return leaf;
}

/** Byte order of UTF-8, which is how the affected objects are sorted. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Only ASCII (one UTF-8 byte per UTF-16 unit), whose UTF-16 order is its byte order. */
const isAscii = (s: string): boolean => Buffer.byteLength(s, 'utf8') === s.length;

/**
 * Objects sorted by id in UTF-8 byte order (how `integrity_root` and content version 2 order
 * them). Ids this service makes are ASCII, whose string order is their byte order, so they
 * are compared as they are; any other id is compared by its bytes.
 */
export function sortedById<T extends { id: string }>(objects: readonly T[]): T[] {
  if (objects.every((o) => isAscii(o.id))) {
    return [...objects].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  return objects
    .map((o) => ({ o, key: Buffer.from(o.id, 'utf8') }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ o }) => o);
}

/**
 * `integrity_root`: the tree over the affected objects sorted by id (byte order), each
 * with its integrity hash after the batch. `sorted`: the objects are so already.
 */
export function integrityRoot(
  objects: readonly { id: string; integrity_hash: string }[],
  sorted = false,
): string {
  const leaves = (sorted ? objects : sortedById(objects)).map((o) =>
    integrityLeaf(o.id, o.integrity_hash),
  );
  return hex(merkleRootOfData(leaves));
}

/**
 * The affected objects of actions in execution order, each with the integrity hash its last
 * action in the batch left.
 */
export function affectedObjects(
  actions: readonly { object_id: string | null; integrity_hash: string }[],
): { id: string; integrity_hash: string }[] {
  const last = new Map<string, string>();
  for (const a of actions) if (a.object_id !== null) last.set(a.object_id, a.integrity_hash);
  return [...last].map(([id, integrity_hash]) => ({ id, integrity_hash }));
}

/** `commitment` = H(prev_integrity_root ‖ integrity_root ‖ actions_hash ‖ sequence as u64 BE). */
export function commitment(
  prevIntegrityRoot: string,
  integrityRootHash: string,
  actionsHashValue: string,
  sequence: number,
): string {
  const seq = Buffer.alloc(8);
  seq.writeBigUInt64BE(BigInt(sequence));
  return hex(
    sha256(
      hashBytes(prevIntegrityRoot),
      hashBytes(integrityRootHash),
      hashBytes(actionsHashValue),
      seq,
    ),
  );
}

/** `hash` = H(RFC 8785 JSON of the header). */
export function headerHash(h: BatchHeader): string {
  const header: BatchHeader = {
    id: h.id,
    sequence: h.sequence,
    prev_hash: h.prev_hash,
    prev_integrity_root: h.prev_integrity_root,
    integrity_root: h.integrity_root,
    actions_hash: h.actions_hash,
    commitment: h.commitment,
    actions_count: h.actions_count,
    total_fee_wei: h.total_fee_wei,
    when_created: h.when_created,
  };
  return hex(sha256(Buffer.from(canonicalJson(header), 'utf8')));
}

const RAW_CODEC = 0x55;
const SHA2_256 = 0x12;

/** `ipfs_url`: `ipfs://` + CIDv1 (raw codec, sha2-256, base32) of the content bytes. */
export function ipfsUrl(content: Uint8Array): string {
  return ipfsUrlOfDigest(sha256(content));
}

/** `ipfs_url` from the SHA-256 of the content bytes. */
export function ipfsUrlOfDigest(sha256Digest: Uint8Array): string {
  const digest = Digest.create(SHA2_256, sha256Digest);
  return `ipfs://${CID.createV1(RAW_CODEC, digest).toString()}`;
}

/**
 * Private actions (docs/batches.md, "What is public"): an action on a private object enters
 * a batch of content version 4 as a salted commitment, never as its text or action hash.
 *
 * salt = HMAC-SHA256(the service's batch salt key, "ons action salt v1" ‖ 0x00 ‖ UTF-8(action
 * id)): 32 bytes only the service can make, handed to a member of the action's organization
 * with its record (`GET /batches/{batchId}/private-actions/{actionId}`) and never to the public.
 */
export const SALT_DOMAIN = Buffer.from('ons action salt v1\u0000', 'utf8');
export const PRIVATE_DOMAIN = Buffer.from('ons private action v1\u0000', 'utf8');

/** An action's salt (see {@link SALT_DOMAIN}); `key` is the salt key's 32 bytes. */
export function actionSalt(key: Uint8Array, actionId: string): Buffer {
  return createHmac('sha256', key).update(SALT_DOMAIN).update(actionId, 'utf8').digest();
}

/**
 * A private action's commitment = H("ons private action v1" ‖ 0x00 ‖ salt ‖ action hash ‖
 * integrity hash it left): the leaf data of `actions_hash` for the action and, for its object's
 * last action in the batch, the value of its `integrity_root` leaf.
 */
export function privateCommitment(salt: Uint8Array, actionHash: string, integrityHash: string) {
  return hex(sha256(PRIVATE_DOMAIN, salt, hashBytes(actionHash), hashBytes(integrityHash)));
}
