import { describe, expect, it } from 'vitest';
import { appendLeaf, emptyFrontier, frontierRoot } from '../sdk/src/log/tree.js';
import { hashUp, leafHash, nodeHash } from '../src/modules/log/tree.js';
import { syntheticLeaf } from '../test/helpers/synthetic-log.js';
import {
  bytesOfWords,
  leafDataWords,
  leafHashWords,
  nodeHashWords,
  SyntheticTree,
  wordsOfBytes,
} from './log-seed-hash.js';

describe("the seeder's SHA-256", () => {
  it('gives the synthetic leaves and the RFC 6962 leaf and node hashes node:crypto gives', () => {
    const out = new Int32Array(24);
    for (const i of [0, 1, 255, 256, 65_537, 9_999_999, 2 ** 32 + 5, 2 ** 40 + 3]) {
      leafDataWords(i, out, 0);
      expect(bytesOfWords(out, 0).toString('hex')).toBe(syntheticLeaf(i).toString('hex'));
      leafHashWords(out, 0, out, 8);
      expect(bytesOfWords(out, 8).toString('hex')).toBe(leafHash(syntheticLeaf(i)).toString('hex'));
      const left = syntheticLeaf(i);
      const right = syntheticLeaf(i + 1);
      out.set(wordsOfBytes(left), 0);
      out.set(wordsOfBytes(right), 8);
      nodeHashWords(out, 0, 8, out, 16);
      expect(bytesOfWords(out, 16).toString('hex')).toBe(nodeHash(left, right).toString('hex'));
      // In place, over its left input (as the seeder reduces a tile).
      nodeHashWords(out, 0, 8, out, 0);
      expect(bytesOfWords(out, 0).toString('hex')).toBe(nodeHash(left, right).toString('hex'));
    }
  });
});

describe('SyntheticTree', () => {
  // Past 256² leaves, so level-2 tiles exist; the sizes straddle tile edges.
  const N = 70_000;
  const sizes = [1, 2, 3, 255, 256, 257, 511, 65_535, 65_536, 65_537, 69_999, 12_345];
  const leaves = Array.from({ length: N }, (_, i) => leafHash(syntheticLeaf(i)));

  it('computes the root at every asked size as the SDK does from the leaves', () => {
    const tree = new SyntheticTree(N, sizes);
    while (!tree.done) tree.advance(7);
    tree.finish();
    const f = emptyFrontier();
    const want = new Set([...sizes, N]);
    for (let i = 0; i < N; i++) {
      appendLeaf(f, leaves[i]!);
      if (want.has(i + 1)) {
        expect(tree.roots.get(i + 1)?.toString('hex'), `size ${i + 1}`).toBe(
          Buffer.from(frontierRoot(f)).toString('hex'),
        );
      }
    }
    expect(tree.roots.size).toBe(want.size);
  });

  it('writes the tiles the log keeps: every complete node of levels 8 and 16', () => {
    const tree = new SyntheticTree(N);
    while (!tree.done) tree.advance(100);
    tree.finish();
    const level8: Buffer[] = [];
    for (let j = 0; (j + 1) * 256 <= N; j++)
      level8.push(hashUp(leaves.slice(j * 256, j * 256 + 256)));
    const level16 = [hashUp(level8.slice(0, 256))];
    const rows = tree.rows.map((r) => ({ ...r, data: r.data.toString('hex') }));
    expect(rows).toEqual([
      { level: 1, idx: 0, data: Buffer.concat(level8.slice(0, 256)).toString('hex') },
      { level: 1, idx: 1, data: Buffer.concat(level8.slice(256)).toString('hex') },
      { level: 2, idx: 0, data: Buffer.concat(level16).toString('hex') },
    ]);
    expect(level8.length).toBe(273);
  });
});
