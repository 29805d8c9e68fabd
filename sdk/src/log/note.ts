import { buf, concat, equalBytes, sha256, utf8 } from '../verify/bytes.js';
import { fromBase64, toBase64 } from './base64.js';

/**
 * C2SP signed-note: a UTF-8 text ending in a newline, a blank line, then one or more
 * signature lines `— <key name> <base64(4-byte key id ‖ signature)>`. A verifier key is
 * `<name>+<8 hex key id>+<base64(algorithm byte ‖ public key)>`, and the key id is the
 * first 4 bytes of SHA-256(name ‖ 0x0A ‖ algorithm byte ‖ public key). Algorithm 0x01 is
 * Ed25519 over the note text; 0x04 is a tlog-cosignature/v1 (see ./cosignature.ts).
 * Ed25519 checks use WebCrypto, so this runs in browsers and Node alike.
 */

export const ALG_ED25519 = 0x01;
export const ALG_COSIGNATURE_V1 = 0x04;
/** Go's note package refuses more; so do we (a bound on the work one note costs). */
export const MAX_SIGNATURES = 100;

export class NoteError extends Error {
  override name = 'NoteError';
}

export interface VerifierKey {
  name: string;
  /** The 4-byte key id as a number (big-endian), e.g. 0xc74f20a3. */
  keyId: number;
  alg: number;
  publicKey: Uint8Array;
  /** The vkey text it was parsed from. */
  text: string;
}

export interface NoteSignature {
  name: string;
  keyId: number;
  /** The signature bytes after the key id. */
  signature: Uint8Array;
  /** The whole line without its newline. */
  line: string;
}

export interface Note {
  /** The signed text, ending in a newline (without the blank line). */
  body: string;
  signatures: NoteSignature[];
}

/** A key name: non-empty, no `+`, no whitespace or other control/space characters. */
export const isKeyName = (name: string): boolean =>
  name.length > 0 && !/[+\s\p{Cc}\p{Z}]/u.test(name);

export function keyIdOf(name: string, alg: number, publicKey: Uint8Array): number {
  const h = sha256(utf8(name), Uint8Array.of(0x0a, alg), publicKey);
  return new DataView(h.buffer, h.byteOffset, 4).getUint32(0);
}

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

/** The vkey text of an Ed25519 (0x01) or cosignature (0x04) key. */
export function verifierKeyText(name: string, publicKey: Uint8Array, alg = ALG_ED25519): string {
  if (!isKeyName(name)) throw new NoteError('malformed key name');
  const id = keyIdOf(name, alg, publicKey);
  return `${name}+${hex8(id)}+${toBase64(concat(Uint8Array.of(alg), publicKey))}`;
}

/** Parses and checks a vkey; throws NoteError when it is malformed or its key id is wrong. */
export function parseVerifierKey(text: string): VerifierKey {
  // `+` may also appear in the base64: split at the first two only.
  const m = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(text);
  if (!m) throw new NoteError('malformed verifier key');
  const [, name, idHex, b64] = m as unknown as [string, string, string, string];
  if (!isKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) {
    throw new NoteError('malformed verifier key');
  }
  const raw = fromBase64(b64);
  if (!raw || raw.length !== 33) throw new NoteError('malformed verifier key');
  const alg = raw[0]!;
  if (alg !== ALG_ED25519 && alg !== ALG_COSIGNATURE_V1) {
    throw new NoteError('unknown verifier key algorithm');
  }
  const publicKey = raw.slice(1);
  const keyId = parseInt(idHex, 16);
  if (keyIdOf(name, alg, publicKey) !== keyId) throw new NoteError('verifier key id mismatch');
  return { name, keyId, alg, publicKey, text };
}

const SIG_PREFIX = '\u2014 ';

/**
 * Splits a signed note into its text and signature lines (no signature is checked here).
 * Throws NoteError('malformed note') on anything the format does not allow.
 */
export function parseNote(message: string): Note {
  // Control characters other than newline are not allowed anywhere (as in Go's note).
  if (/[\p{Cc}]/u.test(message.replace(/\n/g, ''))) throw new NoteError('malformed note');
  if (/[\uD800-\uDFFF]/.test(message.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) {
    throw new NoteError('malformed note');
  }
  const split = message.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('malformed note');
  const body = message.slice(0, split + 1);
  const block = message.slice(split + 2);
  if (block.length === 0 || !block.endsWith('\n')) throw new NoteError('malformed note');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteError('malformed note');
  const signatures = lines.map((line): NoteSignature => {
    if (!line.startsWith(SIG_PREFIX)) throw new NoteError('malformed note');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    if (space < 0) throw new NoteError('malformed note');
    const name = rest.slice(0, space);
    const raw = fromBase64(rest.slice(space + 1));
    if (!isKeyName(name) || !raw || raw.length < 5) throw new NoteError('malformed note');
    const keyId = new DataView(raw.buffer, raw.byteOffset, 4).getUint32(0);
    return { name, keyId, signature: raw.slice(4), line };
  });
  return { body, signatures };
}

/** A note's bytes as text: refuses what is not UTF-8 (NoteError 'malformed note'). */
export function decodeNote(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new NoteError('malformed note');
  }
}

/** An Ed25519 check with WebCrypto; false (never a throw) on any malformed input. */
export async function ed25519Verify(
  publicKey: Uint8Array,
  signature: Uint8Array,
  message: Uint8Array,
): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const subtle = globalThis.crypto.subtle;
  return subtle
    .importKey('raw', buf(publicKey), { name: 'Ed25519' }, false, ['verify'])
    .then((k) => subtle.verify({ name: 'Ed25519' }, k, buf(signature), buf(message)))
    .catch(() => false);
}

/** Whether `sig` is `key`'s (name and key id) Ed25519 (0x01) signature of `body`. */
export async function verifyNoteSignature(
  body: string,
  sig: NoteSignature,
  key: VerifierKey,
): Promise<boolean> {
  if (key.alg !== ALG_ED25519 || sig.name !== key.name || sig.keyId !== key.keyId) return false;
  return ed25519Verify(key.publicKey, sig.signature, utf8(body));
}

export interface OpenedNote extends Note {
  /** The signatures made by one of the given keys, each verified (one per key). */
  verified: { key: VerifierKey; signature: NoteSignature }[];
  /** Signatures by keys not given (not checked). */
  unverified: NoteSignature[];
}

/**
 * Go's `note.Open`: parses the note and checks every signature whose name and key id match
 * one of `keys` (Ed25519 keys only; cosignatures: ./cosignature.ts). A bad signature by a
 * known key throws `invalid signature for key <name>+<id>`; a note with no signature by a
 * known key throws `note has no verifiable signatures`. Duplicate lines count once.
 */
export async function openNote(message: string, keys: readonly VerifierKey[]): Promise<OpenedNote> {
  const note = parseNote(message);
  const verified: OpenedNote['verified'] = [];
  const unverified: NoteSignature[] = [];
  const seen = new Set<string>();
  for (const sig of note.signatures) {
    if (seen.has(sig.line)) continue;
    seen.add(sig.line);
    const matching = keys.filter((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (matching.length > 1 && new Set(matching.map((k) => k.text)).size > 1) {
      throw new NoteError(`ambiguous key ${sig.name}+${hex8(sig.keyId)}`);
    }
    const key = matching[0];
    if (!key || key.alg !== ALG_ED25519) {
      unverified.push(sig);
      continue;
    }
    if (!(await verifyNoteSignature(note.body, sig, key))) {
      throw new NoteError(`invalid signature for key ${sig.name}+${hex8(sig.keyId)}`);
    }
    if (!verified.some((v) => v.key === key && equalBytes(v.signature.signature, sig.signature))) {
      verified.push({ key, signature: sig });
    }
  }
  if (verified.length === 0) throw new NoteError('note has no verifiable signatures');
  return { ...note, verified, unverified };
}
