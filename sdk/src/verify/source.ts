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

/** Reads the service at `baseUrl` (`fetch`: the platform's unless given). */
export function httpSource(baseUrl: string, fetchFn: typeof fetch = globalThis.fetch): Source {
  const base = baseUrl.replace(/\/+$/, '');
  const get = async (path: string): Promise<Uint8Array | null> => {
    const res = await fetchFn(`${base}${path}`, { headers: { accept: 'application/json' } });
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  };
  return {
    bytes: get,
    json: async <T>(path: string) => {
      const b = await get(path);
      return b === null ? null : (JSON.parse(new TextDecoder().decode(b)) as T);
    },
  };
}
