import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SESSION_LIFETIMES } from '../../src/modules/auth/session-service.js';
import { createMember, createOrganization, joinOrganization } from '../helpers/fixtures.js';
import { bearer, sessionEnded, sessionIdOf, signUp, type Tokens } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import { startTestService, type TestService } from '../helpers/service.js';

// Issue 27 item 8: a session ends by age (absolute and idle lifetimes, docs/auth.md
// "Sessions"), and a refresh token whose wallet no longer belongs to the organization it acts
// in answers 401 at once. The clock is the service's FakeClock.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const svc = useTestService();

const refresh = (s: TestService, token: string) =>
  s.app.inject({ method: 'POST', url: '/auth/refresh-token', payload: { refresh_token: token } });

async function endedReason(s: TestService, sessionId: string): Promise<string | null> {
  const { rows } = await s.container.db.execute<{ ended_reason: string | null }>(
    sql`SELECT ended_reason FROM sessions WHERE id = ${sessionId}`,
  );
  return rows[0]?.ended_reason ?? null;
}

/**
 * Refreshes every `everyMs` until `totalMs` after sign-in, then once more: answers the
 * statuses, in order. The last refresh is the one the lifetimes decide.
 */
async function refreshEvery(everyMs: number, totalMs: number) {
  const acct = await signUp(svc);
  let token = acct.refresh_token;
  const statuses: number[] = [];
  let elapsed = 0;
  while (elapsed + everyMs < totalMs) {
    svc.clock.advance(everyMs);
    elapsed += everyMs;
    const res = await refresh(svc, token);
    statuses.push(res.statusCode);
    if (res.statusCode !== 200) return { acct, statuses };
    token = res.json<Tokens>().refresh_token;
  }
  svc.clock.advance(totalMs - elapsed);
  statuses.push((await refresh(svc, token)).statusCode);
  return { acct, statuses };
}

describe('refresh tokens age out (defaults: 30 days absolute, 7 days idle)', () => {
  const { maxAgeMs, idleTimeoutMs } = DEFAULT_SESSION_LIFETIMES;

  it('has the documented defaults, and the service runs with them', () => {
    expect(maxAgeMs).toBe(30 * DAY);
    expect(idleTimeoutMs).toBe(7 * DAY);
    expect(svc.config.sessions).toEqual(DEFAULT_SESSION_LIFETIMES);
  });

  // Each row: how often the session is refreshed and when the deciding refresh comes.
  const rows = [
    {
      name: 'used just within the idle lifetime',
      every: idleTimeoutMs - MINUTE,
      at: idleTimeoutMs - MINUTE,
      ok: true,
    },
    {
      name: 'idle for exactly the idle lifetime',
      every: idleTimeoutMs,
      at: idleTimeoutMs,
      ok: false,
    },
    { name: 'idle for longer', every: idleTimeoutMs + DAY, at: idleTimeoutMs + DAY, ok: false },
    {
      name: 'kept busy until just before the absolute lifetime',
      every: DAY,
      at: maxAgeMs - MINUTE,
      ok: true,
    },
    { name: 'kept busy until the absolute lifetime', every: DAY, at: maxAgeMs, ok: false },
    {
      name: 'kept busy past the absolute lifetime',
      every: idleTimeoutMs - MINUTE,
      at: maxAgeMs + DAY,
      ok: false,
    },
  ];
  for (const row of rows) {
    it(`${row.ok ? 'rotates' : 'answers 401 and ends the session'}: ${row.name}`, async () => {
      const { acct, statuses } = await refreshEvery(row.every, row.at);
      const last = statuses.at(-1);
      expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
      expect(last).toBe(row.ok ? 200 : 401);
      const sid = sessionIdOf(acct.access_token);
      expect(await sessionEnded(svc, sid)).toBe(!row.ok);
      if (!row.ok) expect(await endedReason(svc, sid)).toBe('expired');
    });
  }

  it('does not list a session past its lifetime among the live ones', async () => {
    const old = await signUp(svc);
    svc.clock.advance(idleTimeoutMs - MINUTE);
    const fresh = await svc.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: old.email, password: old.password },
    });
    expect(fresh.statusCode).toBe(200);
    svc.clock.advance(2 * MINUTE);
    const list = await svc.app.inject({
      method: 'GET',
      url: '/wallets/sessions',
      headers: bearer(fresh.json<Tokens>()),
    });
    const ids = (list.json().sessions as { id: string }[]).map((s) => s.id);
    expect(ids).toEqual([sessionIdOf(fresh.json<Tokens>().access_token)]);
  });

  it('does not extend the absolute lifetime by switching organization', async () => {
    const m = await createMember(svc);
    const other = await createMember(svc);
    await joinOrganization(svc, m, other.orgId);
    // Busy, within the idle lifetime, until a day before the absolute one ends.
    let token = m.refreshToken;
    let access = m.accessToken;
    for (let t = 0; t < maxAgeMs - DAY; t += 4 * DAY) {
      svc.clock.advance(Math.min(4 * DAY, maxAgeMs - DAY - t));
      const fresh = await refresh(svc, token);
      expect(fresh.statusCode).toBe(200);
      ({ refresh_token: token, access_token: access } = fresh.json<Tokens>());
    }
    const switched = await svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      headers: bearer({ access_token: access }),
      payload: { organization_id: other.orgId },
    });
    expect(switched.statusCode, switched.body).toBe(200);
    svc.clock.advance(DAY);
    expect((await refresh(svc, switched.json<Tokens>().refresh_token)).statusCode).toBe(401);
  });
});

describe('configured lifetimes', () => {
  let short: TestService;
  beforeAll(async () => {
    short = await startTestService({
      env: { SESSION_MAX_AGE_SECONDS: '600', SESSION_IDLE_TIMEOUT_SECONDS: '120' },
    });
  });
  afterAll(async () => {
    await short.stop();
  });

  it('are read from the environment', () => {
    expect(short.config.sessions).toEqual({ maxAgeMs: 600_000, idleTimeoutMs: 120_000 });
  });

  it('end the refresh token and the access tokens of an idle session alike', async () => {
    const acct = await signUp(short);
    short.clock.advance(60_000);
    expect(
      (await short.app.inject({ method: 'GET', url: '/wallets/me', headers: bearer(acct) }))
        .statusCode,
    ).toBe(200);
    // The access token's own 15 minutes are not over; its session's idle lifetime is.
    short.clock.advance(60_000);
    const me = await short.app.inject({ method: 'GET', url: '/wallets/me', headers: bearer(acct) });
    expect(me.statusCode).toBe(401);
    expect(me.json()).toMatchObject({ code: 16, message: 'session has ended' });
    expect((await refresh(short, acct.refresh_token)).statusCode).toBe(401);
  });

  it('end a busy session at its absolute lifetime', async () => {
    const acct = await signUp(short);
    let token = acct.refresh_token;
    for (let t = 100_000; t < 600_000; t += 100_000) {
      short.clock.advance(100_000);
      const res = await refresh(short, token);
      expect(res.statusCode).toBe(200);
      token = res.json<Tokens>().refresh_token;
    }
    short.clock.advance(100_000);
    expect((await refresh(short, token)).statusCode).toBe(401);
  });
});

describe('a refresh token whose wallet left the organization it acts in', () => {
  const ways = {
    'the member is removed': async (
      owner: { headers: Record<string, string>; orgId: string },
      memberId: string,
    ) =>
      svc.app.inject({
        method: 'DELETE',
        url: `/organizations/${owner.orgId}/members/${memberId}`,
        headers: owner.headers,
      }),
    'the organization is deleted': async (
      owner: { headers: Record<string, string>; orgId: string },
      memberId: string,
    ) => {
      const removed = await svc.app.inject({
        method: 'DELETE',
        url: `/organizations/${owner.orgId}/members/${memberId}`,
        headers: owner.headers,
      });
      expect(removed.statusCode).toBe(200);
      return svc.app.inject({
        method: 'DELETE',
        url: `/organizations/${owner.orgId}`,
        headers: owner.headers,
      });
    },
  };
  for (const [way, leave] of Object.entries(ways)) {
    it(`answers 401 at once and ends its session: ${way}`, async () => {
      const owner = await createMember(svc);
      const member = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
      const target = way === 'the organization is deleted' ? owner : member;
      const res = await leave(owner, member.memberId);
      expect(res.statusCode, res.body).toBe(200);
      const again = await refresh(svc, target.refreshToken);
      expect(again.statusCode).toBe(401);
      expect(again.json()).toMatchObject({ code: 16 });
      expect(await endedReason(svc, target.sessionId)).toBe('membership_ended');
      expect(
        (await svc.app.inject({ method: 'GET', url: '/wallets/me', headers: target.headers }))
          .statusCode,
      ).toBe(401);
    });
  }

  it('keeps refreshing a session outside any organization, and one of a member that stays', async () => {
    const acct = await signUp(svc);
    expect(acct.wallet.organization_id).toBeNull();
    expect((await refresh(svc, acct.refresh_token)).statusCode).toBe(200);
    const member = await createMember(svc, {
      orgId: await createOrganization(svc),
      role: 'viewer',
    });
    expect((await refresh(svc, member.refreshToken)).statusCode).toBe(200);
  });
});
