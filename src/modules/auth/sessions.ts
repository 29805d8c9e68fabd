import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { notFound, unauthenticated } from '../../lib/errors.js';
import { pageOf, parseList, type ListQuery, type Page } from '../../lib/list.js';
import type { AuthContext } from '../../lib/permissions.js';
import { asDate } from '../../db/values.js';
import type { CredentialSessions } from '../wallets/index.js';
import { requireRecentSignIn, requireRecentSignInOrKey } from './recent-sign-in.js';
import * as repo from './repo/sessions.js';
import {
  hashToken,
  newRefreshToken,
  sessionExpiry,
  type SessionService,
  type TokenResponse,
} from './session-service.js';

export interface SessionView {
  id: string;
  organization_id: string | null;
  device: string;
  ip: string | null;
  current: boolean;
  last_used_at: string;
  when_created: string;
}

type RotateOutcome =
  | { kind: 'ok'; sessionId: string; response: TokenResponse }
  | { kind: 'end'; sessionId: string; reason: EndReason }
  | { kind: 'refused' };

/** Why a refresh ends its session instead of rotating it. */
type EndReason = 'refresh_token_reuse' | 'expired' | 'membership_ended' | 'wallet_gone';

/**
 * The life of a session after sign-in: rotating refresh tokens, signing out, listing and
 * ending sessions. Ending goes through this instance's SessionService so its cache forgets
 * the session at once; other instances forget it when the revocation notice the end sends
 * arrives (src/revocations.ts).
 */
export class SessionManager implements CredentialSessions {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
  ) {}

  /**
   * Exchanges a refresh token for a new pair. A token that was already rotated away is a
   * sign it was stolen: the session it belonged to ends, for the thief and the owner alike.
   * A session past its lifetimes (`SessionLifetimes`), or whose wallet is no longer an
   * active member of the organization it acts in, ends instead: 401, never a new pair.
   */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    const presented = hashToken(refreshToken);
    const outcome = await this.db.transaction(async (tx): Promise<RotateOutcome> => {
      const session = await repo.findByRefreshToken(tx, presented);
      if (!session) {
        const sessionId = await repo.sessionOfSpentToken(tx, presented);
        return sessionId
          ? { kind: 'end', sessionId, reason: 'refresh_token_reuse' }
          : { kind: 'refused' };
      }
      if (session.ended_at) return { kind: 'refused' };
      const now = this.clock.now();
      const endsAt = sessionExpiry(
        this.sessions.lifetimes,
        asDate(session.created_at),
        asDate(session.last_used_at),
      );
      if (now.getTime() >= endsAt) return { kind: 'end', sessionId: session.id, reason: 'expired' };
      const facts = await repo.tokenFacts(tx, session.wallet_id, session.organization_id);
      if (!facts) return { kind: 'end', sessionId: session.id, reason: 'wallet_gone' };
      if (session.organization_id !== null && facts.role === null) {
        return { kind: 'end', sessionId: session.id, reason: 'membership_ended' };
      }
      const next = newRefreshToken();
      await repo.rotateRefreshToken(tx, session.id, presented, hashToken(next), now);
      const response = await this.sessions.tokenResponse(
        tx,
        session.id,
        session.wallet_id,
        session.organization_id,
        next,
      );
      return { kind: 'ok', sessionId: session.id, response };
    });
    if (outcome.kind === 'ok') {
      // Its state as cached here predates the rotation (an older idle end).
      this.sessions.invalidate(outcome.sessionId);
      return outcome.response;
    }
    if (outcome.kind === 'end') {
      // A reused refresh token ends the session and every one continued from it by an
      // organization switch (its family): a thief who switched must not keep a fork.
      const which =
        outcome.reason === 'refresh_token_reuse'
          ? { familyOf: outcome.sessionId }
          : { id: outcome.sessionId };
      await this.endWhere(which, outcome.reason);
    }
    throw unauthenticated('invalid or expired refresh token');
  }

  /** `POST /auth/logout`: ends the caller's own session. */
  async logout(auth: AuthContext): Promise<void> {
    if (auth.sessionId) await this.endWhere({ id: auth.sessionId }, 'logout');
  }

  /** Ends one of the caller's sessions; another wallet's session is "not found". */
  async end(auth: AuthContext, sessionId: string): Promise<void> {
    const ended = await this.endWhere({ id: sessionId, walletId: auth.walletId }, 'ended_by_owner');
    if (ended.length === 0) throw notFound('session');
  }

  /** Ends every live session of a wallet but `keepSessionId` (after a password reset). */
  async endAllOf(exec: Executor, walletId: string, reason: string, keepSessionId?: string) {
    return this.endWhere({ walletId, exceptId: keepSessionId }, reason, exec);
  }

  requireRecentSignIn(exec: Executor, auth: AuthContext, action?: string): Promise<void> {
    return requireRecentSignIn(exec, this.clock, auth, action);
  }

  /** `requireRecentSignIn`, but an API key passes (recent-sign-in.ts says which changes). */
  requireRecentSignInOrKey(exec: Executor, auth: AuthContext, action: string): Promise<void> {
    return requireRecentSignInOrKey(exec, this.clock, auth, action);
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
    const rows = await this.endWhere(
      { walletId, credentialId, exceptId: keepSessionId },
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
    const p = parseList(q, repo.SESSION_LIST);
    const now = this.clock.now().getTime();
    const { maxAgeMs, idleTimeoutMs } = this.sessions.lifetimes;
    const rows = await repo.listLive(
      this.db,
      auth.walletId,
      {
        id: q.id,
        dates: q,
        openedAfter: new Date(now - maxAgeMs),
        usedAfter: new Date(now - idleTimeoutMs),
      },
      p,
    );
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

  private async endWhere(which: repo.SessionFilter, reason: string, exec: Executor = this.db) {
    const rows = await repo.endSessions(exec, which, reason, this.clock.now());
    for (const r of rows) this.sessions.invalidate(r.id);
    return rows;
  }
}
