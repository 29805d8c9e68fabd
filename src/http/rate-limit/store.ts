/**
 * A counter store for rate limits (docs/api.md, "Rate limits": in memory by default, Redis when
 * REDIS_URL is set). `hit` adds `cost` to the current window of `key` and answers the
 * weighted count over the rolling window: the previous window's count scaled by how much
 * of it still overlaps, plus the current one (the "sliding window counter").
 */
export interface CounterWindow {
  key: string;
  windowMs: number;
}

export interface RateLimitStore {
  hit(key: string, windowMs: number, cost: number, nowMs: number): Promise<number>;
  /** `hit` on several windows at once (a group's rules), in one round trip where it can. */
  hitAll(windows: readonly CounterWindow[], cost: number, nowMs: number): Promise<number[]>;
  /** Takes back a hit that was refused, so refusals do not eat the allowance. */
  undo(key: string, windowMs: number, cost: number, nowMs: number): Promise<void>;
  close(): Promise<void>;
}

/** A store that counts in this process and can answer without a promise. */
export interface SyncStore extends RateLimitStore {
  hitNow(key: string, windowMs: number, cost: number, nowMs: number): number;
  undoNow(key: string, windowMs: number, cost: number, nowMs: number): void;
}

export function isSyncStore(store: RateLimitStore): store is SyncStore {
  return typeof (store as Partial<SyncStore>).hitNow === 'function';
}

export function windowStart(nowMs: number, windowMs: number): number {
  return Math.floor(nowMs / windowMs) * windowMs;
}

export function weighted(prev: number, current: number, nowMs: number, windowMs: number): number {
  const elapsed = (nowMs - windowStart(nowMs, windowMs)) / windowMs;
  return prev * (1 - elapsed) + current;
}
