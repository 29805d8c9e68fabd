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

/**
 * Counts one failure for the key, starting again from one when its last failure is older
 * than `forgetBefore`; answers the count.
 */
export async function countFailure(
  exec: Executor,
  key: string,
  now: Date,
  forgetBefore: Date,
): Promise<number> {
  const { rows } = await exec.execute<{ failures: number }>(sql`
    INSERT INTO sign_in_failures AS f (key, failures, window_start)
    VALUES (${key}, 1, ${now})
    ON CONFLICT (key) DO UPDATE SET
      failures = CASE WHEN f.window_start < ${forgetBefore} THEN 1 ELSE f.failures + 1 END,
      window_start = ${now}
    RETURNING failures`);
  return rows[0]?.failures ?? 1;
}

export async function blockUntil(exec: Executor, key: string, until: Date): Promise<void> {
  await exec.execute(sql`UPDATE sign_in_failures
    SET blocked_until = ${until} WHERE key = ${key}`);
}

export async function forget(exec: Executor, key: string): Promise<void> {
  await exec.execute(sql`DELETE FROM sign_in_failures WHERE key = ${key}`);
}
