import { describe, expect, it } from 'vitest';
import { base64url, hashJson, sha256, sha256Hex } from './hash.js';

describe('hash', () => {
  it('computes the FIPS 180-2 SHA-256 of "abc" and of the empty input', () => {
    expect(sha256Hex('abc')).toBe(
      '0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(sha256Hex(new Uint8Array())).toBe(
      '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('hashes strings as UTF-8, identical to hashing their bytes', () => {
    const text = 'é€😀';
    expect(sha256Hex(text)).toBe(sha256Hex(new TextEncoder().encode(text)));
    expect(sha256(text)).toHaveLength(32);
    expect(sha256(text).equals(Buffer.from(sha256Hex(text).slice(2), 'hex'))).toBe(true);
  });

  it('hashes the canonical JSON, so key order does not change hashJson', () => {
    const a = hashJson({ x: 1, y: [true, null], z: { b: 'c', a: 'd' } });
    const b = hashJson({ z: { a: 'd', b: 'c' }, y: [true, null], x: 1 });
    expect(a).toBe(b);
    expect(a).toBe(sha256Hex('{"x":1,"y":[true,null],"z":{"a":"d","b":"c"}}'));
    expect(a).not.toBe(hashJson({ x: 2, y: [true, null], z: { a: 'd', b: 'c' } }));
  });

  it('encodes base64url without padding, with - and _, honouring subarray offsets', () => {
    expect(base64url(new Uint8Array([0xfb, 0xff, 0xfe]))).toBe('-__-');
    expect(base64url(new Uint8Array([0x66]))).toBe('Zg');
    const backing = new Uint8Array([1, 2, 0x66, 0x6f, 9]);
    expect(base64url(backing.subarray(2, 4))).toBe('Zm8');
  });
});
