import { describe, expect, it } from 'vitest';
import { formatTokens, parseTokens } from './money.js';

describe('parseTokens', () => {
  it('converts whole and fractional token amounts to wei exactly', () => {
    expect(parseTokens('1')).toBe(10n ** 18n);
    expect(parseTokens('1.5')).toBe(15n * 10n ** 17n);
    expect(parseTokens('0.000000000000000001')).toBe(1n);
    expect(parseTokens('123456789.123456789123456789')).toBe(123456789123456789123456789n);
    expect(parseTokens('0')).toBe(0n);
    expect(parseTokens(' 2.50 ')).toBe(25n * 10n ** 17n);
  });

  it('keeps precision far beyond what a float can hold', () => {
    expect(parseTokens('9007199254740993.000000000000000001')).toBe(
      9007199254740993000000000000000001n,
    );
  });

  it('refuses more decimals than the token has', () => {
    expect(() => parseTokens('0.0000000000000000001')).toThrow(/more than 18 decimal places/);
    expect(() => parseTokens('1.23', 1)).toThrow(RangeError);
  });

  it('refuses signs, exponents, separators and empty input', () => {
    for (const bad of ['', '-1', '+1', '1e18', '1,5', '.5', '5.', 'abc', '0x10', '1.2.3']) {
      expect(() => parseTokens(bad), bad).toThrow(RangeError);
    }
  });
});

describe('formatTokens', () => {
  it('renders wei as whole tokens without trailing zeros', () => {
    expect(formatTokens(0n)).toBe('0');
    expect(formatTokens(1n)).toBe('0.000000000000000001');
    expect(formatTokens(10n ** 18n)).toBe('1');
    expect(formatTokens(15n * 10n ** 17n)).toBe('1.5');
    expect(formatTokens(123456789123456789123456789n)).toBe('123456789.123456789123456789');
  });

  it('keeps the sign of a negative amount', () => {
    expect(formatTokens(-25n * 10n ** 16n)).toBe('-0.25');
  });

  it('round-trips with parseTokens', () => {
    for (const text of ['0', '1', '0.1', '42.000000000000000042', '1000000']) {
      expect(formatTokens(parseTokens(text))).toBe(text);
    }
  });

  it('honours other decimal counts', () => {
    expect(formatTokens(1234n, 2)).toBe('12.34');
    expect(parseTokens('12.34', 2)).toBe(1234n);
  });
});
