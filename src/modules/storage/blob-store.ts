import type { Readable } from 'node:stream';

/** A stored blob opened for reading: its length, and its bytes as a stream. */
export interface BlobBody {
  size: number;
  /** Must be consumed or destroyed: it may hold a file descriptor or a connection. */
  body: Readable;
}

/**
 * Where file bytes live, keyed by their SHA-256 (lowercase hex, no 0x). Content addressing
 * makes a put idempotent: the same bytes always land under the same key. Reads are streams,
 * never whole buffers: a download holds only a chunk in memory (docs/objects.md, "Files").
 */
export interface BlobStore {
  put(sha256Hex: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The blob opened for reading, or null when nothing is stored under that key. */
  open(sha256Hex: string): Promise<BlobBody | null>;
  /** The blob's length, without opening it (what `HEAD` answers), or null when nothing is stored. */
  size(sha256Hex: string): Promise<number | null>;
}

const KEY_RE = /^[0-9a-f]{64}$/;

/** Refuses anything but a SHA-256 hex key, so a key can never name a path or URL segment. */
export function checkKey(key: string): string {
  if (!KEY_RE.test(key)) throw new Error('blob key must be a lowercase SHA-256 hex digest');
  return key;
}
