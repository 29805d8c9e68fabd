import { weighted, windowStart, type CounterWindow, type SyncStore } from './store.js';

interface Entry {
  start: number;
  current: number;
  prev: number;
}

/**
 * One process's counters. Old entries are swept every minute, by the clock the limiter
 * counts with (`now`), so a sweep never takes a window that clock is still in.
 */
export class MemoryStore implements SyncStore {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    now: () => number = Date.now,
    private readonly maxWindowMs = 60_000,
  ) {
    this.sweeper = setInterval(() => this.sweep(now()), 60_000);
    this.sweeper.unref();
  }

  private entry(key: string, windowMs: number, nowMs: number): Entry {
    const start = windowStart(nowMs, windowMs);
    let e = this.entries.get(key);
    if (!e) {
      e = { start, current: 0, prev: 0 };
      this.entries.set(key, e);
    } else if (e.start !== start) {
      e.prev = e.start === start - windowMs ? e.current : 0;
      e.current = 0;
      e.start = start;
    }
    return e;
  }

  hitNow(key: string, windowMs: number, cost: number, nowMs: number): number {
    const e = this.entry(key, windowMs, nowMs);
    e.current += cost;
    return weighted(e.prev, e.current, nowMs, windowMs);
  }

  undoNow(key: string, windowMs: number, cost: number, nowMs: number): void {
    const e = this.entry(key, windowMs, nowMs);
    e.current = Math.max(0, e.current - cost);
  }

  async hit(key: string, windowMs: number, cost: number, nowMs: number): Promise<number> {
    return this.hitNow(key, windowMs, cost, nowMs);
  }

  async hitAll(windows: readonly CounterWindow[], cost: number, nowMs: number): Promise<number[]> {
    return windows.map((w) => this.hitNow(w.key, w.windowMs, cost, nowMs));
  }

  async undo(key: string, windowMs: number, cost: number, nowMs: number): Promise<void> {
    this.undoNow(key, windowMs, cost, nowMs);
  }

  private sweep(nowMs: number) {
    for (const [k, e] of this.entries) {
      if (e.start < nowMs - 2 * this.maxWindowMs) this.entries.delete(k);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
  }
}
