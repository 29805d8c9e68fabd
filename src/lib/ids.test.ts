import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { encodeRandom, idKindOfPattern, idPattern, isId, newId, ulid } from './ids.js';

describe('ids', () => {
  it('makes prefixed ids that sort in creation order, even within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('object', 1_767_225_600_000));
    expect(ids.every((id) => /^obj_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
  });

  it('draws a fresh random part for each new millisecond, past many refills of its pool', () => {
    // 1,000 milliseconds take 10,000 random bytes: more than two of the pool's 4 KB draws.
    const randoms = Array.from({ length: 1000 }, (_, i) => ulid(1_900_000_000_000 + i).slice(10));
    expect(new Set(randoms).size).toBe(1000);
    // Not a counter: the parts of consecutive milliseconds are unrelated.
    const firstChars = new Set(randoms.map((r) => r[0]));
    expect(firstChars.size).toBeGreaterThan(20);
  });

  it('orders ids of later times after earlier ones', () => {
    const a = ulid(1_000_000);
    const b = ulid(2_000_000);
    expect(a < b).toBe(true);
  });

  it('recognises ids of the right kind only', () => {
    const id = newId('wallet');
    expect(isId('wallet', id)).toBe(true);
    expect(isId('object', id)).toBe(false);
    expect(isId('wallet', 'wal_short')).toBe(false);
  });

  it('gives each kind a pattern that matches its ids only, and finds the kind back', () => {
    const re = new RegExp(idPattern('template'));
    expect(re.test(newId('template'))).toBe(true);
    expect(re.test(newId('object'))).toBe(false);
    expect(re.test(newId('template').toLowerCase())).toBe(false);
    expect(re.test(`${newId('template')}\n`)).toBe(false);
    expect(idKindOfPattern(idPattern('template'))).toBe('template');
    expect(idKindOfPattern('^0x[0-9a-fA-F]{40}$')).toBeUndefined();
  });
});

describe('encodeRandom', () => {
  it('writes 80 bits as the same 16 characters as big-integer base32', () => {
    const reference = (bytes: Uint8Array) => {
      let bits = 0n;
      for (const b of bytes) bits = (bits << 8n) | BigInt(b);
      let out = '';
      for (let i = 0; i < 16; i++) {
        out = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'[Number(bits & 31n)]! + out;
        bits >>= 5n;
      }
      return out;
    };
    const cases = [new Uint8Array(10), new Uint8Array(10).fill(255)];
    for (let i = 0; i < 200; i++) cases.push(new Uint8Array(randomBytes(10)));
    for (const c of cases) expect(encodeRandom(c)).toBe(reference(c));
  });
});
