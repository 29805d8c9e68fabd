import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';

// What the auth sweeper deletes (src/modules/auth/sweeper.ts): rows nothing reads any more,
// at most `limit` of each table per call. Each answers how many it deleted.

const count = async (exec: Executor, statement: ReturnType<typeof sql>): Promise<number> =>
  (await exec.execute<{ n: number }>(statement)).rows[0]?.n ?? 0;

/** Failure counts whose window has passed and that block nobody now (they count as none). */
export function deleteStaleFailures(
  exec: Executor,
  now: Date,
  forgetBefore: Date,
  limit: number,
): Promise<number> {
  return count(
    exec,
    sql`WITH gone AS (DELETE FROM sign_in_failures WHERE ctid IN (
      SELECT ctid FROM sign_in_failures WHERE window_start < ${forgetBefore}
        AND (blocked_until IS NULL OR blocked_until <= ${now}) LIMIT ${limit}) RETURNING 1)
    SELECT count(*)::int AS n FROM gone`,
  );
}

/**
 * Refresh tokens rotated away before `before` (the sessions' absolute lifetime ago): no
 * session they belonged to can still be refreshed, so their reuse means nothing.
 */
export function deleteOldSpentTokens(exec: Executor, before: Date, limit: number): Promise<number> {
  return count(
    exec,
    sql`WITH gone AS (DELETE FROM spent_refresh_tokens WHERE ctid IN (
      SELECT ctid FROM spent_refresh_tokens WHERE spent_at < ${before} LIMIT ${limit}) RETURNING 1)
    SELECT count(*)::int AS n FROM gone`,
  );
}

/** Codes that expired before `before` (used or not): they can never be used again. */
export function deleteOldCodes(exec: Executor, before: Date, limit: number): Promise<number> {
  return count(
    exec,
    sql`WITH gone AS (DELETE FROM codes WHERE ctid IN (
      SELECT ctid FROM codes WHERE expires_at < ${before} LIMIT ${limit}) RETURNING 1)
    SELECT count(*)::int AS n FROM gone`,
  );
}
