import { Redis } from 'ioredis';
import { weighted, windowStart, type RateLimitStore } from './store.js';

// Adds the cost to the current window and reads the previous one, atomically.
const HIT = `
local cur = redis.call('INCRBY', KEYS[1], ARGV[1])
if cur == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local prev = redis.call('GET', KEYS[2])
return {cur, prev or 0}
`;

/** Counters shared by every instance through Redis (REDIS_URL). */
export class RedisStore implements RateLimitStore {
  private readonly redis: Redis;

  constructor(url: string) {
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      lazyConnect: false,
    });
    this.redis.defineCommand('onsHit', { numberOfKeys: 2, lua: HIT });
  }

  private keys(key: string, windowMs: number, nowMs: number): [string, string] {
    const start = windowStart(nowMs, windowMs);
    return [`ons:rl:${key}:${start}`, `ons:rl:${key}:${start - windowMs}`];
  }

  async hit(key: string, windowMs: number, cost: number, nowMs: number): Promise<number> {
    const [cur, prev] = this.keys(key, windowMs, nowMs);
    const r = (await (
      this.redis as unknown as {
        onsHit(a: string, b: string, cost: number, ttl: number): Promise<[number, string | number]>;
      }
    ).onsHit(cur, prev, cost, windowMs * 2)) ?? [0, 0];
    return weighted(Number(r[1]), Number(r[0]), nowMs, windowMs);
  }

  async undo(key: string, windowMs: number, cost: number, nowMs: number): Promise<void> {
    const [cur] = this.keys(key, windowMs, nowMs);
    await this.redis.decrby(cur, cost);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
