import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { vectorPath as vectorPathOf } from '../../../test/support/vectors.js';
import { actionHash, buildActionText, webauthnChallenge } from './action-text.js';

interface ActionTextVector {
  address: string;
  action: {
    wallet: string;
    name: string;
    params: Record<string, unknown>;
    nonce: number;
    expires: string;
  };
  network: string;
  organization_id: string;
  text: string;
  hash: string;
  webauthn_challenge: string;
}

const vectorPath = vectorPathOf('action-text.json');
const vector = JSON.parse(readFileSync(vectorPath, 'utf8')) as ActionTextVector;

function vectorInput() {
  return {
    network: vector.network,
    organizationId: vector.organization_id,
    wallet: vector.action.wallet,
    nonce: vector.action.nonce,
    name: vector.action.name,
    params: vector.action.params,
    expires: vector.action.expires,
  };
}

describe('buildActionText', () => {
  it('reproduces the shared vector text exactly', () => {
    expect(vectorPath.endsWith('/test/vectors/action-text.json')).toBe(true);
    expect(buildActionText(vectorInput())).toBe(vector.text);
  });

  it('reproduces the shared vector hash and WebAuthn challenge', () => {
    const text = buildActionText(vectorInput());
    expect(actionHash(text)).toBe(vector.hash);
    expect(webauthnChallenge(text)).toBe(vector.webauthn_challenge);
  });

  it('lowercases the wallet, canonicalizes params and takes a Date or bigint', () => {
    const mixed = buildActionText({
      ...vectorInput(),
      wallet: vector.action.wallet.toUpperCase().replace('0X', '0x'),
      params: { to: vector.action.params.to, object_id: vector.action.params.object_id },
      nonce: 7n,
      expires: new Date(vector.action.expires),
    });
    expect(mixed).toBe(vector.text);
  });

  it('writes eight lines in the documented order with no trailing newline', () => {
    const text = buildActionText({
      network: 'n',
      organizationId: 'org_1',
      wallet: '0xAB',
      nonce: 0,
      name: 'mint',
      params: { b: [1, { d: null, c: 'é' }], a: true },
      expires: '2030-01-01T00:00:00.000Z',
    });
    expect(text.split('\n')).toEqual([
      'ONS action v1',
      'network: n',
      'organization: org_1',
      'wallet: 0xab',
      'nonce: 0',
      'action: mint',
      'params: {"a":true,"b":[1,{"c":"é","d":null}]}',
      'expires: 2030-01-01T00:00:00.000Z',
    ]);
    expect(text.endsWith('\n')).toBe(false);
  });

  it('refuses line breaks in fields, which could forge extra lines', () => {
    for (const field of ['network', 'organizationId', 'wallet', 'name', 'expires'] as const) {
      expect(() => buildActionText({ ...vectorInput(), [field]: 'x\naction: mint' })).toThrow(
        field,
      );
    }
    expect(() => buildActionText({ ...vectorInput(), name: 'a\rb' })).toThrow();
  });

  it('refuses a negative or fractional nonce and params with no JSON form', () => {
    expect(() => buildActionText({ ...vectorInput(), nonce: -1 })).toThrow(/nonce/);
    expect(() => buildActionText({ ...vectorInput(), nonce: 1.5 })).toThrow(/nonce/);
    expect(() => buildActionText({ ...vectorInput(), nonce: -1n })).toThrow(/nonce/);
    expect(() => buildActionText({ ...vectorInput(), params: { n: NaN } })).toThrow();
  });
});

describe('actionHash and webauthnChallenge', () => {
  it('encode the same SHA-256 digest as hex and as unpadded base64url', () => {
    const text = 'héllo\nwörld';
    const hex = actionHash(text);
    expect(hex).toMatch(/^0x[0-9a-f]{64}$/);
    const challenge = webauthnChallenge(text);
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(challenge, 'base64url').toString('hex')).toBe(hex.slice(2));
    expect(actionHash(`${text} `)).not.toBe(hex);
  });
});
