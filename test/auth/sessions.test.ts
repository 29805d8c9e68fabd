import { createHmac, generateKeyPairSync } from 'node:crypto';
import { SignJWT, importJWK, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import {
  bearer,
  expectNoSecrets,
  sessionEnded,
  sessionIdOf,
  signUp,
  type Tokens,
} from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

const { post, get } = svc;

describe('POST /auth/refresh-token', () => {
  it('rotates: a new pair, and the old refresh token is spent', async () => {
    const acct = await signUp(svc);
    const res = await post('/auth/refresh-token', { refresh_token: acct.refresh_token });
    expect(res.statusCode).toBe(200);
    const next = res.json<Tokens>();
    expect(next.refresh_token).not.toBe(acct.refresh_token);
    expect(next.wallet.id).toBe(acct.wallet.id);
    expect(sessionIdOf(next.access_token)).toBe(sessionIdOf(acct.access_token));
    expectNoSecrets(res.body, [acct.refresh_token]);
    const me = await get('/wallets/me', bearer(next));
    expect(me.statusCode).toBe(200);
  });

  it('ends the whole session when a spent refresh token is presented again', async () => {
    const acct = await signUp(svc);
    const first = (
      await post('/auth/refresh-token', { refresh_token: acct.refresh_token })
    ).json<Tokens>();
    const replay = await post('/auth/refresh-token', { refresh_token: acct.refresh_token });
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ code: 16 });
    expect(await sessionEnded(svc, sessionIdOf(acct.access_token))).toBe(true);
    // The legitimate holder's newest tokens are refused too.
    const again = await post('/auth/refresh-token', { refresh_token: first.refresh_token });
    expect(again.statusCode).toBe(401);
    const me = await get('/wallets/me', bearer(first));
    expect(me.statusCode).toBe(401);
  });

  it('updates last_used_at on refresh', async () => {
    const acct = await signUp(svc);
    svc.clock.advance(60_000);
    const next = (
      await post('/auth/refresh-token', { refresh_token: acct.refresh_token })
    ).json<Tokens>();
    const list = await get('/wallets/sessions', bearer(next));
    const current = (
      list.json().sessions as { current: boolean; last_used_at: string; when_created: string }[]
    ).find((s) => s.current)!;
    expect(Date.parse(current.last_used_at)).toBeGreaterThan(Date.parse(current.when_created));
  });

  it('refuses an unknown token with 401 code 16 and bad input with 400 code 3', async () => {
    const unknown = await post('/auth/refresh-token', { refresh_token: 'onsr_nope' });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({ code: 16 });
    for (const body of [
      {},
      { refresh_token: { token: 'x' } },
      { refresh_token: 'x'.repeat(257) },
    ]) {
      const r = await post('/auth/refresh-token', body);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toMatchObject({ code: 3 });
    }
  });
});

describe('POST /auth/logout and sessions', () => {
  it('ends the current session; its access token is refused at once', async () => {
    const acct = await signUp(svc);
    expect((await get('/wallets/me', bearer(acct))).statusCode).toBe(200);
    const res = await post('/auth/logout', {}, bearer(acct));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    const me = await get('/wallets/me', bearer(acct));
    expect(me.statusCode).toBe(401);
    expect(me.json()).toMatchObject({ code: 16 });
    const refresh = await post('/auth/refresh-token', { refresh_token: acct.refresh_token });
    expect(refresh.statusCode).toBe(401);
  });

  it('refuses logout without a credential (401 code 16)', async () => {
    const res = await post('/auth/logout', {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('lists the sessions of the wallet with device, times and which is current', async () => {
    const acct = await signUp(svc);
    const other = (
      await svc.app.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email: acct.email, password: acct.password },
        headers: { 'user-agent': 'Phone/1.0' },
      })
    ).json<Tokens>();
    const res = await get('/wallets/sessions', bearer(acct));
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      sessions: Record<string, unknown>[];
      next: string;
      has_more: boolean;
    }>();
    expect(body.sessions).toHaveLength(2);
    expect(body.has_more).toBe(false);
    const mine = body.sessions.find((s) => s.current)!;
    expect(mine.id).toBe(sessionIdOf(acct.access_token));
    const phone = body.sessions.find((s) => !s.current)!;
    expect(phone).toMatchObject({ id: sessionIdOf(other.access_token), device: 'Phone/1.0' });
    expect(phone).toHaveProperty('when_created');
    expect(phone).toHaveProperty('last_used_at');
    expectNoSecrets(res.body, [acct.refresh_token, other.refresh_token]);
    const paged = await get('/wallets/sessions?limit=1', bearer(acct));
    expect(paged.json()).toMatchObject({ has_more: true });
    expect(paged.json<{ sessions: unknown[] }>().sessions).toHaveLength(1);
    const bad = await get('/wallets/sessions?limit=500', bearer(acct));
    expect(bad.statusCode).toBe(400);
  });

  it('ends one session; its token is refused, the others keep working', async () => {
    const acct = await signUp(svc);
    const other = (
      await post('/auth/login', { email: acct.email, password: acct.password })
    ).json<Tokens>();
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `/wallets/sessions/${sessionIdOf(other.access_token)}`,
      headers: bearer(acct),
    });
    expect(res.statusCode).toBe(200);
    expect((await get('/wallets/me', bearer(other))).statusCode).toBe(401);
    expect((await get('/wallets/me', bearer(acct))).statusCode).toBe(200);
  });

  it("answers 404 for another wallet's session and leaves it running", async () => {
    const a = await signUp(svc);
    const b = await signUp(svc);
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `/wallets/sessions/${sessionIdOf(b.access_token)}`,
      headers: bearer(a),
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 5 });
    expect((await get('/wallets/me', bearer(b))).statusCode).toBe(200);
  });

  it('refuses the session routes without a credential', async () => {
    expect((await get('/wallets/sessions')).statusCode).toBe(401);
    const del = await svc.app.inject({ method: 'DELETE', url: '/wallets/sessions/ses_x' });
    expect(del.statusCode).toBe(401);
  });
});

describe('access tokens', () => {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

  function claimsOf(t: Tokens) {
    return JSON.parse(Buffer.from(t.access_token.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
  }

  it('carry wallet, organization, session and roles, verifiable with the published JWKS', async () => {
    const m = await createMember(svc, { role: 'admin' });
    const claims = JSON.parse(
      Buffer.from(m.accessToken.split('.')[1]!, 'base64url').toString(),
    ) as Record<string, unknown>;
    expect(claims).toMatchObject({
      sub: m.walletId,
      org: m.orgId,
      sid: m.sessionId,
      roles: ['admin'],
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(900);
    const jwks = await get('/.well-known/jwks.json');
    expect(jwks.json().keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(jwks.body).not.toMatch(/"d"/);
  });

  it('refuses alg none', async () => {
    const acct = await signUp(svc);
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claimsOf(acct))}.`;
    const res = await get('/wallets/me', { authorization: `Bearer ${token}` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('refuses HS256 signed with the public key (algorithm confusion)', async () => {
    const acct = await signUp(svc);
    const jwk = (await get('/.well-known/jwks.json')).json().keys[0] as JWK;
    const header = b64({ alg: 'HS256', typ: 'JWT', kid: jwk.kid });
    const payload = b64(claimsOf(acct));
    for (const secret of [JSON.stringify(jwk), `${jwk.x}${jwk.y}`]) {
      const sig = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
      const res = await get('/wallets/me', { authorization: `Bearer ${header}.${payload}.${sig}` });
      expect(res.statusCode).toBe(401);
    }
  });

  it('refuses a token signed with another key, even with the right kid', async () => {
    const acct = await signUp(svc);
    const jwk = (await get('/.well-known/jwks.json')).json().keys[0] as JWK;
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = await importJWK(privateKey.export({ format: 'jwk' }) as JWK, 'ES256');
    const claims = claimsOf(acct);
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid!, typ: 'JWT' })
      .sign(key);
    const res = await get('/wallets/me', { authorization: `Bearer ${forged}` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('refuses an access token after its 15 minutes', async () => {
    const acct = await signUp(svc);
    expect((await get('/wallets/me', bearer(acct))).statusCode).toBe(200);
    svc.clock.advance(15 * 60_000 + 1_000);
    const res = await get('/wallets/me', bearer(acct));
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });
});
