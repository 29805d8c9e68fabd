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
 *
 * A cache that another process's change must empty (`clear`, when its notice arrives) is
 * trusted only while those notices are heard (`trustOnlyWhile`): otherwise every request is
 * computed and nothing is kept.
 */
export class MicroCache {
  private readonly cache: TtlCache<string, string> | null;
  private chars = 0;
  /** +1 at each `clear()`: an answer computed across a clear is not kept (it may be stale). */
  private generation = 0;
  private trusted: () => boolean = () => true;

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

  /**
   * From now on, answers from memory and keeps answers only while `trusted()` holds (it is
   * called once per request): src/notices.ts makes it "while this process hears the changes
   * other processes announce". Whoever makes it false again empties the cache (`clear`) then.
   */
  trustOnlyWhile(trusted: () => boolean): void {
    this.trusted = trusted;
  }

  /** Answers from the cache, or computes, serialises with the route's schema, and keeps it. */
  async serve(
    req: FastifyRequest,
    reply: FastifyReply,
    compute: () => Promise<unknown>,
  ): Promise<string> {
    void reply.type('application/json; charset=utf-8');
    if (this.cache === null || !this.trusted()) return reply.serialize(await compute()) as string;
    const hit = this.cache.get(req.url);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const body = reply.serialize(await compute()) as string;
    if (generation === this.generation) this.keep(req.url, body);
    return body;
  }

  /**
   * Forgets every answer, and any being computed now: called once a change that must not
   * wait out the entries' lifetime has committed (a template made private), here or, through
   * its notice, in another process, and whenever such notices may have been missed.
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
