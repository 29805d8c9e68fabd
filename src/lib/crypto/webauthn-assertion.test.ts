import { createHash, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { encodeCBOR } from '@levischuck/tiny-cbor';
import type { CBORType } from '@levischuck/tiny-cbor';
import { beforeEach, describe, expect, it } from 'vitest';
import { SoftAuthenticator } from '../../../test/support/soft-authenticator.js';
import type { SoftAlgorithm } from '../../../test/support/soft-authenticator.js';
import {
  KEY_CACHE_SIZE,
  clearKeyCache,
  coseToKeyObject,
  getCachedKey,
  keyCacheSize,
  verifyWebauthnAssertion,
} from './webauthn-assertion.js';

const ORIGIN = 'http://localhost:8080';
const RP_ID = 'localhost';
const CHALLENGE = createHash('sha256').update('ONS action v1\n...').digest('base64url');

function registered(algorithm: SoftAlgorithm = -7) {
  const auth = new SoftAuthenticator({ origin: ORIGIN, rpId: RP_ID, algorithm });
  auth.createCredential({ challenge: 'reg', rp: { id: RP_ID }, user: { id: 'dXNlcg' } });
  return { auth, key: coseToKeyObject(auth.publicKeyCose) };
}

function check(
  credential: Parameters<typeof verifyWebauthnAssertion>[0]['credential'],
  key: KeyObject,
  signCount = 0,
) {
  return verifyWebauthnAssertion({
    credential,
    expectedChallenge: CHALLENGE,
    expectedOrigins: [ORIGIN, 'http://127.0.0.1:8080'],
    expectedRpId: RP_ID,
    publicKey: key,
    signCount,
  });
}

describe('verifyWebauthnAssertion', () => {
  it.each([
    ['ES256', -7],
    ['EdDSA', -8],
    ['RS256', -257],
  ] as const)('accepts a valid %s assertion and returns the new sign count', (_name, alg) => {
    const { auth, key } = registered(alg);
    expect(check(auth.getAssertion({ challenge: CHALLENGE }), key)).toEqual({
      ok: true,
      newSignCount: 1,
    });
    expect(check(auth.getAssertion({ challenge: CHALLENGE }), key, 1)).toEqual({
      ok: true,
      newSignCount: 2,
    });
  });

  it('accepts any of the allowed origins', () => {
    const { auth, key } = registered();
    const credential = auth.getAssertion(
      { challenge: CHALLENGE },
      { origin: 'http://127.0.0.1:8080' },
    );
    expect(check(credential, key).ok).toBe(true);
  });

  it('accepts a zero sign count when the stored count is zero too', () => {
    const { auth, key } = registered();
    expect(check(auth.getAssertion({ challenge: CHALLENGE }, { signCount: 0 }), key)).toEqual({
      ok: true,
      newSignCount: 0,
    });
  });

  it.each([
    ['a registration clientData type', { type: 'webauthn.create' }, /type/],
    ['another challenge', { challenge: 'AAAA' }, /challenge/],
    ['a foreign origin', { origin: 'https://evil.example' }, /origin/],
    ['another RP id hash', { rpId: 'evil.example' }, /rp id/],
    ['no user presence', { flags: 0x04 }, /presence/],
    ['no user verification', { flags: 0x01 }, /verification/],
    ['a replayed sign count', { signCount: 5 }, /sign count/],
    ['a lower sign count', { signCount: 4 }, /sign count/],
  ])('refuses an assertion with %s', (_name, overrides, reason) => {
    const { auth, key } = registered();
    const result = check(auth.getAssertion({ challenge: CHALLENGE }, overrides), key, 5);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(reason);
  });

  it('refuses a sign count of zero once the stored count is non-zero', () => {
    const { auth, key } = registered();
    const result = check(auth.getAssertion({ challenge: CHALLENGE }, { signCount: 0 }), key, 3);
    expect(!result.ok && result.reason).toMatch(/sign count/);
  });

  it('refuses a signature made by another key, and one over altered authenticator data', () => {
    const { auth } = registered();
    const other = registered();
    const credential = auth.getAssertion({ challenge: CHALLENGE });
    expect(check(credential, other.key)).toEqual({ ok: false, reason: 'signature is invalid' });

    const key = coseToKeyObject(auth.publicKeyCose);
    const authData = Buffer.from(credential.response.authenticatorData, 'base64url');
    authData[36] = (authData[36]! + 1) & 0xff; // bump the counter after signing
    const altered = {
      ...credential,
      response: { ...credential.response, authenticatorData: authData.toString('base64url') },
    };
    expect(check(altered, key)).toEqual({ ok: false, reason: 'signature is invalid' });
  });

  it('refuses an altered clientDataJSON even when its challenge still matches', () => {
    const { auth, key } = registered();
    const credential = auth.getAssertion({ challenge: CHALLENGE });
    const clientData = JSON.parse(
      Buffer.from(credential.response.clientDataJSON, 'base64url').toString('utf8'),
    ) as Record<string, unknown>;
    const reordered = Buffer.from(
      JSON.stringify({ challenge: clientData.challenge, ...clientData }),
    ).toString('base64url');
    const result = check(
      { ...credential, response: { ...credential.response, clientDataJSON: reordered } },
      key,
    );
    expect(result).toEqual({ ok: false, reason: 'signature is invalid' });
  });

  it('returns ok:false instead of throwing on malformed input', () => {
    const { auth, key } = registered();
    const good = auth.getAssertion({ challenge: CHALLENGE });
    const bad = [
      { ...good, type: 'password' },
      { ...good, response: { ...good.response, clientDataJSON: '!!' } },
      {
        ...good,
        response: { ...good.response, clientDataJSON: Buffer.from('{').toString('base64url') },
      },
      {
        ...good,
        response: { ...good.response, clientDataJSON: Buffer.from('3').toString('base64url') },
      },
      { ...good, response: { ...good.response, authenticatorData: 'AAAA' } },
      { ...good, response: { ...good.response, signature: 'AAAA' } },
      { ...good, response: undefined },
    ];
    for (const credential of bad) {
      const result = check(credential as never, key);
      expect(result.ok).toBe(false);
    }
  });

  it('refuses a cross-origin assertion', () => {
    const { auth, key } = registered();
    const good = auth.getAssertion({ challenge: CHALLENGE });
    const clientData = JSON.parse(
      Buffer.from(good.response.clientDataJSON, 'base64url').toString('utf8'),
    ) as Record<string, unknown>;
    const crossOrigin = Buffer.from(JSON.stringify({ ...clientData, crossOrigin: true }));
    const result = check(
      {
        ...good,
        response: { ...good.response, clientDataJSON: crossOrigin.toString('base64url') },
      },
      key,
    );
    expect(!result.ok && result.reason).toMatch(/cross-origin/);
  });

  it('refuses a key type it does not support', () => {
    const { auth } = registered();
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const result = check(auth.getAssertion({ challenge: CHALLENGE }), publicKey);
    expect(result).toEqual({ ok: false, reason: 'unsupported public key type' });
  });
});

describe('coseToKeyObject', () => {
  function cose(entries: [number, CBORType][]): Uint8Array {
    return encodeCBOR(new Map<string | number, CBORType>(entries));
  }

  it('turns an EC2 P-256 COSE key into the same public key', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const key = coseToKeyObject(
      cose([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    expect(key.equals(publicKey)).toBe(true);
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });

  it('turns RSA and Ed25519 COSE keys into the same public keys', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const rsaJwk = rsa.export({ format: 'jwk' });
    const rsaKey = coseToKeyObject(
      cose([
        [1, 3],
        [3, -257],
        [-1, Buffer.from(rsaJwk.n!, 'base64url')],
        [-2, Buffer.from(rsaJwk.e!, 'base64url')],
      ]),
    );
    expect(rsaKey.equals(rsa)).toBe(true);

    const ed = generateKeyPairSync('ed25519').publicKey;
    const edKey = coseToKeyObject(
      cose([
        [1, 1],
        [3, -8],
        [-1, 6],
        [-2, Buffer.from(ed.export({ format: 'jwk' }).x!, 'base64url')],
      ]),
    );
    expect(edKey.equals(ed)).toBe(true);
  });

  it('rejects unsupported or incomplete COSE keys', () => {
    const x = new Uint8Array(32).fill(1);
    expect(() =>
      coseToKeyObject(
        cose([
          [1, 2],
          [3, -35],
          [-1, 2],
          [-2, x],
          [-3, x],
        ]),
      ),
    ).toThrow(/unsupported/);
    expect(() =>
      coseToKeyObject(
        cose([
          [1, 2],
          [3, -7],
          [-1, 2],
          [-2, x],
          [-3, x],
        ]),
      ),
    ).toThrow(/P-256/);
    expect(() =>
      coseToKeyObject(
        cose([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, x],
        ]),
      ),
    ).toThrow(/y/);
    expect(() =>
      coseToKeyObject(
        cose([
          [1, 1],
          [3, -8],
          [-1, 4],
          [-2, x],
        ]),
      ),
    ).toThrow(/Ed25519/);
    expect(() => coseToKeyObject(encodeCBOR([1, 2]))).toThrow(/map/);
    expect(() => coseToKeyObject(new Uint8Array([0xff]))).toThrow();
  });
});

describe('getCachedKey', () => {
  beforeEach(() => clearKeyCache());

  it('returns the same KeyObject for a credential id until its COSE bytes change', () => {
    const a = registered();
    const b = registered();
    const first = getCachedKey('cred-1', a.auth.publicKeyCose);
    expect(getCachedKey('cred-1', Uint8Array.from(a.auth.publicKeyCose))).toBe(first);
    const replaced = getCachedKey('cred-1', b.auth.publicKeyCose);
    expect(replaced).not.toBe(first);
    expect(replaced.equals(b.key)).toBe(true);
    expect(keyCacheSize()).toBe(1);
  });

  it('evicts the least recently used key beyond its size bound', () => {
    const { auth } = registered();
    const cose = auth.publicKeyCose;
    const oldest = getCachedKey('id-0', cose);
    const kept = getCachedKey('id-1', cose);
    for (let i = 2; i < KEY_CACHE_SIZE; i++) getCachedKey(`id-${i}`, cose);
    expect(getCachedKey('id-1', cose)).toBe(kept); // touched: now most recent
    getCachedKey('id-new', cose); // one over the bound: id-0 goes
    expect(keyCacheSize()).toBe(KEY_CACHE_SIZE);
    expect(getCachedKey('id-1', cose)).toBe(kept);
    expect(getCachedKey('id-0', cose)).not.toBe(oldest);
  });
});
