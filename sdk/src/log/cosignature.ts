import { utf8 } from '../verify/bytes.js';
import { ALG_COSIGNATURE_V1, ed25519Verify, type NoteSignature, type VerifierKey } from './note.js';

/**
 * C2SP tlog-cosignature v1: a witness's note signature on a checkpoint whose signature bytes
 * (after the 4-byte key id, computed with algorithm byte 0x04) are an 8-byte big-endian unix
 * timestamp ‖ Ed25519 signature of `cosignature/v1\ntime <timestamp>\n` + the checkpoint
 * text. It says: at that time, the witness had checked this checkpoint is consistent with
 * every earlier one it cosigned.
 */
export interface Cosignature {
  /** The witness's key name. */
  name: string;
  /** Unix seconds, as signed. */
  timestamp: number;
  /** The witness's vkey text. */
  key: string;
}

/** The message a cosignature/v1 signs. */
export const cosignedMessage = (body: string, timestamp: number): Uint8Array =>
  utf8(`cosignature/v1\ntime ${timestamp}\n${body}`);

/** The cosignature when `sig` is `key`'s valid cosignature/v1 of `body`, else null. */
export async function verifyCosignature(
  body: string,
  sig: NoteSignature,
  key: VerifierKey,
): Promise<Cosignature | null> {
  if (key.alg !== ALG_COSIGNATURE_V1 || sig.name !== key.name || sig.keyId !== key.keyId) {
    return null;
  }
  if (sig.signature.length !== 72) return null;
  const view = new DataView(sig.signature.buffer, sig.signature.byteOffset, 8);
  const timestamp = view.getBigUint64(0);
  if (timestamp > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const t = Number(timestamp);
  const ok = await ed25519Verify(key.publicKey, sig.signature.slice(8), cosignedMessage(body, t));
  return ok ? { name: key.name, timestamp: t, key: key.text } : null;
}
