import { createHmac } from 'node:crypto';

/**
 * HMAC-SHA256 over `{t}.{body}`, keyed with the raw key bytes, as lowercase hex (docs/webhooks.md,
 * "Checking the signature").
 */
export function signatureOf(key: Uint8Array, timestamp: number, body: string | Uint8Array): string {
  const mac = createHmac('sha256', key);
  mac.update(`${timestamp}.`);
  mac.update(body);
  return mac.digest('hex');
}

/**
 * The `X-Webhook-Signature` value: `t=<unix seconds>,v1=<hex>`, with one `v1` per key. After
 * a rotation the new key signs first and the previous one second, so a receiver still
 * holding the old key keeps verifying for the overlap.
 */
export function signatureHeader(
  keys: readonly Uint8Array[],
  timestamp: number,
  body: string | Uint8Array,
): string {
  return [`t=${timestamp}`, ...keys.map((k) => `v1=${signatureOf(k, timestamp, body)}`)].join(',');
}
