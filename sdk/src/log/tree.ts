import { equalBytes, sha256 } from '../verify/bytes.js';

/**
 * The log's Merkle tree (RFC 6962 §2.1, RFC 9162 §2.1): leaf = H(0x00 ‖ data), node =
 * H(0x01 ‖ left ‖ right), SHA-256. Proof checks follow RFC 9162 §2.1.3.2 (inclusion) and
 * §2.1.4.2 (consistency) and work on raw 32-byte hashes; every malformed input is `false`,
 * never a throw.
 */

export const HASH_SIZE = 32;

export const leafHash = (data: Uint8Array): Uint8Array => sha256(Uint8Array.of(0), data);
export const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array =>
  sha256(Uint8Array.of(1), left, right);

const isSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const isHash = (h: unknown): h is Uint8Array => h instanceof Uint8Array && h.length === HASH_SIZE;

/** MTH of leaf hashes (RFC 6962 §2.1: split at the largest power of two below n). */
export function rootOfLeafHashes(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.length === 0) return sha256();
  // Bottom-up with the unpaired last node carried up: the same tree as the recursive split.
  let level = [...hashes];
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) next.push(level[level.length - 1]!);
    level = next;
  }
  return level[0]!;
}

/** The root an inclusion proof leads to from `leaf` (RFC 9162 §2.1.3.2), or null. */
export function rootFromInclusionProof(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
): Uint8Array | null {
  if (!isSize(index) || !isSize(size) || index >= size || !isHash(leaf)) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (!isHash(p) || sn === 0) return null;
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
  return sn === 0 ? r : null;
}

/** Whether `proof` proves the leaf hash `leaf` is entry `index` of the tree of `size` with `root`. */
export function verifyInclusionProof(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const r = rootFromInclusionProof(index, size, leaf, proof);
  return r !== null && isHash(root) && equalBytes(r, root);
}

/**
 * Whether `proof` proves the tree of `size2` with `root2` extends the tree of `size1` with
 * `root1` (RFC 9162 §2.1.4.2). Equal sizes need an empty proof and equal roots; size 0 is
 * consistent with every tree (with an empty proof).
 */
export function verifyConsistencyProof(
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): boolean {
  if (!isSize(size1) || !isSize(size2) || size1 > size2) return false;
  if (size1 === size2) return proof.length === 0 && isHash(root1) && equalBytes(root1, root2);
  if (size1 === 0) return proof.length === 0;
  if (!isHash(root1) || !isHash(root2) || proof.length === 0) return false;
  if (!proof.every(isHash)) return false;
  // A power-of-two first tree is itself a node of the second: the path starts from its root.
  const path = (size1 & (size1 - 1)) === 0 ? [root1, ...proof] : [...proof];
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(fr, root1) && equalBytes(sr, root2);
}

/** ⌈log₂ n⌉ (0 for n ≤ 1): RFC 9162's bound on an inclusion proof's length. */
export function ceilLog2(n: number): number {
  let bits = 0;
  while (2 ** bits < n) bits++;
  return bits;
}

/**
 * The right edge of a tree (its "compact range"): the roots of the perfect subtrees it
 * splits into, left to right, with their heights. Appending leaves and taking the root
 * needs only these, so a monitor keeps them instead of every leaf.
 */
export interface Frontier {
  size: number;
  nodes: { height: number; hash: Uint8Array }[];
}

export const emptyFrontier = (): Frontier => ({ size: 0, nodes: [] });

/** Appends one leaf hash (in place). */
export function appendLeaf(f: Frontier, leaf: Uint8Array): void {
  let node = { height: 0, hash: leaf };
  while (f.nodes.length > 0 && f.nodes[f.nodes.length - 1]!.height === node.height) {
    const left = f.nodes.pop()!;
    node = { height: node.height + 1, hash: nodeHash(left.hash, node.hash) };
  }
  f.nodes.push(node);
  f.size++;
}

/** The root of the tree the frontier describes. */
export function frontierRoot(f: Frontier): Uint8Array {
  if (f.nodes.length === 0) return sha256();
  let r = f.nodes[f.nodes.length - 1]!.hash;
  for (let i = f.nodes.length - 2; i >= 0; i--) r = nodeHash(f.nodes[i]!.hash, r);
  return r;
}
