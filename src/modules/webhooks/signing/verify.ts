import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Checks an `X-Webhook-Signature` header (spec §6.3) for a receiver. No dependency on the
 * rest of the service: the SDK re-exports this file as it is.
 */

/** About five minutes either way (spec §8). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface VerifyInput {
  /** The header's value: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`. */
  header: string;
  /** The request body exactly as received (bytes, or the same text). */
  body: string | Uint8Array;
  /** The webhook's signing key as given at creation: 64 hex characters. */
  signingKey: string;
  /** The receiver's time; defaults to now. */
  now?: Date;
  toleranceSeconds?: number;
}

export type VerifyResult =
  { ok: true; timestamp: number } | { ok: false; reason: 'malformed' | 'timestamp' | 'signature' };

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const HEX_MAC = /^[0-9a-f]{64}$/;

export function verifyWebhookSignature(input: VerifyInput): VerifyResult {
  if (!HEX_KEY.test(input.signingKey)) return { ok: false, reason: 'malformed' };
  let timestamp: number | null = null;
  const macs: Buffer[] = [];
  for (const part of input.header.split(',')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (eq < 0) return { ok: false, reason: 'malformed' };
    if (name === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value))
        return { ok: false, reason: 'malformed' };
      timestamp = Number(value);
    } else if (name === 'v1') {
      // Other schemes (a later v2) are skipped, not refused.
      if (HEX_MAC.test(value)) macs.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null || macs.length === 0) return { ok: false, reason: 'malformed' };
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(nowSeconds - timestamp) > tolerance) return { ok: false, reason: 'timestamp' };
  const expected = createHmac('sha256', Buffer.from(input.signingKey, 'hex'))
    .update(`${timestamp}.`)
    .update(input.body)
    .digest();
  // Every v1 is compared (no early exit), each in constant time.
  let match = false;
  for (const mac of macs) if (timingSafeEqual(mac, expected)) match = true;
  return match ? { ok: true, timestamp } : { ok: false, reason: 'signature' };
}
