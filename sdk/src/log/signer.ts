import { createPrivateKey, createPublicKey, randomBytes, sign } from 'node:crypto';
import { concat, utf8 } from '../verify/bytes.js';
import { fromBase64, toBase64 } from './base64.js';
import { cosignedMessage } from './cosignature.js';
import {
  ALG_COSIGNATURE_V1,
  ALG_ED25519,
  isKeyName,
  keyIdOf,
  NoteError,
  verifierKeyText,
} from './note.js';

/**
 * Node-only signing for the SDK's witness (and tests): Ed25519 keys from a 32-byte seed,
 * note signatures and cosignature/v1 lines. A key file holds Go's signer-key text,
 * `PRIVATE+KEY+<name>+<8 hex id>+base64(0x01 ‖ seed)`, so keys move between this witness
 * and Go tools (golang.org/x/mod/sumdb/note).
 */

const PKCS8_ED25519 = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

export interface SignerKey {
  name: string;
  seed: Uint8Array;
  publicKey: Uint8Array;
  /** Ed25519 signature of `message`. */
  sign(message: Uint8Array): Uint8Array;
}

export function signerFromSeed(name: string, seed: Uint8Array): SignerKey {
  if (!isKeyName(name)) throw new NoteError('malformed key name');
  if (seed.length !== 32) throw new NoteError('an Ed25519 seed is 32 bytes');
  const key = createPrivateKey({
    key: Buffer.from(concat(PKCS8_ED25519, seed)),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  return {
    name,
    seed,
    publicKey,
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
}

/** Go's `PRIVATE+KEY+…` text of a signer. */
export function signerKeyText(s: SignerKey): string {
  const id = keyIdOf(s.name, ALG_ED25519, s.publicKey).toString(16).padStart(8, '0');
  return `PRIVATE+KEY+${s.name}+${id}+${toBase64(concat(Uint8Array.of(ALG_ED25519), s.seed))}`;
}

/** Parses Go's signer-key text; throws NoteError when it is malformed or its id is wrong. */
export function parseSignerKey(text: string): SignerKey {
  const m = /^PRIVATE\+KEY\+([^+]*)\+([^+]*)\+(.*)$/s.exec(text.trim());
  if (!m) throw new NoteError('malformed signer key');
  const [, name, idHex, b64] = m as unknown as [string, string, string, string];
  const raw = fromBase64(b64);
  if (!isKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex) || !raw || raw.length !== 33) {
    throw new NoteError('malformed signer key');
  }
  if (raw[0] !== ALG_ED25519) throw new NoteError('unknown signer key algorithm');
  const s = signerFromSeed(name, raw.slice(1));
  if (keyIdOf(name, ALG_ED25519, s.publicKey) !== parseInt(idHex, 16)) {
    throw new NoteError('signer key id mismatch');
  }
  return s;
}

export const generateSigner = (name: string): SignerKey =>
  signerFromSeed(name, new Uint8Array(randomBytes(32)));

const keyIdBytes = (id: number): Uint8Array => {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, id);
  return out;
};

/** The note signature line (`— name base64(id ‖ sig)`, no newline) of `body`. */
export function noteSignatureLine(s: SignerKey, body: string): string {
  const id = keyIdOf(s.name, ALG_ED25519, s.publicKey);
  return `— ${s.name} ${toBase64(concat(keyIdBytes(id), s.sign(utf8(body))))}`;
}

/** The cosignature/v1 line of `body` at `timestamp` (unix seconds), no newline. */
export function cosignatureLine(s: SignerKey, body: string, timestamp: number): string {
  const id = keyIdOf(s.name, ALG_COSIGNATURE_V1, s.publicKey);
  const t = new Uint8Array(8);
  new DataView(t.buffer).setBigUint64(0, BigInt(timestamp));
  const sig = s.sign(cosignedMessage(body, timestamp));
  return `— ${s.name} ${toBase64(concat(keyIdBytes(id), t, sig))}`;
}

/** A signer's note (0x01) and cosignature (0x04) verifier keys. */
export const noteVerifierKey = (s: SignerKey): string => verifierKeyText(s.name, s.publicKey);
export const cosignatureVerifierKey = (s: SignerKey): string =>
  verifierKeyText(s.name, s.publicKey, ALG_COSIGNATURE_V1);
