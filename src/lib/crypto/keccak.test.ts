import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { keccak256 } from './keccak.js';

describe('keccak256 (native)', () => {
  it('matches the known Keccak-256 of the empty input, not SHA3-256', () => {
    expect(keccak256().toString('hex')).toBe(
      'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
    );
  });

  it('hashes parts as their concatenation, and agrees with a pure-JS Keccak', () => {
    const a = Buffer.from('\x19Ethereum Signed Message:\n5', 'latin1');
    const b = Buffer.from('hello');
    const joined = Buffer.concat([a, b]);
    expect(keccak256(a, b).equals(keccak256(joined))).toBe(true);
    for (const size of [0, 1, 135, 136, 137, 1000]) {
      const data = Buffer.alloc(size, size % 251);
      expect(keccak256(data).toString('hex')).toBe(Buffer.from(keccak_256(data)).toString('hex'));
    }
  });

  it('hashes a view into a larger buffer as its bytes only, call after call', () => {
    const whole = Buffer.from('0123456789abcdef', 'latin1');
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 4, 8);
    const expected = Buffer.from(keccak_256(Buffer.from('456789ab', 'latin1'))).toString('hex');
    for (let i = 0; i < 3; i++) expect(keccak256(view).toString('hex')).toBe(expected);
  });
});
