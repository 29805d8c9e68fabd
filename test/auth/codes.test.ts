import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import {
  bearer,
  expectNoSecrets,
  lastCode,
  outboxCount,
  sessionEnded,
  sessionIdOf,
  signUp,
  uniqueEmail,
  type Tokens,
} from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

const { post } = svc;

const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('POST /auth/verification-code and POST /auth/verify', () => {
  it('sends a 6-digit code to the unconfirmed email and confirms it, once', async () => {
    const acct = await signUp(svc);
    const send = await post('/auth/verification-code', {}, bearer(acct));
    expect(send.statusCode).toBe(200);
    expect(send.json()).toEqual({});
    const code = await lastCode(svc, acct.email);
    expect(send.body).not.toContain(code);
    const { rows } = await svc.container.db.execute<{ code_hash: string }>(
      sql`SELECT code_hash FROM codes WHERE recipient = ${acct.email}`,
    );
    expect(rows[0]!.code_hash).not.toContain(code);
    const ok = await post('/auth/verify', { code }, bearer(acct));
    expect(ok.statusCode).toBe(200);
    const me = await svc.app.inject({ method: 'GET', url: '/wallets/me', headers: bearer(acct) });
    expect(me.json()).toMatchObject({ email_confirmed: true });
    // A confirmed account gets no more codes.
    const again = await post('/auth/verification-code', {}, bearer(acct));
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 9 });
  });

  it('ignores the body of /auth/verification-code', async () => {
    const acct = await signUp(svc);
    const res = await post('/auth/verification-code', { anything: 'at all' }, bearer(acct));
    expect(res.statusCode).toBe(200);
  });

  it('refuses a wrong code, and after 5 attempts even the right one', async () => {
    const acct = await signUp(svc);
    await post('/auth/verification-code', {}, bearer(acct));
    const code = await lastCode(svc, acct.email);
    for (let i = 0; i < 5; i++) {
      const r = await post('/auth/verify', { code: wrongCode(code) }, bearer(acct));
      expect(r.statusCode).toBe(400);
      expect(r.json()).toMatchObject({ code: 3 });
    }
    const late = await post('/auth/verify', { code }, bearer(acct));
    expect(late.statusCode).toBe(400);
  });

  it('counts wrong codes per address across accounts: many accounts naming one cannot each guess freely', async () => {
    const email = uniqueEmail('unheld');
    const accounts = [
      await signUp(svc, { email }),
      await signUp(svc, { email }),
      await signUp(svc, { email }),
    ];
    for (const acct of accounts) {
      expect((await post('/auth/verification-code', {}, bearer(acct))).statusCode).toBe(200);
    }
    const code = await lastCode(svc, email); // the last account's
    const guess = (i: number, c: string) => post('/auth/verify', { code: c }, bearer(accounts[i]!));
    // Ten wrong codes between them (four, four and two) are refused as wrong …
    for (const [i, n] of [
      [0, 4],
      [1, 4],
      [2, 2],
    ] as const) {
      for (let k = 0; k < n; k++) expect((await guess(i, wrongCode(code))).statusCode).toBe(400);
    }
    // … then the address waits, whoever guesses, the right code included (429 code 8).
    for (const c of [wrongCode(code), code]) {
      const held = await guess(c === code ? 2 : 0, c);
      expect(held.statusCode, held.body).toBe(429);
      expect(held.json()).toMatchObject({ code: 8 });
      expect(Number(held.headers['retry-after'])).toBeGreaterThan(0);
    }
    svc.clock.advance(31_000);
    expect((await guess(2, code)).statusCode).toBe(200);
    // A right code clears the count: the next wrong one is just wrong again.
    expect((await guess(0, wrongCode(code))).statusCode).toBe(400);
  });

  it('refuses a code after 10 minutes; a newer code leaves an older one valid', async () => {
    const acct = await signUp(svc);
    await post('/auth/verification-code', {}, bearer(acct));
    const old = await lastCode(svc, acct.email);
    svc.clock.advance(10 * 60_000 + 1);
    const expired = await post('/auth/verify', { code: old }, bearer(acct));
    expect(expired.statusCode).toBe(400);
    await post('/auth/verification-code', {}, bearer(acct));
    const first = await lastCode(svc, acct.email);
    await post('/auth/verification-code', {}, bearer(acct));
    expect(await lastCode(svc, acct.email)).toMatch(/^\d{6}$/);
    // Asking again cancels nothing (test/auth/code-allowance.test.ts: others cannot cancel it).
    expect((await post('/auth/verify', { code: first }, bearer(acct))).statusCode).toBe(200);
  });

  it('limits how many codes one address receives in an hour (429 code 8)', async () => {
    const acct = await signUp(svc);
    for (let i = 0; i < 5; i++) {
      expect((await post('/auth/verification-code', {}, bearer(acct))).statusCode).toBe(200);
    }
    const res = await post('/auth/verification-code', {}, bearer(acct));
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ code: 8 });
  });

  it('refuses an API key-less anonymous caller (401 code 16) and bad codes (400 code 3)', async () => {
    expect((await post('/auth/verification-code', {})).statusCode).toBe(401);
    expect((await post('/auth/verify', { code: '123456' })).statusCode).toBe(401);
    const acct = await signUp(svc);
    for (const body of [
      {},
      { code: 123456 },
      { code: '12345' },
      { code: '1234567' },
      { code: 'abcdef' },
    ]) {
      const r = await post('/auth/verify', body, bearer(acct));
      expect(r.statusCode).toBe(400);
      expect(r.json()).toMatchObject({ code: 3 });
    }
  });

  it('answers 400 code 9 for a wallet with nothing to confirm', async () => {
    const m = await createMember(svc);
    const res = await post('/auth/verification-code', {}, m.headers);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 9 });
  });
});

describe('password reset', () => {
  it('answers alike for known and unknown emails, and only the known one gets a code', async () => {
    const acct = await signUp(svc);
    const unknown = uniqueEmail('ghost');
    const a = await post('/auth/password-reset', { email: acct.email });
    const b = await post('/auth/password-reset', { email: unknown });
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(a.body).toBe(b.body);
    expect(await outboxCount(svc, acct.email)).toBe(1);
    expect(await outboxCount(svc, unknown)).toBe(0);
  });

  it('sets the new password, ends every other session and signs in', async () => {
    const acct = await signUp(svc);
    const other = (
      await post('/auth/login', { email: acct.email, password: acct.password })
    ).json<Tokens>();
    await post('/auth/password-reset', { email: acct.email.toUpperCase() });
    const code = await lastCode(svc, acct.email);
    const res = await post('/auth/password-reset/confirm', {
      email: acct.email,
      code,
      password: 'a brand new password',
    });
    expect(res.statusCode).toBe(200);
    const fresh = res.json<Tokens>();
    expect(fresh.wallet.id).toBe(acct.wallet.id);
    expectNoSecrets(res.body, [code, acct.refresh_token, other.refresh_token]);
    expect(await sessionEnded(svc, sessionIdOf(acct.access_token))).toBe(true);
    expect(await sessionEnded(svc, sessionIdOf(other.access_token))).toBe(true);
    const gone = await svc.app.inject({
      method: 'GET',
      url: '/wallets/me',
      headers: bearer(other),
    });
    expect(gone.statusCode).toBe(401);
    const me = await svc.app.inject({ method: 'GET', url: '/wallets/me', headers: bearer(fresh) });
    expect(me.statusCode).toBe(200);
    expect(
      (await post('/auth/login', { email: acct.email, password: acct.password })).statusCode,
    ).toBe(401);
    expect(
      (await post('/auth/login', { email: acct.email, password: 'a brand new password' }))
        .statusCode,
    ).toBe(200);
    // Single use.
    const again = await post('/auth/password-reset/confirm', {
      email: acct.email,
      code,
      password: 'yet another password',
    });
    expect(again.statusCode).toBe(401);
  });

  it('refuses a wrong code and an unknown email with the same 401 code 16', async () => {
    const acct = await signUp(svc);
    await post('/auth/password-reset', { email: acct.email });
    const code = await lastCode(svc, acct.email);
    const wrong = await post('/auth/password-reset/confirm', {
      email: acct.email,
      code: wrongCode(code),
      password: 'a brand new password',
    });
    const unknown = await post('/auth/password-reset/confirm', {
      email: uniqueEmail('ghost'),
      code,
      password: 'a brand new password',
    });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());
  });

  it.each([
    ['/auth/password-reset', {}],
    ['/auth/password-reset', { email: 5 }],
    ['/auth/password-reset', { email: `${'a'.repeat(400)}@x.test` }],
    ['/auth/password-reset', { email: 'a@b.test', extra: 1 }],
    ['/auth/password-reset/confirm', { email: 'a@b.test', code: '123456' }],
    ['/auth/password-reset/confirm', { email: 'a@b.test', code: '123456', password: 'short' }],
    [
      '/auth/password-reset/confirm',
      { email: 'a@b.test', code: '12', password: 'a long password' },
    ],
  ])('refuses bad input to %s with 400 code 3', async (url, body) => {
    const res = await post(url, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 3 });
  });
});

describe('one-time-code sign-in', () => {
  it('sends a code only to an existing account, answering alike, and signs in with it', async () => {
    const acct = await signUp(svc);
    const ghost = uniqueEmail('ghost');
    const a = await post('/auth/otp', { email: acct.email });
    const b = await post('/auth/otp', { email: ghost });
    expect(a.statusCode).toBe(200);
    expect(a.body).toBe(b.body);
    expect(await outboxCount(svc, ghost)).toBe(0);
    const code = await lastCode(svc, acct.email);
    const res = await post('/auth/otp/verify', { email: acct.email, code });
    expect(res.statusCode).toBe(200);
    expect(res.json<Tokens>().wallet.id).toBe(acct.wallet.id);
    expectNoSecrets(res.body, [code]);
    // The code proved the address.
    const me = await svc.app.inject({
      method: 'GET',
      url: '/wallets/me',
      headers: bearer(res.json<Tokens>()),
    });
    expect(me.json()).toMatchObject({ email_confirmed: true });
    const replay = await post('/auth/otp/verify', { email: acct.email, code });
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ code: 16 });
  });

  it('works with a phone number through the SMS outbox', async () => {
    await signUp(svc, { phone_number: '+14155550177' });
    expect((await post('/auth/otp', { phone_number: '+1 415 555 0177' })).statusCode).toBe(200);
    const code = await lastCode(svc, '+14155550177');
    const res = await post('/auth/otp/verify', { phone_number: '+14155550177', code });
    expect(res.statusCode).toBe(200);
  });

  it('stops after 5 wrong attempts', async () => {
    const acct = await signUp(svc);
    await post('/auth/otp', { email: acct.email });
    const code = await lastCode(svc, acct.email);
    for (let i = 0; i < 5; i++) {
      expect(
        (await post('/auth/otp/verify', { email: acct.email, code: wrongCode(code) })).statusCode,
      ).toBe(401);
    }
    expect((await post('/auth/otp/verify', { email: acct.email, code })).statusCode).toBe(401);
  });

  it.each([
    ['/auth/otp', {}],
    ['/auth/otp', { email: 'a@b.test', phone_number: '+14155550100' }],
    ['/auth/otp', { phone_number: '12' }],
    ['/auth/otp/verify', { email: 'a@b.test' }],
    ['/auth/otp/verify', { email: 'a@b.test', code: { c: 1 } }],
    ['/auth/otp/verify', { email: 'a@b.test', code: '123456', organization_id: 'o'.repeat(65) }],
  ])('refuses bad input to %s with 400 code 3', async (url, body) => {
    const res = await post(url, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 3 });
  });
});
