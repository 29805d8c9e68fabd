import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signatureHeader } from './sign.js';
import { verifyWebhookSignature } from './verify.js';

interface Vector {
  signing_key_hex: string;
  timestamp: string;
  body: string;
  header: string;
  valid: boolean;
  why?: string;
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
const at = (seconds: number) => new Date(seconds * 1000);

describe('the shared webhook signature vectors', () => {
  it.each(vectors.map((v) => [v.why ?? 'valid', v] as const))(
    'verify as the vector says (%s)',
    (_why, v) => {
      const out = verifyWebhookSignature({
        header: v.header,
        body: v.body,
        signingKey: v.signing_key_hex,
        now: at(Number(v.timestamp)),
      });
      expect(out.ok).toBe(v.valid);
    },
  );

  it('are what signing produces for the valid case', () => {
    const v = vectors.find((c) => c.valid)!;
    const header = signatureHeader(
      [Buffer.from(v.signing_key_hex, 'hex')],
      Number(v.timestamp),
      v.body,
    );
    expect(header).toBe(v.header);
  });
});

describe('verifyWebhookSignature', () => {
  const header = signatureHeader([Buffer.from(KEY, 'hex')], T, BODY);

  it('accepts what was signed, the body given as text or as bytes', () => {
    expect(verifyWebhookSignature({ header, body: BODY, signingKey: KEY, now: at(T) })).toEqual({
      ok: true,
      timestamp: T,
    });
    const bytes = new TextEncoder().encode(BODY);
    expect(verifyWebhookSignature({ header, body: bytes, signingKey: KEY, now: at(T) }).ok).toBe(
      true,
    );
  });

  it('refuses a timestamp more than five minutes from the receiver clock, either way', () => {
    const check = (now: number) =>
      verifyWebhookSignature({ header, body: BODY, signingKey: KEY, now: at(now) });
    expect(check(T + 300).ok).toBe(true);
    expect(check(T - 300).ok).toBe(true);
    expect(check(T + 301)).toEqual({ ok: false, reason: 'timestamp' });
    expect(check(T - 301)).toEqual({ ok: false, reason: 'timestamp' });
  });

  it('refuses another key and a changed body', () => {
    expect(verifyWebhookSignature({ header, body: BODY, signingKey: OTHER, now: at(T) })).toEqual({
      ok: false,
      reason: 'signature',
    });
    expect(
      verifyWebhookSignature({ header, body: BODY + ' ', signingKey: KEY, now: at(T) }),
    ).toEqual({ ok: false, reason: 'signature' });
  });

  it('accepts either key while a rotation carries two signatures', () => {
    const both = signatureHeader([Buffer.from(OTHER, 'hex'), Buffer.from(KEY, 'hex')], T, BODY);
    expect(both).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const key of [KEY, OTHER]) {
      expect(
        verifyWebhookSignature({ header: both, body: BODY, signingKey: key, now: at(T) }).ok,
      ).toBe(true);
    }
  });

  it.each([
    ['no timestamp', 'v1=' + 'a'.repeat(64)],
    ['no signature', `t=${T}`],
    ['two timestamps', `t=${T},t=${T},v1=${'a'.repeat(64)}`],
    ['a timestamp that is not a number', `t=soon,v1=${'a'.repeat(64)}`],
    ['a part without =', `t=${T},v1`],
    ['an empty header', ''],
  ])('answers malformed for %s', (_why, bad) => {
    expect(
      verifyWebhookSignature({ header: bad, body: BODY, signingKey: KEY, now: at(T) }),
    ).toEqual({ ok: false, reason: 'malformed' });
  });

  it('answers malformed for a signing key that is not 64 hex characters', () => {
    expect(
      verifyWebhookSignature({ header, body: BODY, signingKey: KEY.slice(2), now: at(T) }),
    ).toEqual({ ok: false, reason: 'malformed' });
  });
});
