import type { CounterWindow, RateLimitStore } from './store.js';

/** The shared store, which may be away (RedisStore). */
export interface SharedStore extends RateLimitStore {
  readonly ready: boolean;
}

interface Log {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * After a failed command, how long requests count in memory before Redis is tried again: real
 * time (Date.now), not the limiter's clock, since Redis comes back in real time.
 */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * The shared store while it answers, this process's memory while it does not: no request
 * fails or waits because Redis is away. The limits then hold per process (each counts only
 * what it receives), which is looser but keeps the service up. The switch is logged once each
 * way, not per request.
 */
export class FallbackStore implements RateLimitStore {
  private onMemory = false;
  private retryAt = 0;

  constructor(
    private readonly shared: SharedStore,
    private readonly memory: RateLimitStore,
    private readonly log: Log,
  ) {}

  /** Whether the shared store is connected now (for /readyz: degraded while it is not). */
  get sharedReady(): boolean {
    return this.shared.ready;
  }

  private sharedUsable(): boolean {
    if (!this.shared.ready || Date.now() < this.retryAt) {
      this.toMemory(null);
      return false;
    }
    return true;
  }

  private toMemory(err: unknown) {
    if (err !== null) this.retryAt = Date.now() + RETRY_AFTER_FAILURE_MS;
    if (this.onMemory) return;
    this.onMemory = true;
    this.log.warn(
      { err: err ?? undefined },
      'rate limits: Redis is unavailable; counting in this process until it is back',
    );
  }

  private toShared() {
    if (!this.onMemory) return;
    this.onMemory = false;
    this.log.info({}, 'rate limits: Redis is back; counting there again');
  }

  async hit(key: string, windowMs: number, cost: number, nowMs: number): Promise<number> {
    if (this.sharedUsable()) {
      try {
        const count = await this.shared.hit(key, windowMs, cost, nowMs);
        this.toShared();
        return count;
      } catch (err) {
        this.toMemory(err);
      }
    }
    return this.memory.hit(key, windowMs, cost, nowMs);
  }

  hitAll(windows: readonly CounterWindow[], cost: number, nowMs: number): Promise<number[]> {
    if (!this.sharedUsable()) return this.memory.hitAll(windows, cost, nowMs);
    return this.shared.hitAll(windows, cost, nowMs).then(
      (counts) => {
        this.toShared();
        return counts;
      },
      (err: unknown) => {
        this.toMemory(err);
        return this.memory.hitAll(windows, cost, nowMs);
      },
    );
  }

  async undo(key: string, windowMs: number, cost: number, nowMs: number): Promise<void> {
    if (this.sharedUsable()) {
      try {
        await this.shared.undo(key, windowMs, cost, nowMs);
        return;
      } catch (err) {
        this.toMemory(err);
      }
    }
    await this.memory.undo(key, windowMs, cost, nowMs);
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.memory.close()]);
  }
}
