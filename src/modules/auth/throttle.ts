import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { asDate } from '../../db/values.js';

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
    const { rows } = await this.db.execute<{ until: Date | string | null }>(sql`
      SELECT max(blocked_until) AS until FROM sign_in_failures
      WHERE key IN (${sql.join(
        keys.map((k) => sql`${k}`),
        sql`, `,
      )})`);
    const raw = rows[0]?.until;
    const until = raw ? asDate(raw) : null;
    if (!until || until <= now) return 0;
    return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
  }

  async recordFailure(keys: string[]): Promise<void> {
    const now = this.clock.now();
    const forgetBefore = new Date(now.getTime() - FORGET_AFTER_MS);
    for (const key of keys) {
      const { rows } = await this.db.execute<{ failures: number }>(sql`
        INSERT INTO sign_in_failures AS f (key, failures, window_start)
        VALUES (${key}, 1, ${now})
        ON CONFLICT (key) DO UPDATE SET
          failures = CASE WHEN f.window_start < ${forgetBefore} THEN 1 ELSE f.failures + 1 END,
          window_start = ${now}
        RETURNING failures`);
      const wait = waitAfter(rows[0]?.failures ?? 1, this.policyOf(key));
      if (wait > 0) {
        await this.db.execute(sql`UPDATE sign_in_failures
          SET blocked_until = ${new Date(now.getTime() + wait)} WHERE key = ${key}`);
      }
    }
  }

  async recordSuccess(key: string): Promise<void> {
    await this.db.execute(sql`DELETE FROM sign_in_failures WHERE key = ${key}`);
  }
}

export const ACCOUNT_POLICY: ThrottlePolicy = { freeFailures: 5 };
export const ADDRESS_POLICY: ThrottlePolicy = { freeFailures: 20 };

export const policyOfKey = (key: string): ThrottlePolicy =>
  key.startsWith('ip:') ? ADDRESS_POLICY : ACCOUNT_POLICY;
