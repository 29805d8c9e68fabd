import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';

/** The latest time any of these keys is blocked until, if one is. */
export async function blockedUntil(exec: Executor, keys: string[]): Promise<Date | null> {
  const { rows } = await exec.execute<{ until: DbTime | null }>(sql`
    SELECT max(blocked_until) AS until FROM sign_in_failures
    WHERE key IN (${sql.join(
      keys.map((k) => sql`${k}`),
      sql`, `,
    )})`);
  const raw = rows[0]?.until;
  return raw ? asDate(raw) : null;
}

/** How a key's failures turn into a block (see `waitAfter` in ../throttle.ts). */
export interface BlockRule {
  freeFailures: number;
  firstWaitMs: number;
  maxWaitMs: number;
}

/**
 * Reserves one failure for the key in one statement, unless the key is blocked at `now`:
 * the count goes up (starting again from one when the last failure is older than
 * `forgetBefore`) and, once it reaches the free failures, the block is set in the same
 * statement. The row lock of the upsert orders concurrent attempts, so the one after the
 * last free failure already sees the block. Answers the new count, or null when blocked.
 */
export async function reserveFailure(
  exec: Executor,
  key: string,
  now: Date,
  forgetBefore: Date,
  rule: BlockRule,
): Promise<number | null> {
  const count = sql`(CASE WHEN f.window_start < ${forgetBefore} THEN 1 ELSE f.failures + 1 END)`;
  const blockAfter = (n: ReturnType<typeof sql>) => sql`CASE WHEN ${n} >= ${rule.freeFailures}
      THEN ${now}::timestamptz + LEAST(${rule.firstWaitMs}::float8
        * power(2, LEAST(${n} - ${rule.freeFailures}, 20)), ${rule.maxWaitMs}::float8)
        * interval '1 millisecond'
      ELSE NULL END`;
  const { rows } = await exec.execute<{ failures: number }>(sql`
    INSERT INTO sign_in_failures AS f (key, failures, window_start, blocked_until)
    VALUES (${key}, 1, ${now}, ${blockAfter(sql`1`)})
    ON CONFLICT (key) DO UPDATE SET
      failures = ${count},
      window_start = ${now},
      blocked_until = ${blockAfter(count)}
    WHERE f.blocked_until IS NULL OR f.blocked_until <= ${now}
    RETURNING failures`);
  return rows[0]?.failures ?? null;
}

/**
 * Gives back one reserved failure (the attempt succeeded), lifting the block when the count
 * falls below the free failures.
 */
export async function giveBack(exec: Executor, key: string, freeFailures: number): Promise<void> {
  await exec.execute(sql`UPDATE sign_in_failures SET
      failures = GREATEST(failures - 1, 0),
      blocked_until = CASE WHEN failures - 1 >= ${freeFailures} THEN blocked_until ELSE NULL END
    WHERE key = ${key}`);
}

export async function forget(exec: Executor, key: string): Promise<void> {
  await exec.execute(sql`DELETE FROM sign_in_failures WHERE key = ${key}`);
}
