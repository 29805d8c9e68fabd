/**
 * Where file bytes live, keyed by their SHA-256 (lowercase hex, no 0x). Content addressing
 * makes a put idempotent: the same bytes always land under the same key.
 */
export interface BlobStore {
  put(sha256Hex: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes, or null when nothing is stored under that key. */
  get(sha256Hex: string): Promise<Buffer | null>;
}

const KEY_RE = /^[0-9a-f]{64}$/;

/** Refuses anything but a SHA-256 hex key, so a key can never name a path or URL segment. */
export function checkKey(key: string): string {
  if (!KEY_RE.test(key)) throw new Error('blob key must be a lowercase SHA-256 hex digest');
  return key;
}
