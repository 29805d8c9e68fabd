import type { FastifyReply, FastifyRequest } from 'fastify';
import { TtlCache } from '../lib/ttl-cache.js';

/** What the cache holds at most, in characters of serialised answers (~2 bytes each). */
export const MICRO_CACHE_BUDGET_CHARS = 16 * 1024 * 1024;

/**
 * A short-lived cache of serialised answers for anonymous, public reads (the public object
 * list): identical requests within `ttlMs` get the same bytes without touching the
 * database. Keyed by the full URL, so every filter and cursor is its own entry. `ttlMs` 0
 * turns it off.
 *
 * Bounded in entries and in size: the characters kept since the cache was last emptied are
 * counted, and a set that would pass `budgetChars` empties it first (its entries live a
 * second or so, so little is lost); an answer larger than a tenth of the budget is not kept.
 * So many different large pages (`include_faces=true`) cannot pile up.
 */
export class MicroCache {
  private readonly cache: TtlCache<string, string> | null;
  private chars = 0;
  /** +1 at each `clear()`: an answer computed across a clear is not kept (it may be stale). */
  private generation = 0;

  constructor(
    ttlMs: number,
    maxEntries = 2_000,
    private readonly budgetChars = MICRO_CACHE_BUDGET_CHARS,
  ) {
    this.cache = ttlMs > 0 ? new TtlCache<string, string>(ttlMs, maxEntries) : null;
  }

  /** Characters counted since the cache was last emptied: at least what it holds. */
  get size(): number {
    return this.chars;
  }

  /** Answers from the cache, or computes, serialises with the route's schema, and keeps it. */
  async serve(
    req: FastifyRequest,
    reply: FastifyReply,
    compute: () => Promise<unknown>,
  ): Promise<string> {
    void reply.type('application/json; charset=utf-8');
    const hit = this.cache?.get(req.url);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const body = reply.serialize(await compute()) as string;
    if (generation === this.generation) this.keep(req.url, body);
    return body;
  }

  /**
   * Forgets every answer, and any being computed now: called once a change that must not
   * wait out the entries' lifetime has committed (a template made private).
   */
  clear(): void {
    this.generation++;
    this.cache?.clear();
    this.chars = 0;
  }

  private keep(url: string, body: string): void {
    if (!this.cache || body.length > this.budgetChars / 10) return;
    if (this.chars + body.length > this.budgetChars) {
      this.cache.clear();
      this.chars = 0;
    }
    this.cache.set(url, body);
    this.chars += body.length;
  }
}
