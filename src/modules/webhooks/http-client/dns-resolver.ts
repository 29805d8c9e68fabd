import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { HostResolver } from './lookup-gate.js';

/** How long one query waits for its first answer, and how often it is sent (c-ares backs off). */
export const DNS_TIMEOUT_MS = 1_500;
export const DNS_TRIES = 2;
/** The most a lookup takes, whatever the name servers (c-ares asks each in turn). */
export const DNS_DEADLINE_MS = 5_000;

export interface DnsResolverOptions {
  /** Name servers (`host` or `host:port`); the system's (`/etc/resolv.conf`) by default. */
  servers?: string[];
  timeoutMs?: number;
  tries?: number;
  deadlineMs?: number;
}

/** `localhost` and names under it are loopback by definition (RFC 6761), never asked. */
const isLocalhost = (name: string) => name === 'localhost' || name.endsWith('.localhost');

/**
 * Webhook host names, asked of DNS directly (docs/webhooks.md, "Addresses"): A and AAAA at
 * once through c-ares, which holds no thread while it waits, gives up after `tries` sends of
 * each query to each name server, and stops at once when the caller's signal aborts or after
 * `deadlineMs` in all. (The system's `getaddrinfo`
 * holds one of libuv's four threads until the system resolver gives up, which nothing can
 * shorten; so lookups that could hang had to be rationed to two at a time, and two hanging
 * names delayed every other organization's new connections.) `/etc/hosts` is not read: a
 * webhook names a public host, which DNS answers for.
 */
export function dnsResolver(opts: DnsResolverOptions = {}): HostResolver {
  return async (hostname, signal) => {
    const name = hostname
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
      .toLowerCase();
    if (isIP(name) !== 0) return [name];
    if (isLocalhost(name)) return ['127.0.0.1', '::1'];
    signal?.throwIfAborted();
    const deadline = AbortSignal.timeout(opts.deadlineMs ?? DNS_DEADLINE_MS);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const resolver = new Resolver({
      timeout: opts.timeoutMs ?? DNS_TIMEOUT_MS,
      tries: opts.tries ?? DNS_TRIES,
    });
    if (opts.servers) resolver.setServers(opts.servers);
    const cancel = () => resolver.cancel();
    stop.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
      stop.throwIfAborted();
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value : []),
        ...(v6.status === 'fulfilled' ? v6.value : []),
      ];
      if (addresses.length > 0) return addresses;
      // Neither family answered: the A query's failure says why (ENOTFOUND, ETIMEOUT…).
      throw v4.status === 'rejected' ? v4.reason : new Error(`${name} has no address`);
    } finally {
      stop.removeEventListener('abort', cancel);
    }
  };
}
