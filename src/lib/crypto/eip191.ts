import type * as Secp256k1 from 'secp256k1';
import { keccak256 } from './keccak.js';
import { loadNative } from './native.js';

// The native libsecp256k1 binding only (the pure-JS `elliptic` build is ~20x slower).
const secp = loadNative<typeof Secp256k1>('secp256k1/bindings', 'secp256k1');

export type RecoverResult = { ok: true; address: string } | { ok: false; reason: string };

const SIGNATURE_RE = /^0x[0-9a-fA-F]*$/;
const PREFIX = '\x19Ethereum Signed Message:\n';

/** keccak256("\x19Ethereum Signed Message:\n" + byteLength(text) + text), as personal_sign. */
export function eip191Digest(text: string): Uint8Array {
  const message = Buffer.from(text, 'utf8');
  return keccak256(Buffer.from(`${PREFIX}${message.length}`, 'latin1'), message);
}

/**
 * A signature split for recovery: r ‖ s, the recovery id and the text it signs. The digest
 * is taken where the recovery runs (on the recovery thread when there is one).
 */
export interface RecoveryInput {
  text: string;
  signature: Uint8Array;
  recid: number;
}

/**
 * Checks the form of an EIP-191 personal_sign signature (`0x` + r ‖ s ‖ v, 65 bytes) over
 * `text` and prepares its recovery, or says what is wrong with it.
 */
export function recoveryInput(
  text: string,
  signatureHex: string,
): { ok: true; input: RecoveryInput } | { ok: false; reason: string } {
  if (typeof signatureHex !== 'string' || !SIGNATURE_RE.test(signatureHex)) {
    return { ok: false, reason: 'signature is not 0x-prefixed hex' };
  }
  if (signatureHex.length !== 2 + 130) {
    return { ok: false, reason: 'signature must be 65 bytes' };
  }
  const sig = Buffer.from(signatureHex.slice(2), 'hex');
  const v = sig[64]!;
  let recid: number;
  if (v === 27 || v === 28) recid = v - 27;
  else if (v === 0 || v === 1) recid = v;
  else return { ok: false, reason: 'signature v must be 27, 28, 0 or 1' };
  // A copy with a buffer of its own: a view into Buffer's shared pool would take the whole
  // pool with it when posted to the recovery thread.
  return { ok: true, input: { text, signature: new Uint8Array(sig.subarray(0, 64)), recid } };
}

/** The lowercase `0x` address a prepared signature recovers, or null. */
export function recoverAddress(input: RecoveryInput): string | null {
  let publicKey: Uint8Array;
  try {
    publicKey = secp.ecdsaRecover(input.signature, input.recid, eip191Digest(input.text), false);
  } catch {
    return null;
  }
  const hash = keccak256(publicKey.subarray(1));
  return `0x${hash.toString('hex', 12)}`;
}

export const NOT_RECOVERED = 'signature does not recover a public key';

/**
 * Recover the signer of an EIP-191 personal_sign signature (`0x` + r ‖ s ‖ v, 65 bytes) over
 * `text`. Returns the lowercase `0x` address. Malformed or unrecoverable signatures are
 * returned as `{ok: false}`, never thrown.
 */
export function recoverEip191Address(text: string, signatureHex: string): RecoverResult {
  const prepared = recoveryInput(text, signatureHex);
  if (!prepared.ok) return prepared;
  const address = recoverAddress(prepared.input);
  return address === null ? { ok: false, reason: NOT_RECOVERED } : { ok: true, address };
}
