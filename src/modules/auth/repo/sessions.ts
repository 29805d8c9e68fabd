import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  type ListSpec,
  type ParsedList,
} from '../../../lib/list.js';

// Sessions belong to a wallet, not to one organization: these queries are scoped by wallet
// id (or by the session id, which only its wallet's tokens carry).

export type SessionRow = {
  id: string;
  organization_id: string | null;
  device: string;
  ip: string | null;
  last_used_at: DbTime;
  created_at: DbTime;
};

export interface NewSession {
  id: string;
  walletId: string;
  orgId: string | null;
  refreshTokenHash: string;
  device: string;
  ip: string | null;
  credentialId: string | null;
  /** The session this one continues (an organization switch): its credential is taken over. */
  continues?: string;
  now: Date;
}

/**
 * A new session. One that continues another (an organization switch) takes over its
 * credential, its sign-in time (so switching never extends a session's absolute lifetime) and
 * its family (`family_id`: the first session of the chain, which a reused refresh token ends
 * whole).
 */
export async function insertSession(exec: Executor, s: NewSession): Promise<void> {
  const credentialId = s.continues
    ? sql`(SELECT credential_id FROM sessions WHERE id = ${s.continues})`
    : sql`${s.credentialId}`;
  const createdAt = s.continues
    ? sql`COALESCE((SELECT created_at FROM sessions WHERE id = ${s.continues}), ${s.now})`
    : sql`${s.now}`;
  const familyId = s.continues
    ? sql`(SELECT coalesce(family_id, id) FROM sessions WHERE id = ${s.continues})`
    : sql`NULL`;
  await exec.execute(sql`INSERT INTO sessions (id, wallet_id, organization_id,
      refresh_token_hash, device, ip, credential_id, last_used_at, created_at, family_id)
    VALUES (${s.id}, ${s.walletId}, ${s.orgId}, ${s.refreshTokenHash},
            ${s.device}, ${s.ip}, ${credentialId},
            ${s.now}, ${createdAt}, ${familyId})`);
}

/** The wallet's address and its active role in `orgId` (null outside it), for a token. */
export async function tokenFacts(
  exec: Executor,
  walletId: string,
  orgId: string | null,
): Promise<{ address: string; role: string | null } | null> {
  const { rows } = await exec.execute<{ address: string; role: string | null }>(sql`
    SELECT w.address, m.role FROM wallets w
    LEFT JOIN members m ON m.wallet_id = w.id AND m.organization_id = ${orgId}
      AND m.status = 'active'
    WHERE w.id = ${walletId}`);
  return rows[0] ?? null;
}

export type SessionStateRow = {
  ended_at: DbTime | null;
  created_at: DbTime;
  last_used_at: DbTime;
  role: string | null;
};

/** Whether the session ended, its age, and its wallet's active role in `orgId`. */
export async function sessionState(
  exec: Executor,
  sessionId: string,
  orgId: string | null,
): Promise<SessionStateRow | null> {
  const { rows } = await exec.execute<SessionStateRow>(sql`
    SELECT s.ended_at, s.created_at, s.last_used_at, m.role FROM sessions s
    LEFT JOIN members m ON m.wallet_id = s.wallet_id AND m.organization_id = ${orgId}
      AND m.status = 'active'
    WHERE s.id = ${sessionId}`);
  return rows[0] ?? null;
}

/** When a live session was opened by a sign-in (an organization switch keeps it); null: none. */
export async function sessionSignedInAt(exec: Executor, sessionId: string): Promise<Date | null> {
  const { rows } = await exec.execute<{ created_at: DbTime }>(
    sql`SELECT created_at FROM sessions WHERE id = ${sessionId} AND ended_at IS NULL`,
  );
  return rows[0] ? asDate(rows[0].created_at) : null;
}

/** The session whose current refresh token this is, locked for its rotation. */
export async function findByRefreshToken(exec: Executor, tokenHash: string) {
  const { rows } = await exec.execute<{
    id: string;
    wallet_id: string;
    organization_id: string | null;
    ended_at: DbTime | null;
    created_at: DbTime;
    last_used_at: DbTime;
  }>(sql`SELECT id, wallet_id, organization_id, ended_at, created_at, last_used_at
    FROM sessions WHERE refresh_token_hash = ${tokenHash} FOR UPDATE`);
  return rows[0] ?? null;
}

/** The session a refresh token was rotated away from, if it ever was. */
export async function sessionOfSpentToken(exec: Executor, tokenHash: string) {
  const { rows } = await exec.execute<{ session_id: string }>(
    sql`SELECT session_id FROM spent_refresh_tokens WHERE token_hash = ${tokenHash}`,
  );
  return rows[0]?.session_id ?? null;
}

/** Replaces the session's refresh token, remembering the old one as spent. */
export async function rotateRefreshToken(
  exec: Executor,
  sessionId: string,
  spentHash: string,
  nextHash: string,
  now: Date,
): Promise<void> {
  await exec.execute(sql`INSERT INTO spent_refresh_tokens (token_hash, session_id, spent_at)
    VALUES (${spentHash}, ${sessionId}, ${now})`);
  await exec.execute(sql`UPDATE sessions SET refresh_token_hash = ${nextHash},
    last_used_at = ${now} WHERE id = ${sessionId}`);
}

/**
 * Which live sessions to end: every given field must match and `exceptId` is spared. It names
 * a session or a wallet, so no filter can reach every session.
 */
export type SessionFilter = {
  walletId?: string;
  credentialId?: string;
  exceptId?: string | null;
} & (
  | { id: string }
  | { id?: undefined; walletId: string }
  /** The session and every session continued from it or from what it continued. */
  | { id?: undefined; familyOf: string }
);

/** Ends the live sessions the filter picks; answers their ids. */
export async function endSessions(
  exec: Executor,
  f: SessionFilter,
  reason: string,
  now: Date,
): Promise<{ id: string }[]> {
  const where = and([
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    'familyOf' in f
      ? sql`coalesce(family_id, id) = (SELECT coalesce(s.family_id, s.id) FROM sessions s
          WHERE s.id = ${f.familyOf})`
      : undefined,
    f.walletId !== undefined ? sql`wallet_id = ${f.walletId}` : undefined,
    f.credentialId !== undefined ? sql`credential_id = ${f.credentialId}` : undefined,
    f.exceptId ? sql`id <> ${f.exceptId}` : undefined,
  ]);
  const { rows } = await exec.execute<{ id: string }>(sql`UPDATE sessions
    SET ended_at = ${now}, ended_reason = ${reason}
    WHERE ${where} AND ended_at IS NULL RETURNING id`);
  return rows;
}

export const SESSION_LIST: ListSpec = {
  sortable: {
    when_created: { column: sql`created_at`, type: 'timestamp' },
    last_used_at: { column: sql`last_used_at`, type: 'timestamp' },
  },
  defaultSort: 'when_created',
  idColumn: sql`id`,
};

/**
 * The wallet's live sessions, one page: not ended, opened after `openedAfter` and refreshed
 * after `usedAfter` (the session lifetimes, counted back from now).
 */
export async function listLive(
  exec: Executor,
  walletId: string,
  f: { id?: string; dates: Record<string, unknown>; openedAfter: Date; usedAfter: Date },
  p: ParsedList,
): Promise<SessionRow[]> {
  const where = and([
    sql`wallet_id = ${walletId}`,
    sql`ended_at IS NULL`,
    sql`created_at > ${f.openedAfter}`,
    sql`last_used_at > ${f.usedAfter}`,
    keysetCondition(p),
    ...dateFilters(f.dates, sql`created_at`),
    f.id ? sql`id = ${f.id}` : undefined,
  ]);
  const { rows } = await exec.execute<SessionRow>(sql`SELECT id, organization_id, device,
      ip, last_used_at, created_at FROM sessions WHERE ${where} ${orderBy(p)}
    LIMIT ${p.limit + 1}`);
  return rows;
}
