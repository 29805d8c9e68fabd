import { createHash } from 'node:crypto';

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);
const HEX_RE = /^0x(?:[0-9a-fA-F]{2})*$/;

function leafHash(leaf: Buffer): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(leaf).digest();
}

function nodeHash(left: Buffer, right: Buffer): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/**
 * RFC 6962 §2.1 Merkle Tree Hash over `0x`-hex leaves, returned as `0x` + lowercase hex.
 *
 * MTH({}) = SHA-256(""), MTH({d}) = SHA-256(0x00 || d), and for n > 1 the list splits at
 * the largest power of two below n: SHA-256(0x01 || MTH(left) || MTH(right)).
 *
 * Computed bottom-up: pairing neighbours level by level and carrying an unpaired last
 * node up unchanged gives exactly the same tree as the recursive split, without
 * recursion or slicing.
 */
export function merkleRoot(leaves: readonly string[]): string {
  if (leaves.length === 0) {
    return `0x${createHash('sha256').digest('hex')}`;
  }
  let level: Buffer[] = leaves.map((leaf, i) => {
    if (!HEX_RE.test(leaf)) {
      throw new Error(`merkleRoot: leaf ${i} is not 0x-prefixed hex bytes`);
    }
    return leafHash(Buffer.from(leaf.slice(2), 'hex'));
  });
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) {
      next.push(nodeHash(level[i]!, level[i + 1]!));
    }
    if (level.length % 2 === 1) {
      next.push(level[level.length - 1]!);
    }
    level = next;
  }
  return `0x${level[0]!.toString('hex')}`;
}
