import { Redis } from 'ioredis';
import { weighted, windowStart, type CounterWindow, type RateLimitStore } from './store.js';

const COMMAND_TIMEOUT_MS = 250;

// For each window (KEYS in pairs: current, previous; ARGV in pairs beside them: the cost and
// the current window's expiry): adds the cost to the current window and reads the previous
// one, atomically. One call carries every window of every request of an event-loop turn.
const HIT = `
local out = {}
for i = 1, #KEYS, 2 do
  local cur = redis.call('INCRBY', KEYS[i], ARGV[i])
  if cur == tonumber(ARGV[i]) then redis.call('PEXPIRE', KEYS[i], ARGV[i + 1]) end
  out[#out + 1] = cur
  out[#out + 1] = redis.call('GET', KEYS[i + 1]) or 0
end
return out
`;

interface QueuedHit {
  windows: readonly CounterWindow[];
  cost: number;
  nowMs: number;
  resolve(counts: number[]): void;
  reject(err: unknown): void;
}

type Hit = (keys: number, ...args: (string | number)[]) => Promise<(string | number)[] | null>;

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
  private queue: QueuedHit[] = [];

  constructor(url: string) {
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 1_000,
      retryStrategy: (times) => Math.min(times * 100, 1_000),
      lazyConnect: false,
      // The commands of every request in one tick go out in one write: under load this is
      // most of what the shared counts cost (docs/performance.md, "Rate-limit overhead").
      enableAutoPipelining: true,
    });
    // Connection errors are expected while Redis is away; FallbackStore reports the outage.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('onsHit', { lua: HIT });
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
    const [count] = await this.hitAll([{ key, windowMs }], cost, nowMs);
    return count!;
  }

  /**
   * Queued and sent with the other hits of this event-loop turn in one command: a command
   * costs the client far more than a key in it (docs/performance.md, "Rate-limit overhead").
   */
  hitAll(windows: readonly CounterWindow[], cost: number, nowMs: number): Promise<number[]> {
    if (!this.started) return this.start().then(() => this.hitAll(windows, cost, nowMs));
    return new Promise((resolve, reject) => {
      this.queue.push({ windows, cost, nowMs, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  /**
   * Sends the queued hits as one script call. Hits on the same window are summed into one
   * INCRBY, then each request gets the count as it stood just after its own cost, in queue
   * order: what it would have seen alone, at a fraction of the work when one caller's
   * requests arrive together.
   */
  private flush() {
    const batch = this.queue;
    this.queue = [];
    const windows = new Map<string, { prev: string; ttl: number; total: number; at: number }>();
    // Per request, per window: its counter and the running total just after its cost.
    const shares = batch.map((p) =>
      p.windows.map((w) => {
        const [cur, prev] = this.keys(w.key, w.windowMs, p.nowMs);
        let win = windows.get(cur);
        if (!win) {
          win = { prev, ttl: w.windowMs * 2, total: 0, at: 0 };
          windows.set(cur, win);
        }
        win.total += p.cost;
        return { win, upTo: win.total };
      }),
    );
    const keys: string[] = [];
    const args: number[] = [];
    let index = 0;
    for (const [cur, win] of windows) {
      keys.push(cur, win.prev);
      args.push(win.total, win.ttl);
      win.at = index;
      index += 2;
    }
    const onsHit = (this.redis as unknown as { onsHit: Hit }).onsHit.bind(this.redis);
    onsHit(keys.length, ...keys, ...args).then(
      (r) => {
        batch.forEach((p, i) =>
          p.resolve(
            p.windows.map((w, j) => {
              const { win, upTo } = shares[i]![j]!;
              const current = Number(r?.[win.at] ?? 0) - win.total + upTo;
              return weighted(Number(r?.[win.at + 1] ?? 0), current, p.nowMs, w.windowMs);
            }),
          ),
        );
      },
      (err: unknown) => {
        for (const p of batch) p.reject(err);
      },
    );
  }

  async undo(key: string, windowMs: number, cost: number, nowMs: number): Promise<void> {
    if (!this.started) await this.start();
    const [cur] = this.keys(key, windowMs, nowMs);
    await this.redis.decrby(cur, cost);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
