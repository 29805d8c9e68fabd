import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inclusionProof, merkleRoot, verifyInclusion } from './merkle.js';

// Independent reference: the recursive definition of RFC 6962 §2.1, written on hex strings.
function h(hex: string): string {
  return createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');
}
function mth(leaves: string[]): string {
  const n = leaves.length;
  if (n === 0) return h('');
  if (n === 1) return h(`00${leaves[0]!}`);
  let k = 1;
  while (k * 2 < n) k *= 2;
  return h(`01${mth(leaves.slice(0, k))}${mth(leaves.slice(k))}`);
}

// Leaves and roots of the certificate-transparency reference Merkle tree tests.
const CT_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
];
const CT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

describe('merkleRoot', () => {
  it('returns SHA-256 of the empty string for no leaves', () => {
    expect(merkleRoot([])).toBe(
      '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('hashes a single leaf with the 0x00 prefix rather than returning it', () => {
    const leaf = `0x${'ab'.repeat(32)}`;
    expect(merkleRoot([leaf])).toBe(`0x${h(`00${'ab'.repeat(32)}`)}`);
    expect(merkleRoot([leaf])).not.toBe(leaf);
  });

  it('matches the certificate-transparency reference roots for 1 to 8 leaves', () => {
    for (let n = 1; n <= CT_LEAVES.length; n++) {
      const leaves = CT_LEAVES.slice(0, n).map((l) => `0x${l}`);
      expect(merkleRoot(leaves), `${n} leaves`).toBe(`0x${CT_ROOTS[n - 1]!}`);
    }
  });

  it('agrees with the recursive RFC 6962 definition for every size up to 70', () => {
    const all = Array.from({ length: 70 }, (_, i) => h(i.toString(16).padStart(2, '0')));
    for (let n = 0; n <= all.length; n++) {
      const leaves = all.slice(0, n);
      expect(merkleRoot(leaves.map((l) => `0x${l}`)), `${n} leaves`).toBe(`0x${mth(leaves)}`);
    }
  });

  it('depends on leaf order and accepts upper-case hex', () => {
    const a = `0x${'11'.repeat(32)}`;
    const b = `0x${'22'.repeat(32)}`;
    expect(merkleRoot([a, b])).not.toBe(merkleRoot([b, a]));
    expect(merkleRoot([a.toUpperCase().replace('0X', '0x'), b])).toBe(merkleRoot([a, b]));
  });

  it('rejects leaves that are not 0x-prefixed whole bytes of hex', () => {
    expect(() => merkleRoot(['abcd'])).toThrow(/leaf 0/);
    expect(() => merkleRoot(['0x', '0xabc'])).toThrow(/leaf 1/);
    expect(() => merkleRoot(['0xzz'])).toThrow();
  });
});

// The certificate-transparency reference inclusion proofs over CT_LEAVES:
// [leaf index, tree size, audit path].
const CT_PROOFS: [number, number, string[]][] = [
  [0, 1, []],
  [
    0,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    5,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    1,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];

const data = (leaves: string[]) => leaves.map((l) => Buffer.from(l, 'hex'));

describe('inclusion proofs', () => {
  it('reproduce the certificate-transparency reference audit paths and verify', () => {
    for (const [index, size, path] of CT_PROOFS) {
      const proof = inclusionProof(data(CT_LEAVES.slice(0, size)), index);
      expect(proof.audit_path).toEqual(path.map((p) => `0x${p}`));
      expect(proof.root).toBe(`0x${CT_ROOTS[size - 1]!}`);
      expect(verifyInclusion(proof, Buffer.from(CT_LEAVES[index]!, 'hex'))).toBe(true);
    }
  });

  it('verify for every leaf of every tree size up to 70, against the recursive root', () => {
    const leaves = Array.from({ length: 70 }, (_, i) => i.toString(16).padStart(4, '0'));
    for (let n = 1; n <= leaves.length; n++) {
      for (let m = 0; m < n; m++) {
        const proof = inclusionProof(data(leaves.slice(0, n)), m);
        expect(proof.root).toBe(`0x${mth(leaves.slice(0, n))}`);
        expect(verifyInclusion(proof)).toBe(true);
      }
    }
  });

  it('fail when any byte of the leaf, a path node, the root, the index or the size changes', () => {
    const leaves = data(CT_LEAVES.slice(0, 7));
    const proof = inclusionProof(leaves, 4);
    const flip = (h: string) => `${h.slice(0, -1)}${h.endsWith('0') ? '1' : '0'}`;
    expect(verifyInclusion(proof, Buffer.from('3032', 'hex'))).toBe(false);
    expect(verifyInclusion({ ...proof, leaf_hash: flip(proof.leaf_hash) })).toBe(false);
    expect(verifyInclusion({ ...proof, root: flip(proof.root) })).toBe(false);
    for (let i = 0; i < proof.audit_path.length; i++) {
      const path = [...proof.audit_path];
      path[i] = flip(path[i]!);
      expect(verifyInclusion({ ...proof, audit_path: path })).toBe(false);
    }
    expect(verifyInclusion({ ...proof, audit_path: proof.audit_path.slice(1) })).toBe(false);
    expect(verifyInclusion({ ...proof, leaf_index: 5 })).toBe(false);
    expect(verifyInclusion({ ...proof, tree_size: 6 })).toBe(false);
    expect(verifyInclusion({ ...proof, leaf_index: 7 })).toBe(false);
    expect(verifyInclusion({ ...proof, audit_path: ['0x12'] })).toBe(false);
  });

  it('refuse an index outside the tree', () => {
    expect(() => inclusionProof(data(['00']), 1)).toThrow(RangeError);
  });
});
