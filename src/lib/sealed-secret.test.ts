import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealed, keyId, OPENED_CACHE, SealedSecretError, SecretSealer } from './sealed-secret.js';

const A = randomBytes(32);
const B = randomBytes(32);
const at = { column: 'batch_keys.private_key', row: 'current' };
const sealer = (key: Buffer | null, previous: Buffer[] = []) => new SecretSealer({ key, previous });

/** The error `fn` throws (it must throw a SealedSecretError). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SealedSecretError);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('a sealed secret', () => {
  it('round-trips text, bytes and JSON, in a recognisable form naming its key', () => {
    const s = sealer(A);
    const text = s.sealText('-----BEGIN PRIVATE KEY-----\nabc\n', at);
    expect(text).toMatch(new RegExp(`^sealed:v1:${keyId(A)}:[A-Za-z0-9_-]+$`));
    expect(s.openText(text, at)).toBe('-----BEGIN PRIVATE KEY-----\nabc\n');

    const key = randomBytes(32);
    const bytes = s.sealBytes(key, at);
    expect(bytes.toString('latin1')).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    expect(isSealed(bytes)).toBe(true);
    expect(s.openBytes(bytes, at).equals(key)).toBe(true);
    expect(s.openKey(bytes, at).equals(key)).toBe(true);
    expect(s.openKeyHex(bytes.toString('hex'), at).equals(key)).toBe(true);

    const jwk = { kty: 'EC', crv: 'P-256', d: 'secret' };
    const sealed = s.sealJson(jwk, at);
    expect(typeof sealed).toBe('string');
    expect(JSON.stringify(sealed)).not.toContain('secret');
    expect(s.openJson(sealed, at)).toEqual(jwk);
  });

  it('uses a fresh nonce for each value', () => {
    const s = sealer(A);
    expect(s.sealText('same', at)).not.toBe(s.sealText('same', at));
  });

  it('is refused under a wrong key, naming SECRETS_KEY and both key ids', () => {
    const text = sealer(A).sealText('x', at);
    const message = refusal(() => sealer(B).openText(text, at));
    expect(message).toContain('SECRETS_KEY');
    expect(message).toContain(keyId(A));
    expect(message).toContain(keyId(B));
    expect(message).toContain('batch_keys.private_key');
  });

  it('is refused with no key set, naming SECRETS_KEY, never taken as clear', () => {
    const text = sealer(A).sealText('x', at);
    const message = refusal(() => SecretSealer.none().openText(text, at));
    expect(message).toMatch(/SECRETS_KEY is not set/);
    expect(refusal(() => SecretSealer.none().reseal(text, at))).toMatch(/SECRETS_KEY/);
    const bytes = sealer(A).sealBytes(randomBytes(32), at);
    expect(refusal(() => SecretSealer.none().openKeyHex(bytes.toString('hex'), at))).toMatch(
      /SECRETS_KEY/,
    );
  });

  it('opens under a previous key, and is sealed again under the current one', () => {
    const old = sealer(A).sealText('seed', at);
    const s = sealer(B, [A]);
    expect(s.openText(old, at)).toBe('seed');
    const again = s.reseal(old, at)!;
    expect(again.startsWith(s.prefix!)).toBe(true);
    expect(s.reseal(again, at)).toBeNull();
    expect(sealer(B).openText(again, at)).toBe('seed');
    expect(refusal(() => sealer(A).openText(again, at))).toContain(keyId(B));
  });

  it('seals a clear value at start, leaves it as it is with no key', () => {
    expect(sealer(A).openText(sealer(A).reseal('clear', at)!, at)).toBe('clear');
    const key = randomBytes(32);
    const sealedKey = sealer(A).reseal(key, at)!;
    expect(Buffer.isBuffer(sealedKey) && isSealed(sealedKey)).toBe(true);
    expect(SecretSealer.none().reseal('clear', at)).toBeNull();
    expect(SecretSealer.none().reseal(key, at)).toBeNull();
  });

  it('is refused when a byte is changed', () => {
    const s = sealer(A);
    const text = s.sealText('a secret of some length', at);
    const [head, data] = [text.slice(0, text.lastIndexOf(':') + 1), text.split(':')[3]!];
    const body = Buffer.from(data, 'base64url');
    for (const i of [0, 12, body.length - 1]) {
      const changed = Buffer.from(body);
      changed[i] = changed[i]! ^ 1;
      expect(refusal(() => s.openText(head + changed.toString('base64url'), at))).toMatch(
        /does not open under SECRETS_KEY/,
      );
    }
    expect(refusal(() => s.openText(`${head}AAAA`, at))).toMatch(/does not open/);
    expect(refusal(() => s.openText('sealed:v2:whatever', at))).toMatch(/not in the form/);
  });

  it('is refused in another row or another column (its place is bound to it)', () => {
    const s = sealer(A);
    const place = { column: 'webhooks.signing_key', row: 'whk_1' };
    const bytes = s.sealBytes(randomBytes(32), place);
    expect(refusal(() => s.openBytes(bytes, { ...place, row: 'whk_2' }))).toMatch(
      /copied from another row or column/,
    );
    expect(() =>
      s.openBytes(bytes, { column: 'webhooks.previous_signing_key', row: 'whk_1' }),
    ).toThrow(SealedSecretError);
    // Remembered once opened, yet only for its own place.
    const hex = bytes.toString('hex');
    s.openKeyHex(hex, place);
    expect(() => s.openKeyHex(hex, { ...place, row: 'whk_2' })).toThrow(SealedSecretError);
  });

  it('passes clear values through, with or without a key', () => {
    const key = randomBytes(32);
    for (const s of [sealer(A), SecretSealer.none()]) {
      expect(s.openText('-----BEGIN PRIVATE KEY-----', at)).toBe('-----BEGIN PRIVATE KEY-----');
      expect(s.openBytes(key, at)).toBe(key);
      expect(s.openKeyHex(key.toString('hex'), at).equals(key)).toBe(true);
      expect(s.openJson({ kty: 'EC' }, at)).toEqual({ kty: 'EC' });
    }
    expect(SecretSealer.none().sealText('x', at)).toBe('x');
    expect(SecretSealer.none().sealBytes(key, at)).toBe(key);
    expect(SecretSealer.none().sealJson({ a: 1 }, at)).toEqual({ a: 1 });
  });

  it('remembers opened keys, so a use costs a lookup', () => {
    const s = sealer(A);
    const place = { column: 'webhooks.signing_key', row: 'whk_1' };
    const hex = s.sealBytes(randomBytes(32), place).toString('hex');
    const first = s.openKeyHex(hex, place);
    expect(s.openKeyHex(hex, place)).toBe(first);
    expect(s.openKey(Buffer.from(hex, 'hex'), place)).toBe(first);
  });

  it(`remembers ${OPENED_CACHE} opened keys at most, forgetting the one opened first`, () => {
    const s = sealer(A);
    const places = Array.from({ length: OPENED_CACHE + 1 }, (_, i) => ({
      column: 'webhooks.signing_key',
      row: `whk_${i}`,
    }));
    const hexes = places.map((p) => s.sealBytes(randomBytes(32), p).toString('hex'));
    const opened = hexes.map((hex, i) => s.openKeyHex(hex, places[i]!));
    // The last one opened pushed the first out; the others are still remembered.
    expect(s.openKeyHex(hexes[1]!, places[1]!)).toBe(opened[1]);
    expect(s.openKeyHex(hexes[OPENED_CACHE]!, places[OPENED_CACHE]!)).toBe(opened[OPENED_CACHE]);
    const again = s.openKeyHex(hexes[0]!, places[0]!);
    expect(again).not.toBe(opened[0]);
    expect(again.equals(opened[0]!)).toBe(true);
    // Opened again, the first one pushes out the oldest left (a hit does not refresh it).
    expect(s.openKeyHex(hexes[1]!, places[1]!)).not.toBe(opened[1]);
    expect(s.openKeyHex(hexes[2]!, places[2]!)).not.toBe(opened[2]);
    expect(s.openKeyHex(hexes[OPENED_CACHE]!, places[OPENED_CACHE]!)).toBe(opened[OPENED_CACHE]);
  });

  it('forgets the keys opened for the places it is given, and only those', () => {
    const s = sealer(A);
    const current = { column: 'webhooks.signing_key', row: 'whk_1' };
    const previous = { column: 'webhooks.previous_signing_key', row: 'whk_1' };
    const other = { column: 'webhooks.signing_key', row: 'whk_2' };
    const hexes = [current, previous, other].map((p) =>
      s.sealBytes(randomBytes(32), p).toString('hex'),
    );
    const [c, p, o] = [
      s.openKeyHex(hexes[0]!, current),
      s.openKeyHex(hexes[1]!, previous),
      s.openKeyHex(hexes[2]!, other),
    ];
    s.forget([current, previous]);
    expect(s.openKeyHex(hexes[2]!, other)).toBe(o);
    expect(s.openKeyHex(hexes[0]!, current)).not.toBe(c);
    expect(s.openKeyHex(hexes[1]!, previous)).not.toBe(p);
    expect(s.openKeyHex(hexes[0]!, current).equals(c)).toBe(true);
  });
});
