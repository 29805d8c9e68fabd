import { readFileSync } from 'node:fs';
import { verifyWebhook } from '@ons/sdk';
import { describe, expect, it } from 'vitest';
import { signatureHeader, signatureOf } from './sign.js';

// Receivers check these headers with the SDK's verifyWebhook (sdk/src/webhooks.ts), which
// sdk/test/webhooks.test.ts tests against the shared vectors; here: what the service signs.

interface Vector {
  signing_key_hex: string;
  timestamp: string;
  body: string;
  header: string;
  valid: boolean;
}

const vectors = (
  JSON.parse(
    readFileSync(
      new URL('../../../../test/vectors/webhook-signature.json', import.meta.url),
      'utf8',
    ),
  ) as { cases: Vector[] }
).cases;

const KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const OTHER = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100';
const BODY =
  '{"id":"evt_1","type":"action.executed","event":{},"when_created":"2026-01-01T00:00:00Z"}';
const T = 1767225600;
const key = (hex: string) => Buffer.from(hex, 'hex');

describe('signatureHeader', () => {
  it('writes the valid shared vector exactly', () => {
    const v = vectors.find((c) => c.valid)!;
    expect(signatureHeader([key(v.signing_key_hex)], Number(v.timestamp), v.body)).toBe(v.header);
  });

  it('signs the body given as text or as bytes alike', () => {
    expect(signatureOf(key(KEY), T, new TextEncoder().encode(BODY))).toBe(
      signatureOf(key(KEY), T, BODY),
    );
  });

  it('after a rotation signs with the new key first and the old one second; each verifies', async () => {
    const both = signatureHeader([key(OTHER), key(KEY)], T, BODY);
    expect(both).toBe(
      `t=${T},v1=${signatureOf(key(OTHER), T, BODY)},v1=${signatureOf(key(KEY), T, BODY)}`,
    );
    for (const k of [KEY, OTHER]) {
      expect(await verifyWebhook(both, BODY, k, { now: T * 1000 })).toEqual({
        ok: true,
        timestamp: T,
      });
    }
  });
});
