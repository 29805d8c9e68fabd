import { Redis } from 'ioredis';
import { weighted, windowStart, type RateLimitStore } from './store.js';

const COMMAND_TIMEOUT_MS = 250;

// Adds the cost to the current window and reads the previous one, atomically.
const HIT = `
local cur = redis.call('INCRBY', KEYS[1], ARGV[1])
if cur == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local prev = redis.call('GET', KEYS[2])
return {cur, prev or 0}
`;

/**
 * Counters shared by every instance through Redis (REDIS_URL). A command fails at once while
 * Redis is away (no offline queue) and within COMMAND_TIMEOUT_MS when it hangs, so a request
 * never waits on it: FallbackStore counts in memory meanwhile. The client keeps reconnecting.
 */
export class RedisStore implements RateLimitStore {
  private readonly redis: Redis;
  /** Settled once the client has been ready, or has tried for a second. */
  private readonly firstConnection: Promise<void>;
  private started = false;

  constructor(url: string) {
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 1_000,
      retryStrategy: (times) => Math.min(times * 100, 1_000),
      lazyConnect: false,
    });
    // Connection errors are expected while Redis is away; FallbackStore reports the outage.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('onsHit', { numberOfKeys: 2, lua: HIT });
    this.firstConnection = this.connected(1_000);
  }

  /** A store used at once (not through FallbackStore) waits for its first connection. */
  private async start(): Promise<void> {
    if (this.started) return;
    await this.firstConnection;
    this.started = true;
  }

  /** Connected and able to take commands. */
  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  /** Resolves when connected, or after `timeoutMs` whatever the state. */
  async connected(timeoutMs: number): Promise<void> {
    if (this.ready) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.redis.once('ready', done);
    });
  }

  private keys(key: string, windowMs: number, nowMs: number): [string, string] {
    const start = windowStart(nowMs, windowMs);
    return [`ons:rl:${key}:${start}`, `ons:rl:${key}:${start - windowMs}`];
  }

  async hit(key: string, windowMs: number, cost: number, nowMs: number): Promise<number> {
    await this.start();
    const [cur, prev] = this.keys(key, windowMs, nowMs);
    const r = (await (
      this.redis as unknown as {
        onsHit(a: string, b: string, cost: number, ttl: number): Promise<[number, string | number]>;
      }
    ).onsHit(cur, prev, cost, windowMs * 2)) ?? [0, 0];
    return weighted(Number(r[1]), Number(r[0]), nowMs, windowMs);
  }

  async undo(key: string, windowMs: number, cost: number, nowMs: number): Promise<void> {
    await this.start();
    const [cur] = this.keys(key, windowMs, nowMs);
    await this.redis.decrby(cur, cost);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
