import { createHash, createPublicKey, verify } from 'node:crypto';

/**
 * The transparency log's formats rebuilt from their definitions (RFC 6962/9162, C2SP
 * signed-note and tlog-checkpoint), written apart from src/modules/log so that a test checks
 * the service against something other than itself.
 */

export const H = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
export const bytes = (hash: string): Buffer => Buffer.from(hash.replace(/^0x/, ''), 'hex');
export const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;

/** RFC 6962 MTH over leaf data, recursive. */
export function mth(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return H();
  if (leaves.length === 1) return H(Buffer.of(0), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return H(Buffer.of(1), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** RFC 9162 §2.1.3.2: the root an inclusion proof leads to. */
export function rootFromInclusion(index: number, size: number, leafHash: Buffer, proof: Buffer[]) {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = H(Buffer.of(1), p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = H(Buffer.of(1), r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 §2.1.4.2: whether a consistency proof leads from root1 (size m) to root2 (size n). */
export function consistent(m: number, n: number, proof: Buffer[], root1: Buffer, root2: Buffer) {
  if (m === n) return proof.length === 0 && root1.equals(root2);
  let path = proof;
  if ((m & (m - 1)) === 0) path = [root1, ...proof];
  let fn = m - 1;
  let sn = n - 1;
  while (fn & 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      fr = H(Buffer.of(1), c, fr);
      sr = H(Buffer.of(1), c, sr);
      while (!(fn & 1) && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      sr = H(Buffer.of(1), sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(root1) && sr.equals(root2);
}

export interface ParsedCheckpoint {
  body: string;
  origin: string;
  size: number;
  root: Buffer;
  extension: string;
  signatures: { name: string; bytes: Buffer }[];
}

export function parseCheckpoint(text: string): ParsedCheckpoint {
  const [body, sigs] = text.split('\n\n') as [string, string];
  const lines = body.split('\n');
  return {
    body: `${body}\n`,
    origin: lines[0]!,
    size: Number(lines[1]),
    root: Buffer.from(lines[2]!, 'base64'),
    extension: lines[3] ?? '',
    signatures: sigs
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(l);
        if (!m) throw new Error(`not a signature line: ${l}`);
        return { name: m[1]!, bytes: Buffer.from(m[2]!, 'base64') };
      }),
  };
}

/** Verifies a signed-note Ed25519 line against a `<name>+<id>+<base64>` verifier key. */
export function verifyWithVkey(body: string, sig: { name: string; bytes: Buffer }, vkey: string) {
  const [name, id, ...rest] = vkey.split('+') as [string, string, ...string[]];
  const b64 = rest.join('+');
  const key = Buffer.from(b64, 'base64');
  if (key[0] !== 0x01 || sig.name !== name) return false;
  const keyId = H(Buffer.from(name), Buffer.of(0x0a), key).subarray(0, 4);
  if (keyId.toString('hex') !== id || !sig.bytes.subarray(0, 4).equals(keyId)) return false;
  const pub = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), key.subarray(1)]),
    format: 'der',
    type: 'spki',
  });
  return verify(null, Buffer.from(body), pub, sig.bytes.subarray(4));
}
