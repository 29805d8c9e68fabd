import {
  refusedHost,
  type AddressPolicy,
  type HostResolver,
  type RefusedDetail,
} from './address-policy.js';

export const MAX_URL_LENGTH = 2048;

/** The host as written in `raw` (before the URL parser rewrites `0x7f.1` as `127.0.0.1`). */
function writtenHost(raw: string): string | null {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^/:?#]*)/.exec(raw);
  return m ? m[1]!.toLowerCase() : null;
}

const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * Null when `raw` may be saved as a webhook address, else the reason (docs/webhooks.md,
 * "Addresses"): `https` only, no username or password, and a host whose every address is public. An
 * IPv4 address must be written as a plain dotted quad: decimal, hex, octal and short spellings are
 * refused even when they name a public address, since filters elsewhere (proxies, logs,
 * humans) read them differently. `refused` is told the address behind a refused name, which the
 * reason does not name (refusedHost).
 */
export async function refusedUrl(
  raw: string,
  policy: AddressPolicy,
  resolve: HostResolver,
  resolveTimeoutMs?: number,
  refused?: (detail: RefusedDetail) => void,
): Promise<string | null> {
  if (raw.length > MAX_URL_LENGTH) return `is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:') return 'must use https';
  if (url.username !== '' || url.password !== '') return 'must not carry a username or password';
  const host = url.hostname;
  if (host === '') return 'has no host';
  const written = writtenHost(raw);
  const isIpv4 = /^\d+\.\d+\.\d+\.\d+$/.test(host);
  if (isIpv4 && (written === null || !DOTTED_QUAD.test(written) || written !== host)) {
    return `host "${written ?? host}" is an IPv4 address not written as a plain dotted quad`;
  }
  return refusedHost(host, policy, resolve, resolveTimeoutMs, refused);
}
