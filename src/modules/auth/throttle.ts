import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import * as repo from './repo/throttle.js';

/**
 * Failed sign-in counting, behind a small interface so another store (e.g. Redis) can
 * replace it. Keys are `account:<email|phone>` and `ip:<address>`.
 */
export interface SignInThrottle {
  /** Seconds the caller must wait before another attempt with any of `keys`; 0 when free. */
  retryAfterSeconds(keys: string[]): Promise<number>;
  recordFailure(keys: string[]): Promise<void>;
  /** A correct password clears the account's count (never the address's). */
  recordSuccess(key: string): Promise<void>;
}

export interface ThrottlePolicy {
  /** Failures allowed before waits begin. */
  freeFailures: number;
}

/** After the free failures, each further one doubles the wait: 30 s, 60 s, … up to 15 min. */
const FIRST_WAIT_MS = 30_000;
const MAX_WAIT_MS = 15 * 60_000;
/** A key with no failure for this long starts again from zero. */
const FORGET_AFTER_MS = 60 * 60_000;

export function waitAfter(failures: number, policy: ThrottlePolicy): number {
  const over = failures - policy.freeFailures;
  if (over < 0) return 0;
  return Math.min(FIRST_WAIT_MS * 2 ** Math.min(over, 20), MAX_WAIT_MS);
}

/**
 * The counters in PostgreSQL (`sign_in_failures`), so every instance behind a load
 * balancer sees the same failures.
 */
export class PgSignInThrottle implements SignInThrottle {
  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly policyOf: (key: string) => ThrottlePolicy,
  ) {}

  async retryAfterSeconds(keys: string[]): Promise<number> {
    const now = this.clock.now();
    const until = await repo.blockedUntil(this.db, keys);
    if (!until || until <= now) return 0;
    return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
  }

  async recordFailure(keys: string[]): Promise<void> {
    const now = this.clock.now();
    const forgetBefore = new Date(now.getTime() - FORGET_AFTER_MS);
    for (const key of keys) {
      const failures = await repo.countFailure(this.db, key, now, forgetBefore);
      const wait = waitAfter(failures, this.policyOf(key));
      if (wait > 0) await repo.blockUntil(this.db, key, new Date(now.getTime() + wait));
    }
  }

  async recordSuccess(key: string): Promise<void> {
    await repo.forget(this.db, key);
  }
}

export const ACCOUNT_POLICY: ThrottlePolicy = { freeFailures: 5 };
export const ADDRESS_POLICY: ThrottlePolicy = { freeFailures: 20 };

export const policyOfKey = (key: string): ThrottlePolicy =>
  key.startsWith('ip:') ? ADDRESS_POLICY : ACCOUNT_POLICY;
