import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import * as repo from './repo/throttle.js';

/**
 * Failed sign-in counting, behind a small interface so another store (e.g. Redis) can
 * replace it. Keys are `account:<email|phone>`, `ip:<address>` (an IPv6 client's /64,
 * src/lib/client-network.ts) and `code:<email|phone>` (wrong codes for an address, codes.ts).
 *
 * An attempt reserves its failure before the password is checked (`reserve`), so however
 * many arrive at once, no more than the free failures reach the password hash; a right
 * password then gives its reservation back, and clears the account's count only when its
 * wallet holds the address (`release`; else `giveBack`). See docs/decisions.md.
 */
export interface SignInThrottle {
  /**
   * Counts one failure on every key at once, unless one of them is blocked: then nothing is
   * counted and the answer is the seconds to wait. 0 when the attempt may go on.
   */
  reserve(keys: string[]): Promise<number>;
  /**
   * The attempt was right, by the holder of the account's address: the account's count is
   * cleared, and the reservation on each other key (the client address) is given back,
   * never counted as a failure.
   */
  release(accountKey: string, otherKeys: string[]): Promise<void>;
  /**
   * The attempt was right but proves nothing of the others counted on these keys (a wallet
   * that only names the address): its own reservation on each is given back, nothing more.
   */
  giveBack(keys: string[]): Promise<void>;
}

export interface ThrottlePolicy {
  /** Failures allowed before waits begin. */
  freeFailures: number;
}

/** After the free failures, each further one doubles the wait: 30 s, 60 s, … up to 15 min. */
const FIRST_WAIT_MS = 30_000;
const MAX_WAIT_MS = 15 * 60_000;
/** A key with no failure for this long starts again from zero. */
export const FORGET_AFTER_MS = 60 * 60_000;

/** The wait once a key has `failures` failures (the SQL of `repo.reserveFailure` matches). */
export function waitAfter(failures: number, policy: ThrottlePolicy): number {
  const over = failures - policy.freeFailures;
  if (over < 0) return 0;
  return Math.min(FIRST_WAIT_MS * 2 ** Math.min(over, 20), MAX_WAIT_MS);
}

/** Answered inside the reservation's transaction to roll it back. */
class Blocked extends Error {}

/**
 * The counters in PostgreSQL (`sign_in_failures`), so every instance behind a load
 * balancer, and every process, shares them: a reservation is one upsert under the row's
 * lock, and the keys of one attempt are reserved together in one transaction.
 */
export class PgSignInThrottle implements SignInThrottle {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly policyOf: (key: string) => ThrottlePolicy,
  ) {}

  async reserve(keys: string[]): Promise<number> {
    const now = this.clock.now();
    const forgetBefore = new Date(now.getTime() - FORGET_AFTER_MS);
    // One order for every attempt, so two attempts sharing keys never wait on each other in
    // a cycle.
    const ordered = [...new Set(keys)].sort();
    try {
      await this.db.transaction(async (tx) => {
        for (const key of ordered) {
          const rule = {
            freeFailures: this.policyOf(key).freeFailures,
            firstWaitMs: FIRST_WAIT_MS,
            maxWaitMs: MAX_WAIT_MS,
          };
          const reserved = await repo.reserveFailure(tx, key, now, forgetBefore, rule);
          if (reserved === null) throw new Blocked();
        }
      });
      return 0;
    } catch (err) {
      if (!(err instanceof Blocked)) throw err;
    }
    const until = await repo.blockedUntil(this.db, ordered);
    if (!until || until <= now) return 1; // unblocked in between: the caller may try again
    return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
  }

  async release(accountKey: string, otherKeys: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      await repo.forget(tx, accountKey);
      for (const key of [...new Set(otherKeys)].sort()) {
        if (key !== accountKey) await repo.giveBack(tx, key, this.policyOf(key).freeFailures);
      }
    });
  }

  async giveBack(keys: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const key of [...new Set(keys)].sort()) {
        await repo.giveBack(tx, key, this.policyOf(key).freeFailures);
      }
    });
  }
}

export const ACCOUNT_POLICY: ThrottlePolicy = { freeFailures: 5 };
export const ADDRESS_POLICY: ThrottlePolicy = { freeFailures: 20 };
/** Wrong codes for one email address or phone number, by anyone (codes.ts). */
export const CODE_GUESS_POLICY: ThrottlePolicy = { freeFailures: 10 };

export const policyOfKey = (key: string): ThrottlePolicy =>
  key.startsWith('ip:')
    ? ADDRESS_POLICY
    : key.startsWith('code:')
      ? CODE_GUESS_POLICY
      : ACCOUNT_POLICY;
