/**
 * Money as exact decimal strings (docs/api.md, "Values"): `*_wei` in the smallest unit, plain names
 * in whole tokens. Conversions are string and bigint arithmetic only; never a float.
 */

/** The network's native token and its number of decimals. */
export const NATIVE_TOKEN = 'ONS';
export const NATIVE_DECIMALS = 18;

const TOKENS_RE = /^(\d{1,60})(?:\.(\d{1,78}))?$/;

/**
 * `"1.5"` → `1500000000000000000n` (with 18 decimals). Refuses signs, exponents, more
 * fractional digits than `decimals`, and anything that is not a plain decimal number.
 */
export function parseTokens(text: string, decimals = NATIVE_DECIMALS): bigint {
  const m = TOKENS_RE.exec(text.trim());
  if (!m) throw new RangeError(`"${text}" is not a decimal amount of tokens`);
  const whole = m[1]!;
  const fraction = m[2] ?? '';
  if (fraction.length > decimals) {
    throw new RangeError(`"${text}" has more than ${decimals} decimal places`);
  }
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

/** `1500000000000000000n` → `"1.5"`; whole amounts have no point; negatives keep a `-`. */
export function formatTokens(wei: bigint, decimals = NATIVE_DECIMALS): string {
  const negative = wei < 0n;
  const digits = (negative ? -wei : wei).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return (negative ? '-' : '') + whole + (fraction ? `.${fraction}` : '');
}

/** A wei amount as it comes from PostgreSQL (numeric → string) to bigint. */
export function weiFromDb(value: string | number | bigint): bigint {
  return BigInt(value);
}
