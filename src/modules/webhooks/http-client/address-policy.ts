import ipaddr from 'ipaddr.js';
import { unavailable } from '../../../lib/errors.js';
import { LookupsBusy, type HostResolver } from './lookup-gate.js';

/**
 * Which addresses a webhook may reach (docs/webhooks.md, "Addresses"). An allow-list: public
 * unicast IPv4, and IPv6 in the global unicast block 2000::/3 that is none of the special
 * ranges (NAT64, 6to4, Teredo, documentation…). Everything else is refused, so a range
 * nobody thought of is refused too.
 */
export interface AddressPolicy {
  /** Tests only (WEBHOOK_ALLOW_LOOPBACK): 127.0.0.0/8, ::1 and the name `localhost`. */
  allowLoopback: boolean;
}

export type { HostResolver } from './lookup-gate.js';

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** Null when `address` (an IP literal) may be reached, else why not (e.g. "loopback"). */
export function refusedAddress(address: string, policy: AddressPolicy): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  const range = ip.range();
  if (range === 'loopback') return policy.allowLoopback ? null : 'loopback';
  if (ip.kind() === 'ipv4') return range === 'unicast' ? null : rangeName(range);
  if (range !== 'unicast') return rangeName(range);
  return ip.match(GLOBAL_UNICAST_V6) ? null : 'reserved IPv6';
}

const NAMES: Record<string, string> = {
  private: 'private (RFC 1918)',
  carrierGradeNat: 'carrier-grade NAT',
  linkLocal: 'link-local',
  uniqueLocal: 'IPv6 unique local',
  ipv4Mapped: 'IPv4-mapped IPv6',
  rfc6052: 'NAT64',
  rfc6145: 'IPv4-translated IPv6',
};

function rangeName(range: string): string {
  return NAMES[range] ?? range;
}

/**
 * How long saving a webhook waits for its host's addresses (the lookup gives up by itself
 * after about as long; dns-resolver.ts).
 */
export const RESOLVE_TIMEOUT_MS = 5_000;

/** What a refusal of a name does not tell its caller: the address refused and its range. */
export interface RefusedDetail {
  host: string;
  address: string;
  range: string;
}

/**
 * The reason given for a name that resolves to an address the policy refuses: the name only.
 * The address is this network's own business (a name like `postgres` answers an internal
 * one), so it goes to the service's log (RefusedDetail), never to the caller or the delivery
 * log.
 */
export function nonPublicName(host: string): string {
  return `${host} resolves to a non-public address`;
}

/**
 * Null when every address of `hostname` may be reached, else the reason. An IP literal is
 * checked as it is, and the reason names its range (the caller wrote the address); a name is
 * resolved with `resolve`, and a refusal names no address (nonPublicName): `refused` is told
 * which, for the service's log.
 */
export async function refusedHost(
  hostname: string,
  policy: AddressPolicy,
  resolve: HostResolver,
  timeoutMs = RESOLVE_TIMEOUT_MS,
  refused?: (detail: RefusedDetail) => void,
): Promise<string | null> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (ipaddr.isValid(bare)) {
    const why = refusedAddress(bare, policy);
    return why ? `${bare} is ${why}` : null;
  }
  let addresses: string[] | null;
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new AbortController();
  try {
    addresses = await Promise.race([
      resolve(bare, giveUp.signal),
      new Promise<null>((r) => {
        timer = setTimeout(() => {
          r(null); // first: the abort below rejects the lookup's answer at once
          giveUp.abort();
        }, timeoutMs);
      }),
    ]);
  } catch (err) {
    // Too many lookups wait already (lookup-gate.ts): this service's state, not the address's.
    if (err instanceof LookupsBusy) throw unavailable();
    return `${bare} does not resolve`;
  } finally {
    clearTimeout(timer);
  }
  if (addresses === null) return `${bare} does not resolve within ${timeoutMs / 1000} s`;
  if (addresses.length === 0) return `${bare} does not resolve`;
  for (const a of addresses) {
    const why = refusedAddress(a, policy);
    if (why) {
      refused?.({ host: bare, address: a, range: why });
      return nonPublicName(bare);
    }
  }
  return null;
}
