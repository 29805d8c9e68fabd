import { describe, expect, it } from 'vitest';
import { isSealed } from '../../lib/sealed-secret.js';
import { newSigningKey } from './keys.js';

describe('newSigningKey', () => {
  it('draws again when the bytes begin with the sealed mark', () => {
    const marked = Buffer.concat([Buffer.from('sealed:', 'latin1'), Buffer.alloc(25, 1)]);
    const plain = Buffer.alloc(32, 7);
    const draws = [marked, plain];
    let n = 0;
    const key = newSigningKey(() => draws[n++]!);
    expect(isSealed(marked)).toBe(true);
    expect(key).toEqual(plain);
    expect(n).toBe(2);
  });
});
