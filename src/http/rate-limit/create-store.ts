import type { Logger } from 'pino';
import { FallbackStore } from './fallback-store.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import type { RateLimitStore } from './store.js';

/**
 * Redis when REDIS_URL is set, with this process's memory standing in while Redis is away;
 * waits briefly for the first connection so the first requests do not count as an outage.
 * `now` is the limiter's clock (the service's), which the memory store sweeps by.
 */
export async function createRateLimitStore(
  redisUrl: string | null,
  logger: Logger,
  now: () => number,
): Promise<{ store: RateLimitStore; redisReady: (() => boolean) | null }> {
  if (!redisUrl) return { store: new MemoryStore(now), redisReady: null };
  const redis = new RedisStore(redisUrl);
  await redis.connected(2_000);
  const store = new FallbackStore(redis, new MemoryStore(now), logger);
  return { store, redisReady: () => store.sharedReady };
}
