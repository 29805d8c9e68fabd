import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

/**
 * C2SP signed-note, tlog-checkpoint and tlog-cosignature (docs/log.md, "Formats"): the
 * log's checkpoints are notes signed with Ed25519 (signature type 0x01); witnesses cosign
 * them (type 0x04, with a timestamp).
 */

export const ALG_ED25519 = 0x01;
export const ALG_COSIGNATURE_V1 = 0x04;

/** The DER prefixes of raw Ed25519 keys (RFC 8410). */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** U+2014 em dash + space: what starts a signature line. */
export const SIG_PREFIX = '\u2014 ';

export function publicKeyOf(raw: Uint8Array): KeyObject {
  return createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  });
}

export function privateKeyOfSeed(seed: Uint8Array): KeyObject {
  return createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
}

export function rawPublicKeyOf(key: KeyObject): Buffer {
  return createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
}

/** signed-note key id: the first 4 bytes of SHA-256(name ‖ 0x0A ‖ alg ‖ public key). */
export function keyId(name: string, alg: number, raw: Uint8Array): Buffer {
  return createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.of(0x0a, alg))
    .update(raw)
    .digest()
    .subarray(0, 4);
}

/** A verifier key in its text form: `<name>+<8 hex key id>+<base64(alg ‖ public key)>`. */
export function verifierKey(name: string, alg: number, raw: Uint8Array): string {
  const id = keyId(name, alg, raw).toString('hex');
  return `${name}+${id}+${Buffer.concat([Buffer.of(alg), raw]).toString('base64')}`;
}

export interface Verifier {
  name: string;
  alg: number;
  id: Buffer;
  key: Buffer;
}

/** Parses a verifier key; null when it is not one (wrong form, key id, or length). */
export function parseVerifierKey(text: string): Verifier | null {
  // The name has no '+'; the base64 key may.
  const m = /^([^+]+)\+([^+]*)\+(.*)$/s.exec(text);
  if (!m) return null;
  const [, name, idHex, b64] = m as unknown as [string, string, string, string];
  if (name === '' || /\s/.test(name) || !/^[0-9a-f]{8}$/.test(idHex)) return null;
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length !== 33 || bytes.toString('base64') !== b64) return null;
  const alg = bytes[0]!;
  const key = bytes.subarray(1);
  const id = keyId(name, alg, key);
  if (id.toString('hex') !== idHex) return null;
  return { name, alg, id, key };
}

/** The log's signer: an Ed25519 key named by the log's origin. */
export class NoteSigner {
  readonly publicKey: Buffer;
  readonly id: Buffer;
  readonly verifierKey: string;

  constructor(
    readonly name: string,
    private readonly key: KeyObject,
  ) {
    this.publicKey = rawPublicKeyOf(key);
    this.id = keyId(name, ALG_ED25519, this.publicKey);
    this.verifierKey = verifierKey(name, ALG_ED25519, this.publicKey);
  }

  /** The signed note: body, blank line, this key's signature line. */
  sign(body: string): string {
    const sig = sign(null, Buffer.from(body, 'utf8'), this.key);
    const line = `${SIG_PREFIX}${this.name} ${Buffer.concat([this.id, sig]).toString('base64')}\n`;
    return `${body}\n${line}`;
  }
}

/** A signed note split into its body and signature lines. */
export function splitNote(note: string): { body: string; lines: string[] } | null {
  const at = note.indexOf('\n\n');
  if (at < 0 || !note.endsWith('\n')) return null;
  const body = note.slice(0, at + 1);
  const lines = note
    .slice(at + 2, -1)
    .split('\n')
    .filter((l) => l !== '');
  return { body, lines };
}

/**
 * The bytes of a signature line for `v`, or null when the line is not by that key. The
 * base64 must be canonical (standard alphabet, padded, nothing after it), as a verifier
 * reading the served note requires: Node's decoder alone would also take URL-safe, unpadded
 * or trailing characters, and a line kept so would break every client's check of the note.
 */
function lineBytes(line: string, v: Verifier): Buffer | null {
  if (!line.startsWith(SIG_PREFIX)) return null;
  const rest = line.slice(SIG_PREFIX.length);
  const sp = rest.lastIndexOf(' ');
  if (sp < 0 || rest.slice(0, sp) !== v.name) return null;
  const b64 = rest.slice(sp + 1);
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.toString('base64') !== b64) return null;
  if (bytes.length < 4 || !bytes.subarray(0, 4).equals(v.id)) return null;
  return bytes;
}

/** Whether a note line is a valid Ed25519 signature of `body` by `v` (type 0x01). */
export function verifyNoteLine(body: string, line: string, v: Verifier): boolean {
  const bytes = lineBytes(line, v);
  if (bytes === null || bytes.length !== 68 || v.alg !== ALG_ED25519) return false;
  return verify(null, Buffer.from(body, 'utf8'), publicKeyOf(v.key), bytes.subarray(4));
}

/** The message a tlog-cosignature/v1 signs. */
export function cosignedMessage(body: string, time: bigint): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${time}\n${body}`, 'utf8');
}

/** A cosignature line's timestamp when it is valid for `body` by `v` (type 0x04), else null. */
export function verifyCosignatureLine(body: string, line: string, v: Verifier): bigint | null {
  const bytes = lineBytes(line, v);
  if (bytes === null || bytes.length !== 76 || v.alg !== ALG_COSIGNATURE_V1) return null;
  const time = bytes.readBigUInt64BE(4);
  const ok = verify(null, cosignedMessage(body, time), publicKeyOf(v.key), bytes.subarray(12));
  return ok ? time : null;
}

/** A cosignature line (tests' witnesses, and the format's one definition here). */
export function cosign(name: string, key: KeyObject, body: string, time: bigint): string {
  const raw = rawPublicKeyOf(key);
  const ts = Buffer.alloc(8);
  ts.writeBigUInt64BE(time);
  const sig = sign(null, cosignedMessage(body, time), key);
  const id = keyId(name, ALG_COSIGNATURE_V1, raw);
  return `${SIG_PREFIX}${name} ${Buffer.concat([id, ts, sig]).toString('base64')}`;
}

/** The checkpoint body (C2SP tlog-checkpoint) with the batch extension line. */
export function checkpointBody(
  origin: string,
  size: number,
  root: Uint8Array,
  batch: { sequence: number; hash: string },
): string {
  return (
    `${origin}\n${size}\n${Buffer.from(root).toString('base64')}\n` +
    `ons-batch ${batch.sequence} ${batch.hash}\n`
  );
}
