import { sql, type SQL } from 'drizzle-orm';
import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { notFound, unauthenticated } from '../../lib/errors.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  pageOf,
  parseList,
  type ListQuery,
  type ListSpec,
  type Page,
} from '../../lib/list.js';
import type { AuthContext } from '../../lib/permissions.js';
import { asDate } from '../../db/values.js';
import {
  hashToken,
  newRefreshToken,
  type SessionService,
  type TokenResponse,
} from './session-service.js';

export type SessionRow = {
  id: string;
  organization_id: string | null;
  device: string;
  ip: string | null;
  last_used_at: Date | string;
  created_at: Date | string;
};

export interface SessionView {
  id: string;
  organization_id: string | null;
  device: string;
  ip: string | null;
  current: boolean;
  last_used_at: string;
  when_created: string;
}

const LIST: ListSpec = {
  sortable: {
    when_created: { column: sql`created_at`, type: 'timestamp' },
    last_used_at: { column: sql`last_used_at`, type: 'timestamp' },
  },
  defaultSort: 'when_created',
  idColumn: sql`id`,
};

type RotateOutcome =
  | { kind: 'ok'; response: TokenResponse }
  | { kind: 'reused'; sessionId: string }
  | { kind: 'refused' };

/**
 * The life of a session after sign-in: rotating refresh tokens, signing out, listing and
 * ending sessions. Ending goes through this instance's SessionService so its cache forgets
 * the session at once (other instances within its 4 s cache).
 */
export class SessionManager {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
  ) {}

  /**
   * Exchanges a refresh token for a new pair. A token that was already rotated away is a
   * sign it was stolen: the session it belonged to ends, for the thief and the owner alike.
   */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    const presented = hashToken(refreshToken);
    const outcome = await this.db.transaction(async (tx): Promise<RotateOutcome> => {
      const { rows } = await tx.execute<{
        id: string;
        wallet_id: string;
        organization_id: string | null;
        ended_at: Date | string | null;
      }>(sql`SELECT id, wallet_id, organization_id, ended_at FROM sessions
        WHERE refresh_token_hash = ${presented} FOR UPDATE`);
      const session = rows[0];
      if (!session) {
        const spent = await tx.execute<{ session_id: string }>(
          sql`SELECT session_id FROM spent_refresh_tokens WHERE token_hash = ${presented}`,
        );
        const sessionId = spent.rows[0]?.session_id;
        return sessionId ? { kind: 'reused', sessionId } : { kind: 'refused' };
      }
      if (session.ended_at) return { kind: 'refused' };
      const now = this.clock.now();
      const next = newRefreshToken();
      await tx.execute(sql`INSERT INTO spent_refresh_tokens (token_hash, session_id, spent_at)
        VALUES (${presented}, ${session.id}, ${now})`);
      await tx.execute(sql`UPDATE sessions SET refresh_token_hash = ${hashToken(next)},
        last_used_at = ${now} WHERE id = ${session.id}`);
      const response = await this.sessions.tokenResponse(
        tx,
        session.id,
        session.wallet_id,
        session.organization_id,
        next,
      );
      return { kind: 'ok', response };
    });
    if (outcome.kind === 'ok') return outcome.response;
    if (outcome.kind === 'reused') {
      await this.endWhere(sql`id = ${outcome.sessionId}`, 'refresh_token_reuse');
    }
    throw unauthenticated('invalid or expired refresh token');
  }

  /** `POST /auth/logout`: ends the caller's own session. */
  async logout(auth: AuthContext): Promise<void> {
    if (auth.sessionId) await this.endWhere(sql`id = ${auth.sessionId}`, 'logout');
  }

  /** Ends one of the caller's sessions; another wallet's session is "not found". */
  async end(auth: AuthContext, sessionId: string): Promise<void> {
    const ended = await this.endWhere(
      sql`id = ${sessionId} AND wallet_id = ${auth.walletId}`,
      'ended_by_owner',
    );
    if (ended.length === 0) throw notFound('session');
  }

  /** Ends every live session of a wallet but `keepSessionId` (after a password reset). */
  async endAllOf(exec: Executor, walletId: string, reason: string, keepSessionId?: string) {
    const keep = keepSessionId ? sql` AND id <> ${keepSessionId}` : sql``;
    return this.endWhere(sql`wallet_id = ${walletId}${keep}`, reason, exec);
  }

  /**
   * Ends the live sessions a credential opened (it is being removed), but `keepSessionId`,
   * the one removing it. Answers their ids, for `forget` once the transaction committed.
   */
  async endOpenedWith(
    exec: Executor,
    walletId: string,
    credentialId: string,
    keepSessionId: string | null,
  ): Promise<string[]> {
    const keep = keepSessionId ? sql` AND id <> ${keepSessionId}` : sql``;
    const rows = await this.endWhere(
      sql`wallet_id = ${walletId} AND credential_id = ${credentialId}${keep}`,
      'credential_removed',
      exec,
    );
    return rows.map((r) => r.id);
  }

  /**
   * Forgets sessions ended inside a transaction, after it committed: a check that ran
   * between the end and the commit read them live and may have cached that.
   */
  forget(sessionIds: readonly string[]): void {
    for (const id of sessionIds) this.sessions.invalidate(id);
  }

  async list(auth: AuthContext, q: ListQuery): Promise<Page<SessionView>> {
    const p = parseList(q, LIST);
    const conds: (SQL | undefined)[] = [
      sql`wallet_id = ${auth.walletId}`,
      sql`ended_at IS NULL`,
      keysetCondition(p),
      ...dateFilters(q, sql`created_at`),
    ];
    if (q.id) conds.push(sql`id = ${q.id}`);
    const { rows } = await this.db.execute<SessionRow>(sql`SELECT id, organization_id, device,
        ip, last_used_at, created_at FROM sessions WHERE ${and(conds)} ${orderBy(p)}
      LIMIT ${p.limit + 1}`);
    const page = pageOf(
      rows,
      p,
      (r) => asDate(p.sortBy === 'last_used_at' ? r.last_used_at : r.created_at),
      (r) => r.id,
    );
    return {
      ...page,
      items: page.items.map((r) => ({
        id: r.id,
        organization_id: r.organization_id,
        device: r.device,
        ip: r.ip,
        current: r.id === auth.sessionId,
        last_used_at: asDate(r.last_used_at).toISOString(),
        when_created: asDate(r.created_at).toISOString(),
      })),
    };
  }

  private async endWhere(where: SQL, reason: string, exec: Executor = this.db) {
    const { rows } = await exec.execute<{ id: string }>(sql`UPDATE sessions
      SET ended_at = ${this.clock.now()}, ended_reason = ${reason}
      WHERE ${where} AND ended_at IS NULL RETURNING id`);
    for (const r of rows) this.sessions.invalidate(r.id);
    return rows;
  }
}
