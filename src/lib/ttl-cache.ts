/**
 * A small bounded cache whose entries live `ttlMs` of real (monotonic) time. When full,
 * the oldest entry goes first. Used for credential checks on the request hot path.
 *
 * `spread` (0 to 1) shortens each entry's life by a random share of up to that much, never
 * lengthens it: entries filled together (every client's first request) then expire apart
 * instead of all reading the database again in the same instant, and `ttlMs` stays the
 * bound a revocation relies on.
 */
export class TtlCache<K, V> {
  private readonly map = new Map<K, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
    private readonly spread = 0,
  ) {}

  get(key: K): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= performance.now()) {
      this.map.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: K, value: V): void {
    if (this.map.size >= this.maxEntries && !this.map.has(key)) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    const life = this.spread > 0 ? this.ttlMs * (1 - this.spread * Math.random()) : this.ttlMs;
    this.map.set(key, { value, expiresAt: performance.now() + life });
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}

/** The spread of the credential checks' caches (sessions, EOA signers): a quarter of the TTL. */
export const CACHE_SPREAD = 0.25;
