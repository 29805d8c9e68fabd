import { randomBytes } from 'node:crypto';
import type { Db, Executor } from '../../db/pool.js';
import type { ClientContext } from '../../lib/client.js';
import type { Clock } from '../../lib/clock.js';
import { unauthenticated } from '../../lib/errors.js';
import { hashToken } from '../../lib/hash.js';
import { newId } from '../../lib/ids.js';
import { isRole, permissionsOfRole, type Role, type VerifyResult } from '../../lib/permissions.js';
import { CACHE_SPREAD, TtlCache } from '../../lib/ttl-cache.js';
import { asDate } from '../../db/values.js';
import * as repo from './repo/sessions.js';
import { ACCESS_TOKEN_TTL_SECONDS, type TokenService } from './token-service.js';

import type { TokenResponse } from '../../lib/tokens.js';

export type { TokenResponse };

export interface SessionInput extends ClientContext {
  walletId: string;
  orgId: string | null;
  /** The session this one continues (an organization switch): it was opened by the same. */
  continues?: string;
}

/**
 * How long a verified session state is trusted before it is read again (≤ 5 s). An end
 * anywhere drops it sooner: here at once, elsewhere through its notice (src/revocations.ts).
 */
const SESSION_CACHE_MS = 4_000;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How long a session lives (docs/auth.md "Sessions"): `maxAgeMs` after its sign-in however
 * often it is refreshed, and `idleTimeoutMs` after its refresh token was last used.
 */
export interface SessionLifetimes {
  maxAgeMs: number;
  idleTimeoutMs: number;
}

export const DEFAULT_SESSION_LIFETIMES: SessionLifetimes = {
  maxAgeMs: 30 * DAY_MS,
  idleTimeoutMs: 7 * DAY_MS,
};

/** When a session opened at `createdAt` and last refreshed at `lastUsedAt` ends by age. */
export function sessionExpiry(
  lifetimes: SessionLifetimes,
  createdAt: Date,
  lastUsedAt: Date,
): number {
  return Math.min(
    createdAt.getTime() + lifetimes.maxAgeMs,
    lastUsedAt.getTime() + lifetimes.idleTimeoutMs,
  );
}

export { hashToken };

export function newRefreshToken(): string {
  return `onsr_${randomBytes(32).toString('base64url')}`;
}

interface SessionState {
  orgId: string | null;
  ended: boolean;
  /** When the session ends by age (`sessionExpiry`), unless refreshed before its idle end. */
  expiresAtMs: number;
  role: Role | null;
}

/**
 * Sessions and the bearer side of authentication. A session is what a sign-in creates;
 * its refresh token is stored hashed; an ended session refuses its access tokens at once on
 * the instance that ended it, and on the others as soon as the revocation notice arrives
 * (src/revocations.ts; within SESSION_CACHE_MS at worst), and so does one past its
 * lifetimes (`SessionLifetimes`).
 */
export class SessionService {
  private readonly cache = new TtlCache<string, SessionState>(
    SESSION_CACHE_MS,
    50_000,
    CACHE_SPREAD,
  );
  /**
   * Moves at each invalidation: a read that began before it may have seen the session as it
   * was before the change, so what it read answers its own request but is not remembered.
   */
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly tokens: TokenService,
    readonly lifetimes: SessionLifetimes = DEFAULT_SESSION_LIFETIMES,
  ) {}

  /**
   * Opens a session and answers with a fresh token pair in `orgId`'s context. One that
   * continues another (an organization switch) ends it first, in `exec`'s transaction, and
   * is refused (401 code 16) when it had ended already: a token this instance still trusts
   * (the cache lags another instance's sign-out until its notice arrives), or a second switch
   * at once, continues nothing.
   */
  async issue(exec: Executor, input: SessionInput): Promise<TokenResponse> {
    const sessionId = newId('session');
    const refreshToken = newRefreshToken();
    const now = this.clock.now();
    if (input.continues !== undefined) {
      // A switch replaces the session it continues: the old tokens stop working (else a
      // switch would fork a session that logout and reuse detection end only half of).
      const ended = await repo.endSessions(
        exec,
        { id: input.continues, walletId: input.walletId },
        'switched',
        now,
      );
      this.invalidate(input.continues);
      if (ended.length === 0) throw unauthenticated('session has ended');
    }
    await repo.insertSession(exec, {
      id: sessionId,
      walletId: input.walletId,
      orgId: input.orgId,
      refreshTokenHash: hashToken(refreshToken),
      device: (input.device ?? '').slice(0, 256),
      ip: input.ip ?? null,
      credentialId: input.credentialId ?? null,
      continues: input.continues,
      now,
    });
    return this.tokenResponse(exec, sessionId, input.walletId, input.orgId, refreshToken);
  }

  /** The token response for an existing session (after a rotation or a switch). */
  async tokenResponse(
    exec: Executor,
    sessionId: string,
    walletId: string,
    orgId: string | null,
    refreshToken: string,
  ): Promise<TokenResponse> {
    const row = await repo.tokenFacts(exec, walletId, orgId);
    if (!row) throw new Error(`wallet ${walletId} vanished while issuing tokens`);
    const roles = row.role && isRole(row.role) ? [row.role] : [];
    const access = await this.tokens.signAccessToken({
      sub: walletId,
      org: orgId,
      sid: sessionId,
      roles,
    });
    return {
      access_token: access,
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      wallet: { id: walletId, address: row.address, organization_id: orgId },
    };
  }

  /** Forget what this instance knows of a session (after ending it, or a role change). */
  invalidate(sessionId: string): void {
    this.generation++;
    this.cache.delete(sessionId);
  }

  /** Forget every cached session state, e.g. after a role change that touches many. */
  invalidateAll(): void {
    this.generation++;
    this.cache.clear();
  }

  private async state(sessionId: string, orgId: string | null): Promise<SessionState> {
    const hit = this.cache.get(sessionId);
    if (hit && hit.orgId === orgId) return hit;
    const generation = this.generation;
    const row = await repo.sessionState(this.db, sessionId, orgId);
    const state: SessionState = {
      orgId,
      ended: !row || row.ended_at !== null,
      expiresAtMs: row
        ? sessionExpiry(this.lifetimes, asDate(row.created_at), asDate(row.last_used_at))
        : 0,
      role: row?.role && isRole(row.role) ? row.role : null,
    };
    if (generation === this.generation) this.cache.set(sessionId, state);
    return state;
  }

  /** The bearer verifier (src/http/auth.ts): token signature, expiry, live session, role. */
  async verifyBearer(token: string): Promise<VerifyResult> {
    const check = await this.tokens.verifyAccessToken(token);
    if (!check.ok) return check;
    const { claims } = check;
    const state = await this.state(claims.sid, claims.org);
    if (state.ended || this.clock.now().getTime() >= state.expiresAtMs) {
      return { ok: false, reason: 'session has ended' };
    }
    if (claims.org && !state.role) {
      return { ok: false, reason: 'no longer a member of this organization' };
    }
    return {
      ok: true,
      auth: {
        kind: 'user',
        walletId: claims.sub,
        orgId: claims.org,
        role: state.role,
        permissions: state.role ? permissionsOfRole(state.role) : new Set(),
        sessionId: claims.sid,
        apiKeyId: null,
      },
    };
  }
}
