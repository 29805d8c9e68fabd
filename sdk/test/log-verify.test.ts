import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  appendLeaf,
  ceilLog2,
  COSIGNATURE_MAX_AHEAD_SECONDS,
  decodeNote,
  emptyFrontier,
  entriesPath,
  entryTilesFor,
  frontierRoot,
  leafHash,
  nodeHash,
  openNote,
  parseCheckpointBody,
  parseEntryBundle,
  parseNote,
  parseVerifierKey,
  rootFromInclusionProof,
  rootOfLeafHashes,
  tilePath,
  verifyCheckpoint,
  verifyConsistencyProof,
  verifyInclusionProof,
} from '@ons/sdk';
import { inclusionProof as serviceInclusionProof } from '../../src/lib/merkle.js';
import {
  cosignatureLine,
  cosignatureVerifierKey,
  generateSigner,
  noteSignatureLine,
  noteVerifierKey,
  parseSignerKey,
  signerKeyText,
} from '../src/log/signer.js';
import * as goNote from './vectors/go-sumdb-note.js';
import * as ct from './vectors/rfc6962-merkle.js';

/** Issue 33 item (a): the log's verifiers against independent vectors and a reference. */

const h = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const sha = (...parts: Uint8Array[]): Uint8Array => {
  const c = createHash('sha256');
  for (const p of parts) c.update(p);
  return new Uint8Array(c.digest());
};
const leafData = ct.leaves.map(h);
const leafHashes = leafData.map(leafHash);
const roots = ct.roots.map(h);

describe('RFC 6962 hashes and proofs (transparency-dev/merkle vectors)', () => {
  it('computes the published roots of every prefix of the 8-leaf tree', () => {
    for (let n = 1; n <= 8; n++) {
      expect(Buffer.from(rootOfLeafHashes(leafHashes.slice(0, n))).toString('hex')).toBe(
        ct.roots[n - 1],
      );
      const f = emptyFrontier();
      for (const l of leafHashes.slice(0, n)) appendLeaf(f, l);
      expect(Buffer.from(frontierRoot(f)).toString('hex')).toBe(ct.roots[n - 1]);
    }
    expect(Buffer.from(rootOfLeafHashes([])).toString('hex')).toBe(ct.emptyTreeHash);
  });

  it('verifies the published inclusion proofs and refuses every corruption Go probes', () => {
    for (const v of ct.inclusionProofs) {
      const index = v.leaf - 1;
      const proof = v.proof.map(h);
      const root = roots[v.size - 1]!;
      const leaf = leafHashes[index]!;
      expect(verifyInclusionProof(index, v.size, leaf, proof, root)).toBe(true);
      const probes: [number, number, Uint8Array, Uint8Array[], Uint8Array][] = [
        [index - 1, v.size, leaf, proof, root],
        [index + 1, v.size, leaf, proof, root],
        [index ^ 2, v.size, leaf, proof, root],
        [index, v.size * 2, leaf, proof, root],
        [index, Math.floor(v.size / 2), leaf, proof, root],
        [index, v.size, new TextEncoder().encode('WrongLeaf'), proof, root],
        [index, v.size, leaf, proof, h(ct.emptyTreeHash)],
        [index, v.size, leaf, proof, h(ct.someHash)],
        [index, v.size, leaf, [...proof, new Uint8Array()], root],
        [index, v.size, leaf, [...proof, root], root],
        [index, v.size, leaf, [new Uint8Array(), ...proof], root],
        [index, v.size, leaf, [root, ...proof], root],
        [index, v.size, leaf, proof.slice(0, -1), root],
        [index, v.size, leaf, [proof[0]!, h(ct.someHash), ...proof.slice(1)], root],
        ...proof.map((_, i): [number, number, Uint8Array, Uint8Array[], Uint8Array] => {
          const bad = proof.map((p) => p.slice());
          bad[i]![0]! ^= 8;
          return [index, v.size, leaf, bad, root];
        }),
      ];
      for (const p of probes) expect(verifyInclusionProof(...p), JSON.stringify(p[0])).toBe(false);
    }
    // A one-leaf tree: the leaf is the root and the proof is empty.
    expect(verifyInclusionProof(0, 1, leafHashes[0]!, [], leafHashes[0]!)).toBe(true);
    for (const [i, n] of [
      [0, 0],
      [1, 0],
      [2, 1],
    ]) {
      expect(verifyInclusionProof(i!, n!, h(ct.someHash), [], h(ct.emptyTreeHash))).toBe(false);
    }
  });

  it('verifies the published consistency proofs and refuses every corruption Go probes', () => {
    for (const v of ct.consistencyProofs) {
      const proof = v.proof.map(h);
      const r1 = roots[v.size1 - 1]!;
      const r2 = roots[v.size2 - 1]!;
      expect(verifyConsistencyProof(v.size1, v.size2, proof, r1, r2)).toBe(true);
      if (proof.length === 0) continue;
      const { size1: a, size2: b } = v;
      const wrong = new TextEncoder().encode('WrongRoot');
      const probes: [number, number, Uint8Array[], Uint8Array, Uint8Array][] = [
        [a - 1, b, proof, r1, r2],
        [a + 1, b, proof, r1, r2],
        [a ^ 2, b, proof, r1, r2],
        [a, b * 2, proof, r1, r2],
        [a, Math.floor(b / 2), proof, r1, r2],
        [a, b, proof, wrong, r2],
        [a, b, proof, r1, wrong],
        [a, b, proof, r2, r1],
        [a, b, [], r1, r2],
        [a, b, [...proof, new Uint8Array()], r1, r2],
        [a, b, [...proof, r1], r1, r2],
        [a, b, [...proof, r2], r1, r2],
        [a, b, [new Uint8Array(), ...proof], r1, r2],
        [a, b, [r1, ...proof], r1, r2],
        [a, b, [r2, ...proof], r1, r2],
        [a, b, [proof[0]!, ...proof], r1, r2],
        [a, b, proof.slice(0, -1), r1, r2],
        ...proof.map((_, i): [number, number, Uint8Array[], Uint8Array, Uint8Array] => {
          const bad = proof.map((p) => p.slice());
          bad[i]![0]! ^= 16;
          return [a, b, bad, r1, r2];
        }),
      ];
      for (const p of probes) expect(verifyConsistencyProof(...p)).toBe(false);
    }
  });

  it("follows Go's table of edge cases (empty trees, time travel, non-empty proofs)", () => {
    const r1 = new TextEncoder().encode("don't care 1");
    const r2 = new TextEncoder().encode("don't care 2");
    const e = h(ct.emptyTreeHash);
    const cases: [number, number, Uint8Array, Uint8Array, Uint8Array[], boolean][] = [
      [0, 0, r1, r2, [], false],
      [1, 1, r1, r2, [], false],
      [0, 0, e, e, [], true],
      [0, 1, r1, r2, [], true],
      [1, 1, roots[0]!, roots[0]!, [], true],
      [1, 0, r1, r2, [], false],
      [2, 1, r1, r2, [], false],
      [1, 2, r1, r2, [], false],
      [0, 0, e, r2, [], false],
      [1, 1, e, r2, [], false],
      [0, 0, e, e, [e], false],
      [0, 1, e, e, [e], false],
      [1, 1, e, e, [e], false],
    ];
    for (const [a, b, x, y, p, want] of cases) {
      expect(verifyConsistencyProof(a, b, p, x, y), `${a}→${b}`).toBe(want);
    }
  });
});

/** RFC 6962 §2.1.1 PATH and §2.1.2 SUBPROOF, written from the RFC's recursive definitions. */
const split = (n: number): number => 2 ** Math.floor(Math.log2(n - 1));
function refPath(m: number, d: Uint8Array[]): Uint8Array[] {
  if (d.length <= 1) return [];
  const k = split(d.length);
  return m < k
    ? [...refPath(m, d.slice(0, k)), rootOfLeafHashes(d.slice(k))]
    : [...refPath(m - k, d.slice(k)), rootOfLeafHashes(d.slice(0, k))];
}
function refSubproof(m: number, d: Uint8Array[], b: boolean): Uint8Array[] {
  const n = d.length;
  if (m === n) return b ? [] : [rootOfLeafHashes(d)];
  const k = split(n);
  return m <= k
    ? [...refSubproof(m, d.slice(0, k), b), rootOfLeafHashes(d.slice(k))]
    : [...refSubproof(m - k, d.slice(k), false), rootOfLeafHashes(d.slice(0, k))];
}

describe('property: random trees against the RFC definitions', () => {
  // A fixed-seed generator, so a failure can be replayed.
  let seed = 0x5eed;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const all = Array.from({ length: 300 }, (_, i) => leafHash(sha(Uint8Array.of(i >> 8, i))));

  it('accepts every proof of 200 random (index, size) and (m, n) pairs within RFC 9162 bounds', () => {
    for (let t = 0; t < 200; t++) {
      const n = 1 + rand(all.length);
      const d = all.slice(0, n);
      const root = rootOfLeafHashes(d);
      const i = rand(n);
      const path = refPath(i, d);
      expect(path.length).toBeLessThanOrEqual(ceilLog2(n));
      expect(verifyInclusionProof(i, n, d[i]!, path, root)).toBe(true);
      expect(rootFromInclusionProof(i, n, d[i]!, path)).toEqual(root);
      // The service's batch proofs (src/lib/merkle.ts) are a second implementation.
      const svc = serviceInclusionProof(
        Array.from({ length: n }, (_, j) => sha(Uint8Array.of(j >> 8, j))),
        i,
      );
      expect(svc.audit_path.map((p) => p.slice(2))).toEqual(
        path.map((p) => Buffer.from(p).toString('hex')),
      );
      const m = 1 + rand(n);
      const proof = m === n ? [] : refSubproof(m, d, true);
      expect(proof.length).toBeLessThanOrEqual(ceilLog2(n) + 1);
      const r1 = rootOfLeafHashes(d.slice(0, m));
      expect(verifyConsistencyProof(m, n, proof, r1, root)).toBe(true);
      if (m < n) {
        expect(verifyConsistencyProof(m, n, proof, root, root)).toBe(false);
        expect(verifyConsistencyProof(m, n, proof, r1, nodeHash(root, root))).toBe(false);
      }
    }
  });
});

describe("signed notes (Go's golang.org/x/mod/sumdb/note vectors)", () => {
  it('parses the published verifier keys and refuses every mangling of them', () => {
    const k = parseVerifierKey(goNote.peterKey);
    expect(k).toMatchObject({ name: 'PeterNeumann', keyId: 0xc74f20a3, alg: 1 });
    expect(parseVerifierKey(goNote.enochKey).keyId).toBe(0xaf0cfe78);
    const b = goNote.peterKey;
    const bad: string[] = [...goNote.badKeys];
    for (let i = 0; i <= b.length; i++) {
      for (let j = i + 1; j <= b.length; j++)
        if (i !== 0 || j !== b.length) bad.push(b.slice(i, j));
    }
    for (let i = 0; i < b.length; i++) {
      bad.push(b.slice(0, i) + String.fromCharCode(b.charCodeAt(i) + 1) + b.slice(i + 1));
    }
    for (const s of bad) expect(() => parseVerifierKey(s), s).toThrow();
  });

  it("signs exactly Go's signature with Go's signer key (Ed25519 is deterministic)", () => {
    const s = parseSignerKey(goNote.peterSigner);
    expect(signerKeyText(s)).toBe(goNote.peterSigner);
    expect(noteVerifierKey(s)).toBe(goNote.peterKey);
    expect(`${noteSignatureLine(s, goNote.text)}\n`).toBe(goNote.peterSig);
  });

  it('opens notes as Go does: verified, unverified, invalid, duplicated', async () => {
    const peter = parseVerifierKey(goNote.peterKey);
    const enoch = parseVerifierKey(goNote.enochKey);
    const msg = `${goNote.text}\n${goNote.peterSig}${goNote.enochSig}`;
    const one = await openNote(msg, [peter]);
    expect(one.body).toBe(goNote.text);
    expect(one.verified.map((v) => v.key.name)).toEqual(['PeterNeumann']);
    expect(one.unverified.map((s) => s.name)).toEqual(['EnochRoot']);
    const both = await openNote(msg, [peter, enoch]);
    expect(both.verified.map((v) => v.key.name)).toEqual(['PeterNeumann', 'EnochRoot']);
    await expect(openNote(msg, [])).rejects.toThrow('note has no verifiable signatures');
    const tooMany = `${goNote.text}\n${goNote.peterSig.repeat(101)}`;
    await expect(openNote(tooMany, [peter])).rejects.toThrow('malformed note');
    const p = goNote.peterSig;
    await expect(
      openNote(`${goNote.text}\n${p.slice(0, 60)}ABCD${p.slice(60)}`, [peter]),
    ).rejects.toThrow('invalid signature for key PeterNeumann+c74f20a3');
    const e = goNote.enochSig;
    const dup = await openNote(
      `${goNote.text}\n${p}${p}${e}${e}${e.slice(0, 60)}ABCD${e.slice(60)}`,
      [peter],
    );
    expect(dup.verified).toHaveLength(1);
    expect(dup.unverified).toHaveLength(2);
  });

  it('refuses the malformed notes Go refuses', () => {
    const t = goNote.text;
    const p = goNote.peterSig;
    const bad = [
      t,
      `${t}\n`,
      `${t}\n${p.slice(0, -1)}`,
      `\u0001${t}\n${p}`,
      `${t}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${t}\n${p}Unexpected line.\n`,
    ];
    for (const m of bad) expect(() => parseNote(m), JSON.stringify(m)).toThrow('malformed note');
    const invalidUtf8 = new Uint8Array([0xff, ...new TextEncoder().encode(`${t}\n${p}`)]);
    expect(() => decodeNote(invalidUtf8)).toThrow('malformed note');
  });
});

describe('checkpoints and cosignatures (the contract of docs/log.md)', () => {
  const log = generateSigner('log.example.org');
  const w1 = generateSigner('witness.example.org/w1');
  const w2 = generateSigner('witness.example.org/w2');
  const root = sha(Uint8Array.of(7));
  const hash = `0x${'ab'.repeat(32)}`;
  const body = `log.example.org\n42\n${Buffer.from(root).toString('base64')}\nons-batch 9 ${hash}\n`;
  const signed = `${body}\n${noteSignatureLine(log, body)}\n`;
  const cosigned = (...lines: string[]) => `${signed}${lines.map((l) => `${l}\n`).join('')}`;
  const opts = { logKey: noteVerifierKey(log) };

  it('parses the body: origin, size, root and the ons-batch extension', () => {
    const c = parseCheckpointBody(body);
    expect(c).toMatchObject({ origin: 'log.example.org', size: 42, batch: { sequence: 9, hash } });
    expect(c.root).toEqual(root);
    for (const b of [
      'o\n01\nAAAA\n',
      `o\n1\n${Buffer.from(root).toString('base64')}`,
      `o\n1\n${Buffer.from(root.slice(1)).toString('base64')}\n`,
      `o\n1\n${Buffer.from(root).toString('base64')}\nons-batch 0 ${hash}\n`,
      `o\n1\n${Buffer.from(root).toString('base64')}\n\n`,
    ]) {
      expect(() => parseCheckpointBody(b), b).toThrow();
    }
  });

  it("accepts the log's signature and each given witness's cosignature, and counts the quorum", async () => {
    const text = cosigned(cosignatureLine(w1, body, 1_700_000_000));
    const r = await verifyCheckpoint(text, {
      ...opts,
      witnessKeys: [cosignatureVerifierKey(w1), cosignatureVerifierKey(w2)],
      minCosignatures: 1,
    });
    expect(r.errors).toEqual([]);
    expect(r.cosignatures).toEqual([
      { name: w1.name, timestamp: 1_700_000_000, key: cosignatureVerifierKey(w1) },
    ]);
    const two = await verifyCheckpoint(text, {
      ...opts,
      witnessKeys: [cosignatureVerifierKey(w1), cosignatureVerifierKey(w2)],
      minCosignatures: 2,
    });
    expect(two.ok).toBe(false);
    expect(two.errors).toEqual(['cosignatures: 1 valid, at least 2 required']);
    // One witness named twice is still one cosignature.
    const twice = await verifyCheckpoint(text, {
      ...opts,
      witnessKeys: [cosignatureVerifierKey(w1), cosignatureVerifierKey(w1)],
      minCosignatures: 2,
    });
    expect(twice.errors).toEqual(['cosignatures: 1 valid, at least 2 required']);
    expect(twice.cosignatures).toHaveLength(1);
    // A quorum that is not a whole number ≥ 0 is refused, never taken as none.
    for (const minCosignatures of [Number.NaN, -1, 1.5, Infinity]) {
      const bad = await verifyCheckpoint(text, {
        ...opts,
        witnessKeys: [cosignatureVerifierKey(w1)],
        minCosignatures,
      });
      expect(bad.errors, String(minCosignatures)).toEqual([
        'key: minCosignatures is not a whole number ≥ 0',
      ]);
    }
  });

  it('counts only cosignatures within maxAgeSeconds, when asked (a frozen log is stale)', async () => {
    const t = 1_700_000_000;
    const text = cosigned(`${cosignatureLine(w1, body, t)}\n${cosignatureLine(w2, body, t - 100)}`);
    const keys = { ...opts, witnessKeys: [cosignatureVerifierKey(w1), cosignatureVerifierKey(w2)] };
    // Each age against each quorum: a cosignature counts while now − its time ≤ maxAge.
    for (const [now, min, fresh] of [
      [t + 3600, 2, 1],
      [t + 3500, 2, 2],
      [t + 3600, 1, 1],
      [t + 3601, 1, 0],
      [t - 50, 2, 2],
    ] as const) {
      const r = await verifyCheckpoint(text, {
        ...keys,
        minCosignatures: min,
        maxAgeSeconds: 3600,
        now,
      });
      expect(r.cosignatures, `${now} ${min}`).toHaveLength(2);
      expect(r.errors, `${now} ${min}`).toEqual(
        fresh >= min
          ? []
          : [
              `stale: ${fresh} of the cosignatures are at most 3600 s old, at least ${min} ` +
                `required (the newest is ${now - t} s old)`,
            ],
      );
    }
    // Without maxAgeSeconds age is not looked at; a quorum short anyway says so, not stale.
    expect(
      (await verifyCheckpoint(text, { ...keys, minCosignatures: 2, now: t + 10 ** 6 })).errors,
    ).toEqual([]);
    expect(
      (await verifyCheckpoint(text, { ...keys, minCosignatures: 3, maxAgeSeconds: 60, now: t }))
        .errors,
    ).toEqual(['cosignatures: 2 valid, at least 3 required']);
    for (const maxAgeSeconds of [0, -1, 1.5, Number.NaN, Infinity]) {
      const bad = await verifyCheckpoint(text, { ...keys, minCosignatures: 1, maxAgeSeconds });
      expect(bad.errors, String(maxAgeSeconds)).toEqual([
        'key: maxAgeSeconds is not a whole number > 0',
      ]);
    }
  });

  it('does not count as fresh a cosignature dated more than 600 s ahead of its clock', async () => {
    const now = 1_800_000_000;
    const keys = {
      ...opts,
      witnessKeys: [cosignatureVerifierKey(w1), cosignatureVerifierKey(w2)],
      maxAgeSeconds: 3600,
      now,
    };
    // A witness a day ahead: never stale by age, so without the bound it would count as
    // fresh for a day (a made-up time in 2100: until then).
    const aDayAhead = cosigned(cosignatureLine(w1, body, now + 86_400));
    const r = await verifyCheckpoint(aDayAhead, { ...keys, minCosignatures: 1 });
    expect(r.cosignatures.map((c) => c.timestamp)).toEqual([now + 86_400]);
    expect(r.errors).toEqual([
      'stale: 0 of the cosignatures are at most 3600 s old, at least 1 required ' +
        '(1 dated over 600 s ahead of this clock)',
    ]);
    // With a fresh one beside it, the quorum of 1 holds and of 2 does not.
    const both = cosigned(
      cosignatureLine(w1, body, now + 601),
      cosignatureLine(w2, body, now - 100),
    );
    expect((await verifyCheckpoint(both, { ...keys, minCosignatures: 1 })).errors).toEqual([]);
    expect((await verifyCheckpoint(both, { ...keys, minCosignatures: 2 })).errors).toEqual([
      'stale: 1 of the cosignatures are at most 3600 s old, at least 2 required ' +
        '(the newest is 100 s old; 1 dated over 600 s ahead of this clock)',
    ]);
    // Up to 600 s ahead is a clock's skew, and counts.
    const skewed = cosigned(cosignatureLine(w1, body, now + COSIGNATURE_MAX_AHEAD_SECONDS));
    expect((await verifyCheckpoint(skewed, { ...keys, minCosignatures: 1 })).errors).toEqual([]);
    expect(COSIGNATURE_MAX_AHEAD_SECONDS).toBe(600);
  });

  it('refuses a bad signature, another key, another origin and a forged cosignature', async () => {
    const other = generateSigner('log.example.org');
    const forged = `${body}\n${noteSignatureLine(other, body)}\n`;
    expect((await verifyCheckpoint(forged, opts)).errors).toEqual([
      "signature: no signature by the log's key",
    ]);
    const tampered = signed.replace('\n42\n', '\n43\n');
    expect((await verifyCheckpoint(tampered, opts)).errors).toEqual([
      "signature: the log's signature does not verify",
    ]);
    const renamed = generateSigner('elsewhere.example');
    expect(
      (await verifyCheckpoint(signed, { logKey: noteVerifierKey(renamed) })).errors[0],
    ).toMatch(/^signature: the checkpoint's origin/);
    // A cosignature over another time than the one it claims.
    const line = cosignatureLine(w1, body, 1_700_000_000);
    const raw = Buffer.from(line.split(' ')[2]!, 'base64');
    raw.writeBigUInt64BE(1_700_000_001n, 4);
    const moved = `— ${w1.name} ${raw.toString('base64')}`;
    const r = await verifyCheckpoint(cosigned(moved), {
      ...opts,
      witnessKeys: [cosignatureVerifierKey(w1)],
    });
    expect(r.errors).toEqual([`cosignature: ${w1.name}'s cosignature does not verify`]);
    // A note key (0x01) is not a witness key.
    expect(
      (await verifyCheckpoint(signed, { ...opts, witnessKeys: [noteVerifierKey(w1)] })).errors,
    ).toEqual(['key: a witness key is not a cosignature/v1 key']);
  });
});

describe('tiles', () => {
  it('writes C2SP tile paths and splits entry bundles', () => {
    expect(tilePath(0, 1234067)).toBe('tile/0/x001/x234/067');
    expect(tilePath(1, 5, 17)).toBe('tile/1/005.p/17');
    expect(entriesPath(0)).toBe('tile/entries/000');
    expect(entryTilesFor(250, 600, 600)).toEqual([
      { index: 0, width: 256 },
      { index: 1, width: 256 },
      { index: 2, width: 88 },
    ]);
    const bundle = Buffer.concat([Buffer.from([0, 2, 9, 9]), Buffer.from([0, 1, 7])]);
    expect(parseEntryBundle(bundle)).toEqual([Uint8Array.of(9, 9), Uint8Array.of(7)]);
    expect(() => parseEntryBundle(bundle, 3)).toThrow();
    expect(() => parseEntryBundle(bundle.subarray(0, 5))).toThrow('truncated');
  });
});
