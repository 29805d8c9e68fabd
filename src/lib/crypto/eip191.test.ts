import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { hashMessage, recoverMessageAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { vectorPath } from '../../../test/support/vectors.js';
import { eip191Digest, recoverEip191Address } from './eip191.js';

const vector = JSON.parse(readFileSync(vectorPath('action-text.json'), 'utf8')) as {
  address: string;
  text: string;
  eip191_signature: string;
  private_key: `0x${string}`;
};

function randomText(): string {
  // Mix ASCII, multi-byte UTF-8 and newlines so the length prefix counts bytes, not chars.
  return `ONS action v1\nnonce: ${randomBytes(4).readUInt32BE()}\nnote: é€😀 ${randomBytes(
    1 + (randomBytes(1)[0]! % 40),
  ).toString('base64')}`;
}

describe('the secp256k1 backend', () => {
  it('is the native libsecp256k1 addon, not the pure-JS elliptic fallback', () => {
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) =>
      k.includes('secp256k1'),
    );
    expect(loaded.some((k) => k.endsWith('.node'))).toBe(true);
    expect(loaded.some((k) => k.endsWith('elliptic.js'))).toBe(false);
  });
});

describe('eip191Digest', () => {
  it('equals viem hashMessage, counting the UTF-8 byte length', () => {
    for (const text of ['', 'a', vector.text, 'é€😀\n', 'x'.repeat(1000)]) {
      expect(`0x${Buffer.from(eip191Digest(text)).toString('hex')}`).toBe(hashMessage(text));
    }
  });
});

describe('recoverEip191Address', () => {
  it('recovers the shared vector signature to the vector address', () => {
    expect(recoverEip191Address(vector.text, vector.eip191_signature)).toEqual({
      ok: true,
      address: vector.address,
    });
    expect(privateKeyToAccount(vector.private_key).address.toLowerCase()).toBe(vector.address);
  });

  it('agrees with viem signMessage and recoverMessageAddress on 20 random keys and texts', async () => {
    for (let i = 0; i < 20; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const message = randomText();
      const signature = await account.signMessage({ message });
      const viemAddress = await recoverMessageAddress({ message, signature });
      const result = recoverEip191Address(message, signature);
      expect(result).toEqual({ ok: true, address: account.address.toLowerCase() });
      expect(result.ok && result.address).toBe(viemAddress.toLowerCase());
    }
  });

  it('accepts v as 0/1 as well as 27/28 and upper-case hex', () => {
    const v = Number.parseInt(vector.eip191_signature.slice(-2), 16);
    const withRecid = `${vector.eip191_signature.slice(0, -2)}0${v - 27}`;
    expect(recoverEip191Address(vector.text, withRecid)).toEqual({
      ok: true,
      address: vector.address,
    });
    const upper = `0x${vector.eip191_signature.slice(2).toUpperCase()}`;
    expect(recoverEip191Address(vector.text, upper)).toEqual({ ok: true, address: vector.address });
  });

  it('recovers a different address when the text is tampered with', () => {
    const tampered = vector.text.replace('nonce: 7', 'nonce: 8');
    const result = recoverEip191Address(tampered, vector.eip191_signature);
    expect(result.ok).toBe(true);
    expect(result.ok && result.address).not.toBe(vector.address);
  });

  it('recovers a different address when the recovery bit is flipped', () => {
    const v = vector.eip191_signature.slice(-2) === '1b' ? '1c' : '1b';
    const result = recoverEip191Address(vector.text, `${vector.eip191_signature.slice(0, -2)}${v}`);
    expect(result.ok && result.address).not.toBe(vector.address);
  });

  it('returns ok:false, without throwing, for malformed signatures', () => {
    const sig = vector.eip191_signature;
    const cases: [string, RegExp][] = [
      ['', /hex/],
      ['0x', /65 bytes/],
      [sig.slice(2), /hex/],
      [`${sig.slice(0, -2)}zz`, /hex/],
      [sig.slice(0, -2), /65 bytes/],
      [`${sig}00`, /65 bytes/],
      [`${sig.slice(0, -1)}`, /65 bytes/],
      [`${sig.slice(0, -2)}1d`, /v must be/],
      [`${sig.slice(0, -2)}25`, /v must be/],
      [`0x${'00'.repeat(64)}1b`, /recover/],
      [`0x${'ff'.repeat(64)}1b`, /recover/],
    ];
    for (const [signature, reason] of cases) {
      const result = recoverEip191Address(vector.text, signature);
      expect(result.ok, signature).toBe(false);
      expect(!result.ok && result.reason, signature).toMatch(reason);
    }
    expect(recoverEip191Address(vector.text, 42 as unknown as string).ok).toBe(false);
  });
});
