import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key secrets (docs/api.md, "API keys"): `onsk_` + 32 random bytes in base62 (43 characters) +
 * a 6-character base62 checksum (CRC32 of the body). The checksum lets a mistyped or
 * made-up key be refused before any cache or database lookup; it guards against typos and
 * noise, not forgery (the 256 random bits are the secret), so a fast CRC suffices.
 */
export const SECRET_PREFIX = 'onsk_';
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32, so every CRC32 fits
const SECRET_LENGTH = SECRET_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_RE = new RegExp(
  `^${SECRET_PREFIX}([0-9A-Za-z]{${BODY_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`,
);

function toBase62(value: bigint, length: number): string {
  let out = '';
  let v = value;
  while (v > 0n) {
    out = BASE62[Number(v % 62n)]! + out;
    v /= 62n;
  }
  return out.padStart(length, '0');
}

function checksumOf(body: string): string {
  // Native CRC and plain numbers: this runs on every request that carries a key.
  let v = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[v % 62]! + out;
    v = Math.floor(v / 62);
  }
  return out;
}

/** A new secret; shown to the creator once and never stored. */
export function newSecret(): string {
  const body = toBase62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
  return `${SECRET_PREFIX}${body}${checksumOf(body)}`;
}

/** True when `secret` has the format and a matching checksum (no lookup involved). */
export function isWellFormedSecret(secret: string): boolean {
  if (secret.length !== SECRET_LENGTH) return false;
  const m = SECRET_RE.exec(secret);
  return m !== null && checksumOf(m[1]!) === m[2];
}

/** What the database keeps and what the verification cache is keyed by. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}
