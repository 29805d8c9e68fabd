import { readFileSync } from 'node:fs';
import { DEFAULT_TOLERANCE_SECONDS, verifyWebhook } from '@ons/sdk';
import { describe, expect, it } from 'vitest';
import { signatureHeader } from '../../src/modules/webhooks/signing/sign.js';

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
    readFileSync(new URL('../../test/vectors/webhook-signature.json', import.meta.url), 'utf8'),
  ) as { cases: Vector[] }
).cases;

const KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const OTHER = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100';
const BODY =
  '{"id":"evt_1","type":"action.executed","event":{},"when_created":"2026-01-01T00:00:00Z"}';
const T = 1767225600;
const AT_T = { now: T * 1000 };
/** What the service sends: its own signing code, with one key or, after a rotation, two. */
const signed = (keys: string[], t = T, body: string = BODY) =>
  signatureHeader(
    keys.map((k) => Buffer.from(k, 'hex')),
    t,
    body,
  );

describe('verifyWebhook and the shared vectors', () => {
  it.each(vectors.map((v) => [v.why ?? 'valid', v] as const))(
    'answers as the vector says (%s)',
    async (_why, v) => {
      const out = await verifyWebhook(
        { 'x-webhook-signature': v.header },
        v.body,
        v.signing_key_hex,
        { now: new Date(Number(v.timestamp) * 1000) },
      );
      expect(out.ok).toBe(v.valid);
      if (!v.valid) expect(out).toEqual({ ok: false, reason: 'signature' });
    },
  );

  it('has a valid case to pass', () => {
    expect(vectors.filter((v) => v.valid)).toHaveLength(1);
  });
});

describe('verifyWebhook', () => {
  const header = signed([KEY]);

  it('takes the headers as fetch Headers, a Node headers object in any case, or the value', async () => {
    const forms = [
      new Headers({ 'X-Webhook-Signature': header }),
      { 'x-webhook-signature': header, 'content-type': 'application/json' },
      { 'X-Webhook-Signature': header },
      header,
    ];
    for (const h of forms) {
      expect(await verifyWebhook(h, BODY, KEY, AT_T)).toEqual({ ok: true, timestamp: T });
    }
  });

  it('takes the body as text, bytes or an ArrayBuffer', async () => {
    const bytes = new TextEncoder().encode(BODY);
    for (const body of [BODY, bytes, Buffer.from(BODY), bytes.buffer]) {
      expect((await verifyWebhook(header, body, KEY, AT_T)).ok).toBe(true);
    }
  });

  it('refuses a body with any one byte changed', async () => {
    const bytes = new TextEncoder().encode(BODY);
    for (const i of [0, 10, bytes.length - 1]) {
      const changed = Uint8Array.from(bytes);
      changed[i] = changed[i]! ^ 0x01;
      expect(await verifyWebhook(header, changed, KEY, AT_T)).toEqual({
        ok: false,
        reason: 'signature',
      });
    }
    expect((await verifyWebhook(header, BODY + ' ', KEY, AT_T)).ok).toBe(false);
  });

  it('refuses a changed signature, timestamp or key', async () => {
    const flipped = header.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    expect(await verifyWebhook(flipped, BODY, KEY, AT_T)).toEqual({
      ok: false,
      reason: 'signature',
    });
    const otherTime = header.replace(`t=${T}`, `t=${T + 1}`);
    expect(await verifyWebhook(otherTime, BODY, KEY, AT_T)).toEqual({
      ok: false,
      reason: 'signature',
    });
    expect(await verifyWebhook(header, BODY, OTHER, AT_T)).toEqual({
      ok: false,
      reason: 'signature',
    });
  });

  it('refuses an old (or future) timestamp past the tolerance, 300 s by default', async () => {
    expect(DEFAULT_TOLERANCE_SECONDS).toBe(300);
    const at = (seconds: number, tolerance?: number) =>
      verifyWebhook(header, BODY, KEY, {
        now: new Date(seconds * 1000),
        ...(tolerance !== undefined ? { toleranceSeconds: tolerance } : {}),
      });
    expect((await at(T + 300)).ok).toBe(true);
    expect((await at(T - 300)).ok).toBe(true);
    expect(await at(T + 301)).toEqual({ ok: false, reason: 'timestamp' });
    expect(await at(T - 301)).toEqual({ ok: false, reason: 'timestamp' });
    expect(await at(T + 3600)).toEqual({ ok: false, reason: 'timestamp' });
    expect((await at(T + 3600, 3600)).ok).toBe(true);
    expect(await at(T + 61, 60)).toEqual({ ok: false, reason: 'timestamp' });
  });

  it('checks against the real clock when no time is given', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await verifyWebhook(signed([KEY], now), BODY, KEY)).ok).toBe(true);
    expect(await verifyWebhook(signed([KEY], now - 400), BODY, KEY)).toEqual({
      ok: false,
      reason: 'timestamp',
    });
  });

  it('accepts either key while a rotation signs twice (v1=<new>,v1=<old>), and no third', async () => {
    const both = signed([OTHER, KEY]);
    expect(both).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(await verifyWebhook(both, BODY, OTHER, AT_T)).toEqual({ ok: true, timestamp: T });
    expect(await verifyWebhook(both, BODY, KEY, AT_T)).toEqual({ ok: true, timestamp: T });
    const third = 'ab'.repeat(32);
    expect(await verifyWebhook(both, BODY, third, AT_T)).toEqual({
      ok: false,
      reason: 'signature',
    });
    expect((await verifyWebhook(both, BODY + 'x', KEY, AT_T)).ok).toBe(false);
  });

  it('skips signature schemes it does not know', async () => {
    expect((await verifyWebhook(`${header},v2=zzz`, BODY, KEY, AT_T)).ok).toBe(true);
  });

  it.each([
    ['no timestamp', 'v1=' + 'a'.repeat(64)],
    ['no signature', `t=${T}`],
    ['only an unknown scheme', `t=${T},v2=${'a'.repeat(64)}`],
    ['two timestamps', `t=${T},t=${T},v1=${'a'.repeat(64)}`],
    ['a timestamp that is not a number', `t=soon,v1=${'a'.repeat(64)}`],
    ['a part without =', `t=${T},v1`],
    ['an empty header', ''],
  ])('answers malformed for %s', async (_why, bad) => {
    expect(await verifyWebhook(bad, BODY, KEY, AT_T)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('answers malformed without the header or with a key that is not 64 hex', async () => {
    expect(await verifyWebhook({}, BODY, KEY, AT_T)).toEqual({ ok: false, reason: 'malformed' });
    expect(await verifyWebhook(new Headers(), BODY, KEY, AT_T)).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(await verifyWebhook(undefined, BODY, KEY, AT_T)).toEqual({
      ok: false,
      reason: 'malformed',
    });
    for (const key of [KEY.slice(2), `${KEY}00`, 'zz'.repeat(32)]) {
      expect(await verifyWebhook(header, BODY, key, AT_T)).toEqual({
        ok: false,
        reason: 'malformed',
      });
    }
  });
});
