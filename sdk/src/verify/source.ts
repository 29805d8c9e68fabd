import { retryAfterSeconds } from '../errors.js';

/**
 * Where the verifier reads the service's public answers: over HTTP from its base URL, or
 * from files saved earlier (`ons-verify download`, node only: `./files.ts`).
 */
export interface Source {
  /** The parsed JSON answer of a GET, or null when it is 404. */
  json<T>(path: string): Promise<T | null>;
  /** The exact bytes of a GET, or null when it is 404. */
  bytes(path: string): Promise<Uint8Array | null>;
}

/** How `httpSource` waits out a service that asks it to come back later. */
export interface HttpSourceOptions {
  /** How many times one read is sent again after a `429` or `503`. Default 5. */
  retries?: number;
  /**
   * A `Retry-After` longer than this is not waited for: the read fails. Default 60 000, a
   * rate limit's minute (docs/api.md, "Rate limits").
   */
  maxDelayMs?: number;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

const COME_BACK = new Set([429, 503]);

/**
 * Reads the service at `baseUrl` (`fetch`: the platform's unless given). A `429` or `503`
 * is waited out (its `Retry-After`, 1 s without one) and the read sent again, at most
 * `retries` times: a whole-network check reads every batch's content, more than the
 * service's rate limit lets through at once.
 */
export function httpSource(
  baseUrl: string,
  fetchFn: typeof fetch = globalThis.fetch,
  opts: HttpSourceOptions = {},
): Source {
  const base = baseUrl.replace(/\/+$/, '');
  const retries = opts.retries ?? 5;
  const maxDelayMs = opts.maxDelayMs ?? 60_000;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const get = async (path: string): Promise<Uint8Array | null> => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetchFn(`${base}${path}`, { headers: { accept: 'application/json' } });
      if (res.status === 404) return null;
      if (res.ok) return new Uint8Array(await res.arrayBuffer());
      const delayMs = (retryAfterSeconds(res.headers.get('retry-after')) ?? 1) * 1000;
      if (!COME_BACK.has(res.status) || attempt >= retries || delayMs > maxDelayMs) {
        throw new Error(`GET ${path}: HTTP ${res.status}`);
      }
      await res.body?.cancel();
      await sleep(delayMs);
    }
  };
  return {
    bytes: get,
    json: async <T>(path: string) => {
      const b = await get(path);
      return b === null ? null : (JSON.parse(new TextDecoder().decode(b)) as T);
    },
  };
}
