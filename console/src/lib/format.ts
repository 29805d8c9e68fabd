/** How dates and amounts read in the console. */

/** A service date (UTC ISO 8601) in the person's locale, with the UTC value as its title. */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Whole tokens from a decimal string of wei (18 decimals), never through a float. */
export function formatTokens(wei: string, decimals = 18): string {
  const negative = wei.startsWith('-');
  const digits = (negative ? wei.slice(1) : wei).padStart(decimals + 1, '0');
  const whole = digits.slice(0, -decimals).replace(/^0+(?=\d)/, '');
  const frac = digits.slice(-decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}
