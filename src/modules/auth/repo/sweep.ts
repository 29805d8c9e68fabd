import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';

// What the auth sweeper deletes (src/modules/auth/sweeper.ts): rows nothing reads any more,
// at most `limit` of each table per call. Each answers how many it deleted.

/** Deletes at most `limit` rows of `table` where `due` holds; answers how many. */
async function deleteDue(exec: Executor, table: string, due: SQL, limit: number): Promise<number> {
  const t = sql.raw(table);
  const { rows } = await exec.execute<{ n: number }>(sql`
    WITH gone AS (DELETE FROM ${t} WHERE ctid IN (SELECT ctid FROM ${t} WHERE ${due} LIMIT ${limit})
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`);
  return rows[0]?.n ?? 0;
}

/** Failure counts whose window has passed and that block nobody now (they count as none). */
export const deleteStaleFailures = (exec: Executor, now: Date, forgetBefore: Date, limit: number) =>
  deleteDue(
    exec,
    'sign_in_failures',
    sql`window_start < ${forgetBefore} AND (blocked_until IS NULL OR blocked_until <= ${now})`,
    limit,
  );

/**
 * Refresh tokens rotated away before `before` (the sessions' absolute lifetime ago): no
 * session they belonged to can still be refreshed, so their reuse means nothing.
 */
export const deleteOldSpentTokens = (exec: Executor, before: Date, limit: number) =>
  deleteDue(exec, 'spent_refresh_tokens', sql`spent_at < ${before}`, limit);

/** Codes that expired before `before` (used or not): they can never be used again. */
export const deleteOldCodes = (exec: Executor, before: Date, limit: number) =>
  deleteDue(exec, 'codes', sql`expires_at < ${before}`, limit);

/**
 * Sessions that ended before `endedBefore`, and sessions never ended but unused since
 * `unusedBefore` (past their idle timeout and maximum age by then: over, though nothing marked
 * them), with their spent refresh tokens. Rows a refresh holds are skipped, not waited for.
 * Deleting a session nothing ended announces it (migration 0041), as ending one would.
 */
export async function deleteOldSessions(
  exec: Executor,
  endedBefore: Date,
  unusedBefore: Date,
  limit: number,
): Promise<number> {
  let total = 0;
  for (const due of [
    sql`ended_at < ${endedBefore}`,
    sql`ended_at IS NULL AND last_used_at < ${unusedBefore}`,
  ]) {
    const { rows } = await exec.execute<{ n: number }>(sql`
      WITH doomed AS (SELECT id FROM sessions WHERE ${due} LIMIT ${limit} FOR UPDATE SKIP LOCKED),
        tokens AS (DELETE FROM spent_refresh_tokens
          WHERE session_id IN (SELECT id FROM doomed)),
        gone AS (DELETE FROM sessions WHERE id IN (SELECT id FROM doomed) RETURNING 1)
      SELECT count(*)::int AS n FROM gone`);
    total = Math.max(total, rows[0]?.n ?? 0);
  }
  return total;
}
