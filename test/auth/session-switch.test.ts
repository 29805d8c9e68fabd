import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createMember, joinOrganization } from '../helpers/fixtures.js';
import { bearer, sessionEnded, sessionIdOf, type Tokens } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import { connect, started } from '../helpers/locks.js';

/**
 * An organization switch replaces the session it continues, and a reused refresh token ends
 * every session of its family (docs/auth.md): a switch must not fork a session that logout or
 * reuse detection would then end only half of.
 */
const svc = useTestService();

/** A member of two organizations, signed in to the first. */
async function twoOrganizations() {
  const m = await createMember(svc);
  const other = await createMember(svc);
  await joinOrganization(svc, m, other.orgId);
  return {
    m,
    other: other.orgId,
    tokens: { access_token: m.accessToken, refresh_token: m.refreshToken },
  };
}

const refresh = (token: string) =>
  svc.app.inject({ method: 'POST', url: '/auth/refresh-token', payload: { refresh_token: token } });
const switchTo = async (access: string, orgId: string) => {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/organizations/switch',
    headers: bearer({ access_token: access }),
    payload: { organization_id: orgId },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Tokens>();
};
const me = (access: string) =>
  svc.app.inject({ method: 'GET', url: '/wallets/me', headers: bearer({ access_token: access }) });

describe('an organization switch', () => {
  it('replaces the session it continues: the tokens from before stop working', async () => {
    const { other, tokens } = await twoOrganizations();
    const after = await switchTo(tokens.access_token, other);
    expect(await sessionEnded(svc, sessionIdOf(tokens.access_token))).toBe(true);
    expect((await me(tokens.access_token)).statusCode).toBe(401);
    expect((await refresh(tokens.refresh_token)).statusCode).toBe(401);
    expect((await me(after.access_token)).statusCode).toBe(200);
    // Logging out of the new session leaves nothing of the chain live.
    const out = await svc.app.inject({
      method: 'POST',
      url: '/auth/logout',
      headers: bearer(after),
    });
    expect(out.statusCode).toBe(200);
    expect((await refresh(after.refresh_token)).statusCode).toBe(401);
    expect((await refresh(tokens.refresh_token)).statusCode).toBe(401);
  });

  it("does not let a thief's switch survive the owner's reuse of the spent refresh token", async () => {
    const { other, tokens } = await twoOrganizations();
    // The thief refreshes with the stolen token, then switches with what it got.
    const stolen = (await refresh(tokens.refresh_token)).json<Tokens>();
    const fork = await switchTo(stolen.access_token, other);
    // The owner sends its (now spent) refresh token: the whole family ends, the fork too.
    expect((await refresh(tokens.refresh_token)).statusCode).toBe(401);
    expect(await sessionEnded(svc, sessionIdOf(fork.access_token))).toBe(true);
    expect((await refresh(fork.refresh_token)).statusCode).toBe(401);
    expect((await me(fork.access_token)).statusCode).toBe(401);
  });

  it("a reused token ends only its own family, not the wallet's other sessions", async () => {
    const { m, other, tokens } = await twoOrganizations();
    // A second, separate sign-in of the same wallet.
    const separate = await svc.container.sessions.issue(svc.container.db, {
      walletId: m.walletId,
      orgId: m.orgId,
    });
    const a = await switchTo(tokens.access_token, other);
    const rotated = (await refresh(a.refresh_token)).json<Tokens>();
    expect((await refresh(a.refresh_token)).statusCode).toBe(401); // reused: its family ends
    expect((await refresh(rotated.refresh_token)).statusCode).toBe(401);
    expect(await sessionEnded(svc, sessionIdOf(separate.access_token))).toBe(false);
    expect((await refresh(separate.refresh_token)).statusCode).toBe(200);
  });
});

/**
 * A switch continues a live session only (docs/auth.md, top): it ends the session it
 * continues in its own transaction and is refused, 401 code 16 as for any ended session,
 * when that session had ended already, though this instance still trusts its access token
 * (its cache lags another instance's sign-out by up to 4 s) or another switch won the race.
 * Nothing is made then: no session, no new default organization.
 */
describe('a switch of a session that has ended', () => {
  const switching = (access: string, orgId: string) =>
    svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      headers: bearer({ access_token: access }),
      payload: { organization_id: orgId },
    });
  const sessionsOf = async (walletId: string) =>
    (
      await svc.container.db.execute<{ id: string; ended_at: unknown }>(
        sql`SELECT id, ended_at FROM sessions WHERE wallet_id = ${walletId}`,
      )
    ).rows;
  const defaultOrgOf = async (walletId: string) =>
    (
      await svc.container.db.execute<{ default_org_id: string | null }>(
        sql`SELECT default_org_id FROM wallets WHERE id = ${walletId}`,
      )
    ).rows[0]!.default_org_id;

  // How the session ended on another instance, as its statement there does it.
  for (const reason of ['logout', 'ended_by_owner', 'password_reset', 'address_proven']) {
    it(`is refused while this instance still trusts the token: ended (${reason}) elsewhere`, async () => {
      const { m, other, tokens } = await twoOrganizations();
      expect((await me(tokens.access_token)).statusCode).toBe(200); // now cached here
      await svc.container.db.execute(sql`UPDATE sessions
        SET ended_at = ${svc.clock.now()}, ended_reason = ${reason} WHERE id = ${m.sessionId}`);
      const before = await sessionsOf(m.walletId);
      const res = await switching(tokens.access_token, other);
      expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([401, 16]);
      expect(await sessionsOf(m.walletId)).toEqual(before);
      expect(await defaultOrgOf(m.walletId)).toBe(m.orgId);
    });
  }

  it('two switches of one session at once: one continues it, the other is refused', async () => {
    const { m, other, tokens } = await twoOrganizations();
    // Both switches get past their checks while the test holds the session's row (the first
    // waits for it, the second for the first's lock on the wallet), then race.
    const holder = await connect(svc);
    const probe = await connect(svc);
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [m.sessionId]);
      const both = [0, 1].map(() => started(switching(tokens.access_token, other)));
      for (let i = 0; i < 1_000; i++) {
        const { rows } = await probe.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND query ~ '^UPDATE (sessions|wallets)'
             AND cardinality(pg_blocking_pids(pid)) > 0`,
        );
        if (rows[0]!.n === 2 || both.some((p) => p.settled)) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await holder.query('COMMIT');
      const answers = await Promise.all(both);
      expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 401]);
    } finally {
      await holder.end();
      await probe.end();
    }
    const live = (await sessionsOf(m.walletId)).filter((s) => s.ended_at === null);
    expect(live).toHaveLength(1);
  });
});
