import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ALG_COSIGNATURE_V1,
  NoteSigner,
  parseVerifierKey,
  privateKeyOfSeed,
  rawPublicKeyOf,
  splitNote,
  verifierKey,
  verifyNoteLine,
} from './note.js';
import { parseWitnesses } from './witness.js';
import { formatIndex, parseTilePath, tilePath } from './tiles.js';
import {
  ceilLog2,
  consistencyRanges,
  foldSubtrees,
  inclusionRanges,
  leafHash,
  nodeHash,
  subtreesOf,
  type Range,
} from './tree.js';
// The proofs are checked with the SDK's verifier: the service only makes them.
import { verifyConsistencyProof, verifyInclusionProof } from '../../../sdk/src/log/tree.js';

interface Vectors {
  rfc6962: {
    leaves: string[];
    roots: string[];
    inclusion: { index: number; size: number; proof: string[] }[];
    consistency: { from: number; to: number; proof: string[] }[];
  };
  signed_note: { signer_key: string; verifier_key: string; text: string; signature_line: string };
}
const vectors = JSON.parse(
  readFileSync(new URL('../../../test/vectors/tlog.json', import.meta.url), 'utf8'),
) as Vectors;
const b = (hex: string) => Buffer.from(hex, 'hex');
const leaves = vectors.rfc6962.leaves.map(b);

/** RFC 6962 MTH, recursive, straight from the RFC's definition. */
function mth(data: Buffer[]): Buffer {
  if (data.length === 0) return createHash('sha256').digest();
  if (data.length === 1) return leafHash(data[0]!);
  let k = 1;
  while (k * 2 < data.length) k *= 2;
  return nodeHash(mth(data.slice(0, k)), mth(data.slice(k)));
}
const rangeHash = (data: Buffer[], [a, z]: Range) => mth(data.slice(a, z));
/** The range hash again, through the full-subtree decomposition the service reads tiles by. */
const viaSubtrees = (data: Buffer[], r: Range) =>
  foldSubtrees(
    subtreesOf(r).map((s) => mth(data.slice(s.index * 2 ** s.level, (s.index + 1) * 2 ** s.level))),
  );

describe('RFC 6962 tree math against the published CT vectors', () => {
  it('roots of every prefix', () => {
    vectors.rfc6962.roots.forEach((root, i) => {
      expect(mth(leaves.slice(0, i + 1)).toString('hex')).toBe(root);
      expect(viaSubtrees(leaves, [0, i + 1]).toString('hex')).toBe(root);
    });
  });

  it('inclusion proofs: the ranges served hash to the published proof, which verifies', () => {
    for (const v of vectors.rfc6962.inclusion) {
      const proof = inclusionRanges(v.index, v.size).map((r) => viaSubtrees(leaves, r));
      expect(proof.map((p) => p.toString('hex'))).toEqual(v.proof);
      const root = b(vectors.rfc6962.roots[v.size - 1]!);
      expect(verifyInclusionProof(v.index, v.size, leafHash(leaves[v.index]!), proof, root)).toBe(
        true,
      );
      expect(
        verifyInclusionProof(v.index + 1, v.size, leafHash(leaves[v.index]!), proof, root),
      ).toBe(false);
    }
  });

  it('consistency proofs: the ranges served hash to the published proof, which verifies', () => {
    for (const v of vectors.rfc6962.consistency) {
      const proof = consistencyRanges(v.from, v.to).map((r) => rangeHash(leaves, r));
      expect(proof.map((p) => p.toString('hex'))).toEqual(v.proof);
      const [r1, r2] = [b(vectors.rfc6962.roots[v.from - 1]!), b(vectors.rfc6962.roots[v.to - 1]!)];
      expect(verifyConsistencyProof(v.from, v.to, proof, r1, r2)).toBe(true);
      if (proof.length > 0) {
        expect(verifyConsistencyProof(v.from, v.to, proof, r2, r1)).toBe(false);
        expect(verifyConsistencyProof(v.from, v.to, proof.slice(1), r1, r2)).toBe(false);
      }
    }
  });

  it("every proof over sizes 1…40 verifies and keeps RFC 9162's bounds", () => {
    const data = Array.from({ length: 40 }, (_, i) => Buffer.from([i, i * 7]));
    for (let n = 1; n <= 40; n++) {
      const root = mth(data.slice(0, n));
      for (let m = 0; m < n; m++) {
        const proof = inclusionRanges(m, n).map((r) => viaSubtrees(data, r));
        expect(proof.length).toBeLessThanOrEqual(ceilLog2(n));
        expect(verifyInclusionProof(m, n, leafHash(data[m]!), proof, root)).toBe(true);
        const c = consistencyRanges(m + 1, n).map((r) => viaSubtrees(data, r));
        expect(c.length).toBeLessThanOrEqual(ceilLog2(n) + 1);
        expect(verifyConsistencyProof(m + 1, n, c, mth(data.slice(0, m + 1)), root)).toBe(true);
      }
    }
  });
});

describe('signed notes against the Go reference example', () => {
  const v = vectors.signed_note;
  const seed = Buffer.from(v.signer_key.split('+').slice(4).join('+'), 'base64');

  it('signs byte for byte as golang.org/x/mod/sumdb/note does, with the same key id and key', () => {
    expect(seed[0]).toBe(0x01);
    const signer = new NoteSigner('PeterNeumann', privateKeyOfSeed(seed.subarray(1)));
    expect(signer.verifierKey).toBe(v.verifier_key);
    expect(signer.sign(v.text)).toBe(`${v.text}\n${v.signature_line}`);
  });

  it('verifies the published note and refuses a changed one', () => {
    const key = parseVerifierKey(v.verifier_key)!;
    expect(key.id.toString('hex')).toBe('c74f20a3');
    const note = splitNote(`${v.text}\n${v.signature_line}`)!;
    expect(verifyNoteLine(note.body, note.lines[0]!, key)).toBe(true);
    expect(verifyNoteLine(note.body.replace('answer', 'Answer'), note.lines[0]!, key)).toBe(false);
    expect(parseVerifierKey(v.verifier_key.replace('c74f20a3', 'c74f20a4'))).toBeNull();
  });
});

describe('tile paths (C2SP tlog-tiles)', () => {
  it('writes and reads N in x-prefixed 3-digit groups', () => {
    expect(formatIndex(0)).toBe('000');
    expect(formatIndex(1234067)).toBe('x001/x234/067');
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 'entries', index: 5, width: 17 })).toBe('tile/entries/005.p/17');
    expect(parseTilePath('0/x001/x234/067')).toEqual({ level: 0, index: 1234067, width: 256 });
    expect(parseTilePath('entries/005.p/17')).toEqual({ level: 'entries', index: 5, width: 17 });
  });

  it('refuses what is not a canonical tile path', () => {
    for (const bad of [
      '0/5',
      '0/0005',
      '0/x000/005',
      '0/005.p/0',
      '0/005.p/256',
      '0/005.p/07',
      '9/000',
      'x/000',
      '0/005.p/',
    ]) {
      expect(parseTilePath(bad), bad).toBeNull();
    }
  });
});

describe('verifier keys and LOG_WITNESSES', () => {
  it("reads back every key it writes, '+' in the base64 or not", () => {
    for (let i = 0; i < 64; i++) {
      const signer = new NoteSigner('log.example', privateKeyOfSeed(Buffer.alloc(32, i)));
      const v = parseVerifierKey(signer.verifierKey);
      expect(v?.key.equals(signer.publicKey), signer.verifierKey).toBe(true);
    }
  });

  it('parses <type 0x04 key>=<url> pairs and refuses anything else', () => {
    const key = privateKeyOfSeed(Buffer.alloc(32, 3));
    const vkey = verifierKey('w.example', ALG_COSIGNATURE_V1, rawPublicKeyOf(key));
    expect(parseWitnesses(` ${vkey}=https://w.example/a/ ,`)).toMatchObject([
      { vkey, url: 'https://w.example/a', verifier: { name: 'w.example' } },
    ]);
    const noteKey = verifierKey('w.example', 0x01, rawPublicKeyOf(key));
    for (const bad of [
      vkey,
      `${vkey}=ftp://w.example`,
      `${noteKey}=https://w.example`,
      '=https://x',
    ]) {
      expect(() => parseWitnesses(bad), bad).toThrow(/LOG_WITNESSES/);
    }
  });
});
