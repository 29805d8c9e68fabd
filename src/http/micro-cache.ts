import type { FastifyReply, FastifyRequest } from 'fastify';
import { TtlCache } from '../lib/ttl-cache.js';

/**
 * A short-lived cache of serialised answers for anonymous, public reads (the public object
 * list): identical requests within `ttlMs` get the same bytes without touching the
 * database. Keyed by the full URL, so every filter and cursor is its own entry. `ttlMs` 0
 * turns it off.
 */
export class MicroCache {
  private readonly cache: TtlCache<string, string> | null;

  constructor(ttlMs: number, maxEntries = 2_000) {
    this.cache = ttlMs > 0 ? new TtlCache<string, string>(ttlMs, maxEntries) : null;
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
    const body = reply.serialize(await compute()) as string;
    this.cache?.set(req.url, body);
    return body;
  }
}
