import { createHash, hash } from 'node:crypto';

const HEX_RE = /^0x(?:[0-9a-fA-F]{2})*$/;

/** RFC 6962 leaf hash: H(0x00 ‖ data). */
export function leafHash(data: Uint8Array): Buffer {
  const input = Buffer.allocUnsafe(data.length + 1);
  input[0] = 0x00;
  input.set(data, 1);
  return hash('sha256', input, 'buffer');
}

/** RFC 6962 node hash: H(0x01 ‖ left ‖ right), both 32 bytes. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  const input = Buffer.allocUnsafe(65);
  input[0] = 0x01;
  input.set(left, 1);
  input.set(right, 33);
  return hash('sha256', input, 'buffer');
}

/** `0x` + lowercase hex of bytes. */
const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;

/** The 32 raw bytes of a `0x` + 64-hex hash, or null when it is not one. */
function hashBytes(h: string): Buffer | null {
  return /^0x[0-9a-fA-F]{64}$/.test(h) ? Buffer.from(h.slice(2), 'hex') : null;
}

/**
 * The leaf hashes of a level, bottom-up: RFC 6962 leaf = H(0x00 ‖ data), each input written
 * into one scratch buffer (a batch has thousands of leaves).
 */
function leafLevel(leaves: readonly Uint8Array[]): Buffer[] {
  let scratch = Buffer.allocUnsafe(1);
  return leaves.map((leaf) => {
    if (scratch.length < leaf.length + 1) scratch = Buffer.allocUnsafe(leaf.length + 1);
    scratch[0] = 0x00;
    scratch.set(leaf, 1);
    return hash('sha256', scratch.subarray(0, leaf.length + 1), 'buffer');
  });
}

/** One level up: neighbours paired, an unpaired last node carried up unchanged. */
function nextLevel(level: readonly Buffer[]): Buffer[] {
  const next: Buffer[] = [];
  const input = Buffer.allocUnsafe(65);
  input[0] = 0x01;
  for (let i = 0; i + 1 < level.length; i += 2) {
    input.set(level[i]!, 1);
    input.set(level[i + 1]!, 33);
    next.push(hash('sha256', input, 'buffer'));
  }
  if (level.length % 2 === 1) next.push(level[level.length - 1]!);
  return next;
}

/**
 * RFC 6962 §2.1 Merkle Tree Hash over raw leaf data: MTH({}) = SHA-256(""),
 * MTH({d}) = SHA-256(0x00 ‖ d), and for n > 1 the list splits at the largest power of two
 * below n: SHA-256(0x01 ‖ MTH(left) ‖ MTH(right)).
 *
 * Computed bottom-up: pairing neighbours level by level and carrying an unpaired last
 * node up unchanged gives exactly the same tree as the recursive split, without
 * recursion or slicing.
 */
export function merkleRootOfData(leaves: readonly Uint8Array[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  let level = leafLevel(leaves);
  while (level.length > 1) level = nextLevel(level);
  return level[0]!;
}

/** {@link merkleRootOfData} over `0x`-hex leaves, answered as `0x` + lowercase hex. */
export function merkleRoot(leaves: readonly string[]): string {
  const data = leaves.map((leaf, i) => {
    if (!HEX_RE.test(leaf)) {
      throw new Error(`merkleRoot: leaf ${i} is not 0x-prefixed hex bytes`);
    }
    return Buffer.from(leaf.slice(2), 'hex');
  });
  return hex(merkleRootOfData(data));
}

/** An RFC 6962 inclusion proof, every hash `0x` + 64 lowercase hex. */
export interface InclusionProof {
  leaf_index: number;
  tree_size: number;
  /** RFC 6962 §2.1.1 PATH(leaf_index, D[tree_size]), from the leaf's level upwards. */
  audit_path: string[];
  /** H(0x00 ‖ leaf data). */
  leaf_hash: string;
  root: string;
}

/**
 * The inclusion proof of leaf `index` in the tree over `leaves` (raw leaf data). On the
 * bottom-up tree the audit path is the node's sibling at every level where it has one (a
 * node carried up unpaired adds nothing), which is RFC 6962's PATH(m, D[n]).
 */
export function inclusionProof(leaves: readonly Uint8Array[], index: number): InclusionProof {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) {
    throw new RangeError(`inclusionProof: leaf ${index} is not in a tree of ${leaves.length}`);
  }
  let level = leafLevel(leaves);
  const leaf = level[index]!;
  const path: string[] = [];
  let i = index;
  while (level.length > 1) {
    const sibling = i ^ 1;
    if (sibling < level.length) path.push(hex(level[sibling]!));
    level = nextLevel(level);
    i >>= 1;
  }
  return {
    leaf_index: index,
    tree_size: leaves.length,
    audit_path: path,
    leaf_hash: hex(leaf),
    root: hex(level[0]!),
  };
}

/** The leaf hash RFC 6962 gives leaf data: `0x` + hex of H(0x00 ‖ data). */
export function merkleLeafHash(data: Uint8Array): string {
  return hex(leafHash(Buffer.from(data)));
}

/**
 * Checks an inclusion proof (RFC 9162 §2.1.3.2): rebuilds the root from the leaf hash and
 * the audit path and compares it with `root`. `leafData`, when given, must hash to
 * `leaf_hash`. Needs nothing but SHA-256: anyone can run it on what the explorer serves.
 */
export function verifyInclusion(proof: InclusionProof, leafData?: Uint8Array): boolean {
  const { leaf_index: index, tree_size: size } = proof;
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    return false;
  }
  const leaf = hashBytes(proof.leaf_hash);
  const root = hashBytes(proof.root);
  if (!leaf || !root || !Array.isArray(proof.audit_path)) return false;
  if (leafData !== undefined && !leaf.equals(leafHash(Buffer.from(leafData)))) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const node of proof.audit_path) {
    const p = typeof node === 'string' ? hashBytes(node) : null;
    if (!p || sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}
