import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate, type DbTime } from '../../db/values.js';

/** Where a key lives: the caller's scope, the route (method and path pattern) and the key. */
export interface KeyId {
  scope: string;
  route: string;
  key: string;
}

export type KeyRow = {
  request_hash: string;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  locked_at: Date;
};

/**
 * Takes the key for a first request: a new key, an expired one, or one whose first request
 * has run longer than `staleBefore` without an answer (taken over by the same request only).
 * True when taken.
 */
export async function claimKey(
  exec: Executor,
  id: KeyId,
  requestHash: string,
  now: Date,
  expiresAt: Date,
  staleBefore: Date,
): Promise<boolean> {
  const { rows } = await exec.execute<{ taken: boolean }>(sql`
    INSERT INTO idempotency_keys
      (scope, route, key, request_hash, status, headers, body, locked_at, created_at, expires_at)
    VALUES (${id.scope}, ${id.route}, ${id.key}, ${requestHash}, NULL, NULL, NULL, ${now}, ${now},
      ${expiresAt})
    ON CONFLICT (scope, route, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
      status = NULL, headers = NULL, body = NULL, locked_at = EXCLUDED.locked_at,
      created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE idempotency_keys.expires_at <= ${now}
      OR (idempotency_keys.status IS NULL AND idempotency_keys.locked_at < ${staleBefore}
        AND idempotency_keys.request_hash = EXCLUDED.request_hash)
    RETURNING true AS taken`);
  return rows.length > 0;
}

/** The key as stored, unless it has expired. */
export async function findKey(exec: Executor, id: KeyId, now: Date): Promise<KeyRow | null> {
  const { rows } = await exec.execute<Omit<KeyRow, 'locked_at'> & { locked_at: DbTime }>(sql`
    SELECT request_hash, status, headers, body, locked_at FROM idempotency_keys
    WHERE scope = ${id.scope} AND route = ${id.route} AND key = ${id.key}
      AND expires_at > ${now}`);
  const r = rows[0];
  if (!r) return null;
  return { ...r, locked_at: asDate(r.locked_at) };
}

/** Records the first request's answer (only while it still holds the key). */
export async function completeKey(
  exec: Executor,
  id: KeyId,
  requestHash: string,
  answer: { status: number; headers: Record<string, string>; body: string },
): Promise<void> {
  await exec.execute(sql`
    UPDATE idempotency_keys SET status = ${answer.status},
      headers = ${JSON.stringify(answer.headers)}::jsonb, body = ${answer.body}
    WHERE scope = ${id.scope} AND route = ${id.route} AND key = ${id.key}
      AND request_hash = ${requestHash} AND status IS NULL`);
}

/** Marks the first request as still running (while it still holds the key, unanswered). */
export async function touchKey(
  exec: Executor,
  id: KeyId,
  requestHash: string,
  now: Date,
): Promise<void> {
  await exec.execute(sql`
    UPDATE idempotency_keys SET locked_at = ${now}
    WHERE scope = ${id.scope} AND route = ${id.route} AND key = ${id.key}
      AND request_hash = ${requestHash} AND status IS NULL`);
}

/** Gives a key back: the first request's answer is not kept, so a retry runs again. */
export async function releaseKey(exec: Executor, id: KeyId, requestHash: string): Promise<void> {
  await exec.execute(sql`
    DELETE FROM idempotency_keys
    WHERE scope = ${id.scope} AND route = ${id.route} AND key = ${id.key}
      AND request_hash = ${requestHash} AND status IS NULL`);
}

/** Deletes up to `limit` expired keys; answers how many. */
export async function deleteExpired(exec: Executor, now: Date, limit: number): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`
    WITH gone AS (
      DELETE FROM idempotency_keys WHERE ctid IN (
        SELECT ctid FROM idempotency_keys WHERE expires_at <= ${now} LIMIT ${limit})
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`);
  return rows[0]?.n ?? 0;
}
