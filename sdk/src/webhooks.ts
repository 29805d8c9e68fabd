import { fromHex, utf8 } from './encoding.js';

/**
 * Checking a webhook delivery's `X-Webhook-Signature` on the receiving side (docs/webhooks.md,
 * "Checking the signature"): `t=<unix seconds>,v1=<hex>[,v1=<hex>]`, each `v1` the
 * HMAC-SHA256 of `<t>.<raw body>` keyed with the webhook's signing key (64 hex characters,
 * decoded to 32 bytes). After a key rotation the service signs with both keys for 24 hours,
 * so either key verifies.
 *
 * No dependencies: WebCrypto only (Node ≥ 20, browsers, Deno, Bun, edge workers). The
 * service's own tests verify their deliveries with this function.
 */

export const WEBHOOK_SIGNATURE_HEADER = 'x-webhook-signature';

/** About five minutes either way (docs/webhooks.md, "Checking the signature"). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * The delivery's headers: a fetch `Headers`, a Node `req.headers` object (any case), or
 * the signature header's value itself.
 */
export type WebhookHeaders =
  Headers | Record<string, string | string[] | undefined> | string | null | undefined;

export interface VerifyWebhookOptions {
  /** How far the signature's time may be from now, either way. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's time (tests). Default: now. */
  now?: Date | number;
}

export type VerifyWebhookResult =
  | { ok: true; timestamp: number }
  | {
      ok: false;
      /**
       * `malformed`: no or an unreadable header, or a signing key that is not 64 hex;
       * `timestamp`: signed too long ago (or ahead); `signature`: no `v1` matches.
       */
      reason: 'malformed' | 'timestamp' | 'signature';
    };

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const HEX_MAC = /^[0-9a-f]{64}$/;

function headerOf(headers: WebhookHeaders): string | null {
  if (headers === null || headers === undefined) return null;
  if (typeof headers === 'string') return headers;
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(WEBHOOK_SIGNATURE_HEADER);
  }
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (name.toLowerCase() !== WEBHOOK_SIGNATURE_HEADER) continue;
    if (typeof value === 'string') return value;
    if (Array.isArray(value)) return value.join(',');
  }
  return null;
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === 'string') return utf8(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/**
 * Checks that a delivery was signed by the service with `signingKey` within the tolerance.
 * Pass the body exactly as received (the raw bytes, or the same text): a re-serialized JSON
 * body does not verify. Only `{ok: true}` means the delivery is genuine.
 */
export async function verifyWebhook(
  headers: WebhookHeaders,
  rawBody: string | Uint8Array | ArrayBuffer,
  signingKey: string,
  options: VerifyWebhookOptions = {},
): Promise<VerifyWebhookResult> {
  const header = headerOf(headers);
  const keyBytes = HEX_KEY.test(signingKey) ? fromHex(signingKey) : null;
  if (header === null || keyBytes === null) return { ok: false, reason: 'malformed' };
  let timestamp: number | null = null;
  const macs: Uint8Array<ArrayBuffer>[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return { ok: false, reason: 'malformed' };
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value))
        return { ok: false, reason: 'malformed' };
      timestamp = Number(value);
    } else if (name === 'v1' && HEX_MAC.test(value)) {
      // Other schemes (a later v2) are skipped, not refused.
      macs.push(fromHex(value)!);
    }
  }
  if (timestamp === null || macs.length === 0) return { ok: false, reason: 'malformed' };
  const now = options.now ?? Date.now();
  const nowSeconds = Math.floor((typeof now === 'number' ? now : now.getTime()) / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(nowSeconds - timestamp) > tolerance) return { ok: false, reason: 'timestamp' };

  const prefix = utf8(`${timestamp}.`);
  const body = bytesOf(rawBody);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const key = await crypto.subtle.importKey(
    'raw',
    keyBytes,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  // WebCrypto's verify compares in constant time; every v1 is checked, none skipped.
  const results = await Promise.all(
    macs.map((mac) => crypto.subtle.verify('HMAC', key, mac, signed)),
  );
  return results.includes(true) ? { ok: true, timestamp } : { ok: false, reason: 'signature' };
}
