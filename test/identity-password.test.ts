import { createHmac, generateKeyPairSync } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { SignJWT, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, createOrganization } from './helpers/fixtures.js';
import {
  bearer,
  expectNoSecrets,
  sessionEnded,
  sessionIdOf,
  signUp,
  uniqueEmail,
  type Tokens,
} from './helpers/identity.js';
import { startTestService, type TestService } from './helpers/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.stop();
});

const post = (
  url: string,
  payload: unknown,
  headers: Record<string, string> = {},
  remoteAddress?: string,
) => svc.app.inject({ method: 'POST', url, payload: payload as object, headers, remoteAddress });
const get = (url: string, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url, headers });

describe('POST /organizations/wallets', () => {
  it('creates an unconfirmed standalone account in no organization and signs it in', async () => {
    const email = uniqueEmail();
    const res = await post('/organizations/wallets', {
      email: `  ${email.toUpperCase()} `,
      password: 'a long password',
      name: 'Alice',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<Tokens>();
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(body.wallet.id).toMatch(/^wal_/);
    expect(body.wallet.address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(body.wallet.organization_id).toBeNull();
    expectNoSecrets(res.body);
    const me = await get('/wallets/me', bearer(body));
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      id: body.wallet.id,
      address: body.wallet.address,
      email,
      name: 'Alice',
      email_confirmed: false,
      organization_id: null,
      roles: [],
    });
    expect(me.json().credentials).toEqual([
      expect.objectContaining({ type: 'password', id: expect.stringMatching(/^crd_/) }),
    ]);
    const { rows } = await svc.container.db.execute<{ password_hash: string }>(
      sql`SELECT password_hash FROM wallets WHERE id = ${body.wallet.id}`,
    );
    expect(rows[0]!.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('accepts a phone number alone, normalised to E.164', async () => {
    const res = await post('/organizations/wallets', {
      phone_number: '+44 20 7946 0958',
      password: 'a long password',
    });
    expect(res.statusCode).toBe(200);
    const me = await get('/wallets/me', bearer(res.json<Tokens>()));
    expect(me.json()).toMatchObject({ phone_number: '+442079460958', email: null });
  });

  it('refuses a duplicate email, whatever its case, with 409 code 6', async () => {
    const { email } = await signUp(svc);
    const res = await post('/organizations/wallets', {
      email: email.toUpperCase(),
      password: 'another password',
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 6 });
  });

  it('refuses a duplicate phone number with 409 code 6', async () => {
    await signUp(svc, { phone_number: '+14155550101' });
    const res = await post('/organizations/wallets', {
      phone_number: '+14155550101',
      password: 'another password',
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 6 });
  });

  it.each([
    ['no email or phone', { password: 'a long password' }],
    ['no password', { email: 'x@example.test' }],
    ['a short password', { email: 'x@example.test', password: 'short' }],
    ['an oversize password', { email: 'x@example.test', password: 'p'.repeat(257) }],
    ['a mistyped email', { email: 42, password: 'a long password' }],
    ['an email that is not one', { email: 'not-an-email', password: 'a long password' }],
    ['an oversize email', { email: `${'a'.repeat(320)}@x.test`, password: 'a long password' }],
    ['a phone that is not E.164', { phone_number: '0207946095', password: 'a long password' }],
    ['an unknown field', { email: 'x@example.test', password: 'a long password', role: 'owner' }],
  ])('refuses %s with 400 code 3', async (_name, body) => {
    const res = await post('/organizations/wallets', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 3 });
  });
});

describe('POST /auth/login', () => {
  it('signs in with email (any case) and password', async () => {
    const acct = await signUp(svc);
    const res = await post('/auth/login', {
      email: acct.email.toUpperCase(),
      password: acct.password,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<Tokens>();
    expect(body.wallet.id).toBe(acct.wallet.id);
    expect(body.refresh_token).not.toBe(acct.refresh_token);
    expectNoSecrets(res.body, [acct.refresh_token]);
  });

  it('signs in with a phone number', async () => {
    const acct = await signUp(svc, { phone_number: '+14155550102' });
    const res = await post('/auth/login', {
      phone_number: '+14155550102',
      password: acct.password,
    });
    expect(res.statusCode).toBe(200);
  });

  it('answers a wrong password and an unknown account with the same 401 code 16', async () => {
    const acct = await signUp(svc);
    const wrong = await post(
      '/auth/login',
      { email: acct.email, password: 'wrong password' },
      {},
      '10.0.0.1',
    );
    const unknown = await post(
      '/auth/login',
      { email: uniqueEmail('nobody'), password: 'wrong password' },
      {},
      '10.0.0.1',
    );
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());
    expect(wrong.json()).toMatchObject({ code: 16 });
  });

  it('slows then refuses repeated failures for one account with 429 code 8 and Retry-After', async () => {
    const acct = await signUp(svc);
    for (let i = 0; i < 5; i++) {
      const r = await post(
        '/auth/login',
        { email: acct.email, password: 'bad guess' },
        {},
        `10.1.0.${i}`,
      );
      expect(r.statusCode).toBe(401);
    }
    // Even the right password waits: the account is locked for a while, not the guesser.
    const locked = await post(
      '/auth/login',
      { email: acct.email, password: acct.password },
      {},
      '10.1.1.1',
    );
    expect(locked.statusCode).toBe(429);
    expect(locked.json()).toMatchObject({ code: 8 });
    expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    svc.clock.advance(31_000);
    const again = await post(
      '/auth/login',
      { email: acct.email, password: 'bad guess' },
      {},
      '10.1.1.2',
    );
    expect(again.statusCode).toBe(401);
    const longer = await post(
      '/auth/login',
      { email: acct.email, password: acct.password },
      {},
      '10.1.1.3',
    );
    expect(longer.statusCode).toBe(429);
    expect(Number(longer.headers['retry-after'])).toBeGreaterThan(30);
    svc.clock.advance(61_000);
    const ok = await post(
      '/auth/login',
      { email: acct.email, password: acct.password },
      {},
      '10.1.1.4',
    );
    expect(ok.statusCode).toBe(200);
  });

  it('refuses one address that fails across many accounts with 429 code 8', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await post(
        '/auth/login',
        { email: uniqueEmail('spray'), password: 'guess' },
        {},
        '10.9.9.9',
      );
      expect(r.statusCode).toBe(401);
    }
    const acct = await signUp(svc);
    const blocked = await post(
      '/auth/login',
      { email: acct.email, password: acct.password },
      {},
      '10.9.9.9',
    );
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
    const elsewhere = await post(
      '/auth/login',
      { email: acct.email, password: acct.password },
      {},
      '10.9.9.10',
    );
    expect(elsewhere.statusCode).toBe(200);
  });

  it('selects the organization given and joins it as member where self sign-up is allowed', async () => {
    const open = await createOrganization(svc, { allowSelfSignup: true });
    const acct = await signUp(svc);
    const res = await post('/auth/login', {
      email: acct.email,
      password: acct.password,
      organization_id: open,
    });
    expect(res.statusCode).toBe(200);
    const tokens = res.json<Tokens>();
    expect(tokens.wallet.organization_id).toBe(open);
    const me = await get('/wallets/me', bearer(tokens));
    expect(me.json()).toMatchObject({ organization_id: open, roles: ['member'] });
    // The next sign-in without an organization returns to the last one.
    const later = await post('/auth/login', { email: acct.email, password: acct.password });
    expect(later.json<Tokens>().wallet.organization_id).toBe(open);
  });

  it('refuses an organization without self sign-up (403 code 7) and a missing one (404 code 5)', async () => {
    const closed = await createOrganization(svc, { allowSelfSignup: false });
    const acct = await signUp(svc);
    const res = await post('/auth/login', {
      email: acct.email,
      password: acct.password,
      organization_id: closed,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 7 });
    const missing = await post('/auth/login', {
      email: acct.email,
      password: acct.password,
      organization_id: 'org_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 5 });
  });

  it.each([
    ['no identifier', { password: 'x' }],
    ['both email and phone', { email: 'a@b.test', phone_number: '+14155550100', password: 'x' }],
    ['no password', { email: 'a@b.test' }],
    ['a mistyped password', { email: 'a@b.test', password: { value: 'x' } }],
    ['an oversize password', { email: 'a@b.test', password: 'p'.repeat(257) }],
    ['an unknown field', { email: 'a@b.test', password: 'x', remember: true }],
  ])('refuses %s with 400 code 3', async (_name, body) => {
    const res = await post('/auth/login', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 3 });
  });
});

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

describe('POST /wallets', () => {
  it('lets anyone create a password wallet where self sign-up is allowed, as member', async () => {
    const org = await createOrganization(svc, { allowSelfSignup: true });
    const email = uniqueEmail();
    const res = await post('/wallets', {
      organization_id: org,
      email,
      password: 'a long password',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<Tokens & { id: string }>();
    expect(body.id).toBe(body.wallet.id);
    expect(body.wallet.organization_id).toBe(org);
    expectNoSecrets(res.body);
    const me = await get('/wallets/me', bearer(body));
    expect(me.json()).toMatchObject({ email, organization_id: org, roles: ['member'] });
  });

  it('lets a caller with members.create add a wallet to a closed organization', async () => {
    const admin = await createMember(svc, { role: 'admin' });
    const res = await post(
      '/wallets',
      { organization_id: admin.orgId, phone_number: '+14155550199', password: 'a long password' },
      admin.headers,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json<Tokens>().wallet.organization_id).toBe(admin.orgId);
  });

  it('refuses a closed organization to anyone else with 403 code 7', async () => {
    const org = await createOrganization(svc, { allowSelfSignup: false });
    const anon = await post('/wallets', {
      organization_id: org,
      email: uniqueEmail(),
      password: 'a long password',
    });
    expect(anon.statusCode).toBe(403);
    expect(anon.json()).toMatchObject({ code: 7 });
    const member = await createMember(svc, { role: 'member', orgId: org });
    const asMember = await post(
      '/wallets',
      { organization_id: org, email: uniqueEmail(), password: 'a long password' },
      member.headers,
    );
    expect(asMember.statusCode).toBe(403);
    // members.create in another organization does not count here.
    const admin = await createMember(svc, { role: 'owner' });
    const elsewhere = await post(
      '/wallets',
      { organization_id: org, email: uniqueEmail(), password: 'a long password' },
      admin.headers,
    );
    expect(elsewhere.statusCode).toBe(403);
  });

  it('answers 404 code 5 for a missing organization and 409 code 6 for a taken email', async () => {
    const missing = await post('/wallets', {
      organization_id: 'org_01JZZZZZZZZZZZZZZZZZZZZZZZ',
      email: uniqueEmail(),
      password: 'a long password',
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 5 });
    const org = await createOrganization(svc, { allowSelfSignup: true });
    const acct = await signUp(svc);
    const dup = await post('/wallets', {
      organization_id: org,
      email: acct.email,
      password: 'a long password',
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ code: 6 });
  });

  it.each([
    ['no organization', { email: 'a@b.test', password: 'a long password' }],
    ['no email or phone', { organization_id: 'org_x', password: 'a long password' }],
    ['a short password', { organization_id: 'org_x', email: 'a@b.test', password: 'short' }],
    [
      'a mistyped organization',
      { organization_id: { id: 'org' }, email: 'a@b.test', password: 'a long password' },
    ],
    [
      'an oversize organization id',
      { organization_id: 'o'.repeat(65), email: 'a@b.test', password: 'a long password' },
    ],
  ])('refuses %s with 400 code 3', async (_name, body) => {
    const res = await post('/wallets', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 3 });
  });

  it('binds accepted invitations for the email to the new wallet', async () => {
    const org = await createOrganization(svc);
    const email = uniqueEmail('invited');
    const now = svc.clock.now();
    await svc.container.db.execute(sql`INSERT INTO members
      (id, organization_id, wallet_id, email, role, status, created_at, updated_at)
      VALUES ('mem_01JINVITE0000000000000000', ${org}, NULL, ${email}, 'admin', 'active', ${now}, ${now})`);
    const acct = await signUp(svc, { email: email.toUpperCase() });
    const res = await post('/auth/login', { email, password: acct.password, organization_id: org });
    expect(res.statusCode).toBe(200);
    const me = await get('/wallets/me', bearer(res.json<Tokens>()));
    expect(me.json()).toMatchObject({ organization_id: org, roles: ['admin'] });
  });
});

describe('GET /wallets/me', () => {
  it('refuses no credential (401 code 16) and an API key-less garbage token', async () => {
    const none = await get('/wallets/me');
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ code: 16 });
    const garbage = await get('/wallets/me', { authorization: 'Bearer a.b.c' });
    expect(garbage.statusCode).toBe(401);
  });
});

describe('logs', () => {
  it('never hold a password, a refresh token or an error', () => {
    const text = JSON.stringify(svc.logs);
    expect(text).not.toContain('correct horse battery');
    expect(text).not.toContain('onsr_');
    expect(svc.logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
  });
});
