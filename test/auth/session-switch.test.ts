import { describe, expect, it } from 'vitest';
import { createMember, joinOrganization } from '../helpers/fixtures.js';
import { bearer, sessionEnded, sessionIdOf, type Tokens } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';

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
