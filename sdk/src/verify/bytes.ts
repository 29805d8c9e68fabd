import { sha256 as nobleSha256 } from '@noble/hashes/sha2';

/** Synchronous SHA-256 (@noble/hashes: the same in browsers and Node). */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = nobleSha256.create();
  for (const p of parts) h.update(p);
  return h.digest();
}

const encoder = new TextEncoder();
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

export function hex(bytes: Uint8Array): string {
  let out = '0x';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

const HASH_RE = /^0x[0-9a-f]{64}$/;

/** The 32 bytes of a `0x` + 64 lowercase hex hash, or null when it is not one. */
export function hashBytes(h: unknown): Uint8Array | null {
  if (typeof h !== 'string' || !HASH_RE.test(h)) return null;
  return hexBytes(h);
}

/** Bytes of `0x` + even-length hex (any case), or null. */
export function hexBytes(h: string): Uint8Array | null {
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(h)) return null;
  const out = new Uint8Array((h.length - 2) / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 + i * 2, 4 + i * 2), 16);
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** base64url (with or without padding) to bytes; null when it is not base64url. */
export function fromBase64url(s: unknown): Uint8Array | null {
  if (typeof s !== 'string' || !/^[A-Za-z0-9_-]*={0,2}$/.test(s)) return null;
  const b64 = s.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  try {
    const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** An ArrayBuffer-backed copy, as WebCrypto's types want. */
export const buf = (b: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(b);
