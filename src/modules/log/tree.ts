import { createHash } from 'node:crypto';
import { leafHash, nodeHash } from '../../lib/merkle.js';

/**
 * The RFC 6962 / RFC 9162 tree math of the log, pure: which ranges of leaves a proof names,
 * which full subtrees a range is made of, and how stored tiles give a subtree's hash. The
 * tree is never held in memory: every hash comes from the tiles (repo.ts), a few per proof.
 */

/** RFC 6962's leaf and node hashes: the same as every batch's actions_hash uses. */
export { leafHash, nodeHash };

/** A range of leaves [start, end). */
export type Range = readonly [number, number];

/** A full subtree: the 2^level leaves from index × 2^level. */
export interface Subtree {
  level: number;
  index: number;
}

/** Hashes per tile (C2SP tlog-tiles: tile height 8). */
export const TILE_WIDTH = 256;
export const TILE_HEIGHT = 8;

export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

/** The largest power of two strictly below n (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The ranges whose hashes make RFC 6962's PATH(m, D[0:n]), from the leaf's level upwards:
 * at most ⌈log₂ n⌉ of them.
 */
export function inclusionRanges(m: number, n: number): Range[] {
  const out: Range[] = [];
  let a = 0;
  let b = n;
  while (b - a > 1) {
    const k = split(b - a);
    if (m < a + k) {
      out.push([a + k, b]);
      b = a + k;
    } else {
      out.push([a, a + k]);
      a += k;
    }
  }
  return out.reverse();
}

/**
 * The ranges whose hashes make RFC 6962's consistency proof PROOF(m, D[0:n]) (0 < m ≤ n), in
 * order: at most ⌈log₂ n⌉ + 1 of them; none when m = n.
 */
export function consistencyRanges(m: number, n: number): Range[] {
  const out: Range[] = [];
  if (m === n) return out;
  let a = 0;
  let b = n;
  let mm = m;
  let complete = true;
  for (;;) {
    if (mm === b - a) {
      if (!complete) out.push([a, b]);
      break;
    }
    const k = split(b - a);
    if (mm <= k) {
      out.push([a + k, b]);
      b = a + k;
    } else {
      out.push([a, a + k]);
      mm -= k;
      a += k;
      complete = false;
    }
  }
  return out.reverse();
}

/**
 * The full subtrees a range of the RFC 6962 tree is made of, left to right (sizes are the set
 * bits of its length, largest first). Its hash folds them from the right.
 */
export function subtreesOf([start, end]: Range): Subtree[] {
  const out: Subtree[] = [];
  let at = start;
  let left = end - start;
  for (let level = 52; level >= 0 && left > 0; level--) {
    const size = 2 ** level;
    if (left >= size) {
      out.push({ level, index: at / size });
      at += size;
      left -= size;
    }
  }
  return out;
}

/** The hash of a range from its subtrees' hashes (left to right). */
export function foldSubtrees(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) return EMPTY_ROOT;
  let h = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i--) h = nodeHash(hashes[i]!, h);
  return h;
}

/**
 * Where a subtree's hash is computed from: the hashes of tree level 8 × `tile`, nodes
 * [from, to) — one tile's worth at most (level-0 tiles: leaf hashes).
 */
export interface BaseRange {
  tile: number;
  from: number;
  to: number;
}

export function baseOf(s: Subtree): BaseRange {
  const tile = Math.floor(s.level / TILE_HEIGHT);
  const width = 2 ** (s.level - tile * TILE_HEIGHT);
  return { tile, from: s.index * width, to: (s.index + 1) * width };
}

/** Hashes a row of 2^k adjacent full nodes up to their one root. */
export function hashUp(nodes: readonly Buffer[]): Buffer {
  let level = nodes;
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    level = next;
  }
  return level[0]!;
}

/** A tile's hashes as 32-byte buffers (views, not copies). */
export function tileHashes(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i + 32 <= data.length; i += 32) out.push(data.subarray(i, i + 32));
  return out;
}

/** ⌈log₂ n⌉ (0 for n ≤ 1). */
export function ceilLog2(n: number): number {
  let k = 0;
  while (2 ** k < n) k++;
  return k;
}
