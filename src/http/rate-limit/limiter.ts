import type { Group, LimitRule } from './groups.js';
import { isSyncStore, type RateLimitStore } from './store.js';

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the reported window resets. */
  resetAt: number;
  /** Seconds until a refused request may be retried. */
  retryAfter: number;
}

/** The answer to counts already taken: allowed unless one rule is over its limit. */
function decide(group: Group, counts: number[], cost: number, nowMs: number): Decision {
  let refusedBy: LimitRule | null = null;
  group.rules.forEach((r, i) => {
    if (counts[i]! > r.limit && !refusedBy) refusedBy = r;
  });
  const head = group.rules[0]!;
  const headCount = counts[0]!;
  const resetAt = Math.ceil((Math.floor(nowMs / head.windowMs) + 1) * (head.windowMs / 1000));
  if (refusedBy) {
    const rule: LimitRule = refusedBy;
    const retryAfter = Math.max(1, Math.ceil((rule.windowMs - (nowMs % rule.windowMs)) / 1000));
    return {
      allowed: false,
      limit: head.limit,
      remaining: Math.max(0, Math.floor(head.limit - headCount + cost)),
      resetAt,
      retryAfter,
    };
  }
  return {
    allowed: true,
    limit: head.limit,
    remaining: Math.max(0, Math.floor(head.limit - headCount)),
    resetAt,
    retryAfter: 0,
  };
}

/**
 * Checks a request against every rule of its group. A refused request takes its cost
 * back from every counter it touched, so a client hammering at the limit does not starve
 * itself for longer than the window. `now` is the service's clock in milliseconds (no default:
 * the wall clock beside a service's injected one would not move with it).
 */
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly now: () => number,
  ) {}

  async check(group: Group, subject: string, cost = 1): Promise<Decision> {
    const nowMs = this.now();
    const counts = await this.store.hitAll(
      group.rules.map((r) => ({ key: this.key(group, subject, r), windowMs: r.windowMs })),
      cost,
      nowMs,
    );
    const d = decide(group, counts, cost, nowMs);
    if (!d.allowed) {
      await Promise.all(
        group.rules.map((r) =>
          this.store.undo(this.key(group, subject, r), r.windowMs, cost, nowMs),
        ),
      );
    }
    return d;
  }

  /**
   * `check` without a promise when the store counts in this process (the in-memory store),
   * else null: most requests then pass the limiter in one synchronous step.
   */
  checkNow(group: Group, subject: string, cost = 1): Decision | null {
    const store = this.store;
    if (!isSyncStore(store)) return null;
    const nowMs = this.now();
    const counts = group.rules.map((r) =>
      store.hitNow(this.key(group, subject, r), r.windowMs, cost, nowMs),
    );
    const d = decide(group, counts, cost, nowMs);
    if (!d.allowed) {
      for (const r of group.rules)
        store.undoNow(this.key(group, subject, r), r.windowMs, cost, nowMs);
    }
    return d;
  }

  private key(group: Group, subject: string, rule: LimitRule): string {
    return `${group.name}:${rule.windowMs}:${subject}`;
  }
}
