import type { Executor } from '../../db/pool.js';
import * as repo from './repo.js';
import {
  baseOf,
  consistencyRanges,
  foldSubtrees,
  hashUp,
  inclusionRanges,
  leafHash,
  subtreesOf,
  TILE_HEIGHT,
  TILE_WIDTH,
  type BaseRange,
  type Range,
  type Subtree,
} from './tree.js';

/**
 * The hashes of full subtrees, read from the stored tiles: every subtree of a request is
 * computed from at most one tile's worth of hashes one tile level down, and all of a
 * request's tiles come in one statement (entries for level 0, log_tiles above) — so a proof
 * costs one read and at most a few hundred SHA-256 per tile level whatever the tree's size.
 * Only subtrees of complete nodes are asked for (inside a tree size the log has reached).
 */
export function subtreeHashes(exec: Executor, subtrees: readonly Subtree[]): Promise<Buffer[]> {
  return baseHashes(exec, subtrees.map(baseOf));
}

/** The root of each run of hashes one tile level down (see {@link subtreeHashes}). */
async function baseHashes(exec: Executor, bases: readonly BaseRange[]): Promise<Buffer[]> {
  const tileKeys = new Map<string, { level: number; idx: number }>();
  for (const b of bases) {
    if (b.tile === 0) continue;
    const idx = Math.floor(b.from / TILE_WIDTH);
    tileKeys.set(`${b.tile}/${idx}`, { level: b.tile, idx });
  }
  const { leaves, tiles } = await repo.treeNodes(
    exec,
    mergeRanges(bases.filter((b) => b.tile === 0)),
    [...tileKeys.values()],
  );
  return bases.map((b) => {
    const nodes: Buffer[] = [];
    if (b.tile === 0) {
      for (let i = b.from; i < b.to; i++) {
        const leaf = leaves.get(i);
        if (!leaf) throw new Error(`log: leaf ${i} is missing`);
        nodes.push(leafHash(leaf));
      }
    } else {
      const idx = Math.floor(b.from / TILE_WIDTH);
      const data = tiles.get(`${b.tile}/${idx}`);
      const off = (b.from - idx * TILE_WIDTH) * 32;
      const end = (b.to - idx * TILE_WIDTH) * 32;
      if (!data || data.length < end) throw new Error(`log: tile ${b.tile}/${idx} is short`);
      for (let o = off; o < end; o += 32) nodes.push(data.subarray(o, o + 32));
    }
    return hashUp(nodes);
  });
}

/**
 * Leaf ranges sorted and joined where they touch: an inclusion proof's eight leaf-level
 * siblings are the leaf's 256-leaf block less the leaf itself, two index range scans.
 */
function mergeRanges(bases: readonly BaseRange[]): { from: number; to: number }[] {
  const out: { from: number; to: number }[] = [];
  for (const b of [...bases].sort((x, y) => x.from - y.from)) {
    const last = out[out.length - 1];
    if (last && b.from <= last.to) last.to = Math.max(last.to, b.to);
    else out.push({ from: b.from, to: b.to });
  }
  return out;
}

/** The hashes of ranges of the tree (each an RFC 6962 node or the root of a prefix). */
export async function rangeHashes(exec: Executor, ranges: readonly Range[]): Promise<Buffer[]> {
  const parts = ranges.map(subtreesOf);
  const all = await subtreeHashes(exec, parts.flat());
  let at = 0;
  return parts.map((p) => {
    const h = foldSubtrees(all.slice(at, at + p.length));
    at += p.length;
    return h;
  });
}

export async function rootAt(exec: Executor, size: number): Promise<Buffer> {
  const [root] = await rangeHashes(exec, [[0, size]]);
  return root!;
}

export function inclusionProofOf(exec: Executor, index: number, size: number): Promise<Buffer[]> {
  return rangeHashes(exec, inclusionRanges(index, size));
}

export function consistencyProofOf(exec: Executor, from: number, to: number): Promise<Buffer[]> {
  return rangeHashes(exec, consistencyRanges(from, to));
}

/**
 * After leaves [start, end) were written: the nodes of tree levels 8, 16, … they complete,
 * each level computed from the one below (written just before, in the same transaction),
 * added to the end of their tiles.
 */
export async function extendTiles(tx: Executor, start: number, end: number): Promise<void> {
  for (let tile = 1; 2 ** (TILE_HEIGHT * tile) <= end; tile++) {
    const span = 2 ** (TILE_HEIGHT * tile);
    const first = Math.floor(start / span);
    const last = Math.floor(end / span); // exclusive
    if (first >= last) continue;
    // Each new node from the 256 nodes below it (one tile of the level below).
    const subtrees: Subtree[] = [];
    const bases: BaseRange[] = [];
    for (let j = first; j < last; j++) {
      subtrees.push({ level: TILE_HEIGHT * tile, index: j });
      bases.push({ tile: tile - 1, from: j * TILE_WIDTH, to: (j + 1) * TILE_WIDTH });
    }
    const hashes = await baseHashes(tx, bases);
    // Grouped by tile, in order: each group continues its tile's data.
    let i = 0;
    while (i < subtrees.length) {
      const idx = Math.floor(subtrees[i]!.index / TILE_WIDTH);
      const group: Buffer[] = [];
      while (i < subtrees.length && Math.floor(subtrees[i]!.index / TILE_WIDTH) === idx) {
        group.push(hashes[i]!);
        i++;
      }
      await repo.appendToTile(tx, tile, idx, Buffer.concat(group));
    }
  }
}
