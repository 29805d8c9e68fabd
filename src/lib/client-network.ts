import { isIPv4, isIPv6 } from 'node:net';

/**
 * Keys for per-address limits. An IPv6 client usually holds a whole /64 (one host, a free
 * choice of addresses), so counting each IPv6 address apart would let one client spread its
 * attempts over as many as it likes: limits count an IPv6 client by its /64.
 */

/** An IPv6 address's eight groups, or null. */
function ipv6Groups(ip: string): number[] | null {
  const bare = ip.split('%')[0]!.toLowerCase();
  if (!isIPv6(bare)) return null;
  const halves = bare.split('::');
  const groupsOf = (part: string | undefined): number[] =>
    !part
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const head = groupsOf(halves[0]);
  const tail = groupsOf(halves[1]);
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  return [...head, ...Array<number>(fill).fill(0), ...tail];
}

/** An IPv4 address (one mapped into IPv6 as the IPv4 one), or null. */
function ipv4Of(ip: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const v4 = mapped ? mapped[1]! : ip;
  return isIPv4(v4) ? v4 : null;
}

/** An IPv6 address's /64 as text (`2001:db8:1:2::/64`), or null. */
function ipv6Net64(ip: string): string | null {
  const groups = ipv6Groups(ip);
  return groups
    ? `${groups
        .slice(0, 4)
        .map((g) => g.toString(16))
        .join(':')}::/64`
    : null;
}

/**
 * The network an anonymous request comes from: an IPv4 address's /24, an IPv6 address's /64
 * (what one subscriber usually holds). One limit for a whole network, so hopping addresses
 * within it gains nothing.
 */
export function networkOf(ip: string | undefined): string {
  if (!ip) return 'net:unknown';
  const v4 = ipv4Of(ip);
  if (v4) return `net:${v4.split('.').slice(0, 3).join('.')}.0/24`;
  return `net:${ipv6Net64(ip) ?? ip.slice(0, 64)}`;
}

/**
 * The key a per-address limit counts a client under: an IPv4 address as it is, an IPv6
 * address by its /64 (docs/api.md, "Rate limits").
 */
export function clientSubject(ip: string | undefined): string {
  if (!ip) return 'ip:unknown';
  const v4 = ipv4Of(ip);
  if (v4) return `ip:${v4}`;
  const net = ipv6Net64(ip);
  return `ip:${net ?? ip.slice(0, 64)}`;
}
