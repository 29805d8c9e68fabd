import { describe, expect, it } from 'vitest';
import { hashSecret, isWellFormedSecret, newSecret } from './secret.js';

describe('API key secrets', () => {
  it('are onsk_ + 43 base62 characters of randomness + a 6-character checksum', () => {
    const secrets = Array.from({ length: 200 }, newSecret);
    for (const s of secrets) {
      expect(s).toMatch(/^onsk_[0-9A-Za-z]{49}$/);
      expect(isWellFormedSecret(s)).toBe(true);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
  });

  it('refuse any single changed character through the checksum', () => {
    const s = newSecret();
    for (let i = 5; i < s.length; i++) {
      const swapped = s[i] === 'a' ? 'b' : 'a';
      expect(isWellFormedSecret(s.slice(0, i) + swapped + s.slice(i + 1)), `position ${i}`).toBe(
        false,
      );
    }
  });

  it('refuse other shapes', () => {
    const s = newSecret();
    for (const bad of [
      '',
      'onsk_',
      s.slice(0, -1),
      `${s}0`,
      s.replace('onsk_', 'onsr_'),
      ` ${s}`,
    ]) {
      expect(isWellFormedSecret(bad)).toBe(false);
    }
  });

  it('hash to lowercase hex SHA-256', () => {
    expect(hashSecret('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
