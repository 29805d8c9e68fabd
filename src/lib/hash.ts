import { createHash, hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** SHA-256 digest. Strings are hashed as their UTF-8 bytes. */
export function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** `0x` + lowercase hex SHA-256 (docs/api.md, "Values"). */
export function sha256Hex(data: string | Uint8Array): string {
  // The one-shot form: about twice as fast as a Hash object for short inputs.
  return `0x${hash('sha256', data, 'hex')}`;
}

/** `0x` + hex SHA-256 of the RFC 8785 canonical JSON of `value`. */
export function hashJson(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** Lowercase hex SHA-256 of a secret token (refresh tokens, invitations): what is stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Base64url without padding (RFC 4648 §5). */
export function base64url(buf: Uint8Array): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('base64url');
}
