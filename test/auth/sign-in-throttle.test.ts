import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { ACCOUNT_POLICY, ADDRESS_POLICY } from '../../src/modules/auth/throttle.js';
import { bearer, lastCode, signUp, type Tokens } from '../helpers/identity.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The sign-in failure throttle under concurrency: a failure is reserved before the password
// hash, in PostgreSQL, so neither concurrent requests nor a second process get more hashes.

let svc: TestService;
let other: TestService;
let hashes: MockInstance;
let otherHashes: MockInstance;

beforeAll(async () => {
  svc = await startTestService();
  // A second service on the same database: another process behind the load balancer.
  other = await startTestService({ databaseUrl: svc.config.databaseUrl ?? undefined });
  // Counts every password hash the sign-in makes, passing each call through.
  hashes = vi.spyOn(svc.container.identity.passwords.checker, 'check');
  otherHashes = vi.spyOn(other.container.identity.passwords.checker, 'check');
});
afterAll(async () => {
  await other?.stop();
  await svc?.stop();
});

const login = (s: TestService, email: string, password: string, ip: string) =>
  s.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email, password },
    remoteAddress: ip,
  });

function tally(results: { statusCode: number; body: string }[]) {
  const out = { ok: 0, wrong: 0, throttled: 0 };
  for (const r of results) {
    if (r.statusCode === 200) out.ok += 1;
    else if (r.statusCode === 401) out.wrong += 1;
    else {
      expect(r.statusCode, r.body).toBe(429);
      expect(JSON.parse(r.body)).toMatchObject({ code: 8 });
      out.throttled += 1;
    }
  }
  return out;
}

let net = 0;
/** A fresh client address per call, so only the account's count can stop the attempts. */
const freshIp = () => {
  net += 1;
  return `10.${200 + Math.floor(net / 250)}.${net % 250}.7`;
};

/** The account confirms its email: it holds the address. */
async function holderOf<T extends Tokens & { email: string }>(acct: T): Promise<T> {
  const post = (url: string, payload: object) =>
    svc.app.inject({ method: 'POST', url, payload, headers: bearer(acct) });
  expect((await post('/auth/verification-code', {})).statusCode).toBe(200);
  const code = await lastCode(svc, acct.email);
  expect((await post('/auth/verify', { code })).statusCode).toBe(200);
  return acct;
}

const accountFailures = async (email: string): Promise<number> => {
  const { rows } = await svc.container.db.execute<{ failures: number }>(
    sql`SELECT failures FROM sign_in_failures WHERE key = ${`account:${email}`}`,
  );
  return rows[0]?.failures ?? 0;
};

describe('the sign-in failure throttle under concurrency', () => {
  it('lets 25 concurrent wrong passwords for one account reach the hash at most 5 times', async () => {
    const acct = await signUp(svc);
    hashes.mockClear();
    const results = await Promise.all(
      Array.from({ length: 25 }, () => login(svc, acct.email, 'wrong guess', freshIp())),
    );
    const t = tally(results);
    expect(hashes).toHaveBeenCalledTimes(ACCOUNT_POLICY.freeFailures);
    expect(t).toEqual({ ok: 0, wrong: ACCOUNT_POLICY.freeFailures, throttled: 20 });
    // The account stays blocked, for the right password too.
    const right = await login(svc, acct.email, acct.password, freshIp());
    expect(right.statusCode).toBe(429);
    expect(Number(right.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(hashes).toHaveBeenCalledTimes(ACCOUNT_POLICY.freeFailures);
  });

  it('holds across two service instances on one database', async () => {
    const acct = await signUp(svc);
    hashes.mockClear();
    otherHashes.mockClear();
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        login(i % 2 === 0 ? svc : other, acct.email, 'wrong guess', freshIp()),
      ),
    );
    const t = tally(results);
    const both = hashes.mock.calls.length + otherHashes.mock.calls.length;
    // Which instance's attempts win the free slots is up to the scheduler; the sum is not.
    expect(both).toBe(ACCOUNT_POLICY.freeFailures);
    expect(t).toEqual({ ok: 0, wrong: ACCOUNT_POLICY.freeFailures, throttled: 20 });
    // Each instance sees the other's reservations: after two failures through one, the
    // other lets only the remaining three reach the hash.
    const next = await signUp(svc);
    hashes.mockClear();
    otherHashes.mockClear();
    for (let i = 0; i < 2; i++) {
      expect((await login(other, next.email, 'wrong guess', freshIp())).statusCode).toBe(401);
    }
    const rest = await Promise.all(
      Array.from({ length: 10 }, () => login(svc, next.email, 'wrong guess', freshIp())),
    );
    expect(tally(rest)).toEqual({ ok: 0, wrong: ACCOUNT_POLICY.freeFailures - 2, throttled: 7 });
    expect(otherHashes).toHaveBeenCalledTimes(2);
    expect(hashes).toHaveBeenCalledTimes(ACCOUNT_POLICY.freeFailures - 2);
  });

  it('holds for one client address spraying many accounts at once', async () => {
    const ip = freshIp();
    const accounts = await Promise.all(Array.from({ length: 3 }, () => signUp(svc)));
    hashes.mockClear();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        login(svc, accounts[i % accounts.length]!.email, 'wrong guess', ip),
      ),
    );
    const t = tally(results);
    // Each account lets 5 through; the address lets 20: 3 × 5 = 15 hashes at most.
    expect(hashes.mock.calls.length).toBe(t.wrong);
    expect(t.wrong).toBe(Math.min(3 * ACCOUNT_POLICY.freeFailures, ADDRESS_POLICY.freeFailures));
  });

  it('counts a right password as no failure, for the account or the address', async () => {
    const acct = await holderOf(await signUp(svc));
    const ip = freshIp();
    // Four wrong and the right one at once: each reserves a slot; the right one gives its
    // slot back and clears the account.
    const mixed = await Promise.all([
      ...Array.from({ length: ACCOUNT_POLICY.freeFailures - 1 }, () =>
        login(svc, acct.email, 'wrong guess', freshIp()),
      ),
      login(svc, acct.email, acct.password, ip),
    ]);
    expect(mixed.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401, 401]);
    // More right sign-ins from one address than it may fail: none counts against it.
    for (let i = 0; i < ADDRESS_POLICY.freeFailures + 2; i++) {
      const r = await login(svc, acct.email, acct.password, ip);
      expect(r.statusCode, r.body).toBe(200);
    }
    const { rows } = await svc.container.db.execute<{ key: string; failures: number }>(
      sql`SELECT key, failures FROM sign_in_failures WHERE key = ${`ip:${ip}`}
        OR key = ${`account:${acct.email}`}`,
    );
    expect(rows.filter((r) => r.failures > 0)).toEqual([]);
    // So the account still has every free failure, then is blocked.
    for (let i = 0; i < ACCOUNT_POLICY.freeFailures; i++) {
      expect((await login(svc, acct.email, 'wrong guess', freshIp())).statusCode).toBe(401);
    }
    expect((await login(svc, acct.email, 'wrong guess', freshIp())).statusCode).toBe(429);
  });
});

/**
 * The failures counted for an address (`account:<address>`) are forgiven by a right password
 * of the wallet that holds the address only. Any number of wallets may name it, each with a
 * password its maker chose: were their sign-ins to clear the count, a guesser with one such
 * wallet would guess the holder's password four times, sign in once to their own, and go on
 * for ever.
 */
describe('a right password clears the count of failures for its address', () => {
  const RULE = [
    { signer: 'the wallet holding the address', clears: true },
    { signer: 'another wallet naming it, unconfirmed', clears: false },
    { signer: 'the one wallet naming it, unconfirmed', clears: false },
  ] as const;
  const wrongBefore = ACCOUNT_POLICY.freeFailures - 1;

  for (const { signer, clears } of RULE) {
    it(`${signer}: ${clears ? 'cleared' : 'only its own attempt given back'}`, async () => {
      const first = await signUp(svc);
      const named = signer === 'the one wallet naming it, unconfirmed';
      const holder = named ? null : await holderOf(first);
      const other = named
        ? first
        : await signUp(svc, { email: first.email, password: 'the other password' });
      for (let i = 0; i < wrongBefore; i++) {
        expect((await login(svc, first.email, 'wrong guess', freshIp())).statusCode).toBe(401);
      }
      const right = signer === 'the wallet holding the address' ? holder! : other;
      const res = await login(svc, first.email, right.password, freshIp());
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json<Tokens>().wallet.id).toBe(right.wallet.id);
      expect(await accountFailures(first.email)).toBe(clears ? 0 : wrongBefore);
      // What is left of the free failures before the wait.
      const left = clears ? ACCOUNT_POLICY.freeFailures : 1;
      for (let i = 0; i < left; i++) {
        expect((await login(svc, first.email, 'wrong guess', freshIp())).statusCode).toBe(401);
      }
      const next = await login(svc, first.email, 'wrong guess', freshIp());
      expect([next.statusCode, next.json<{ code: number }>().code]).toEqual([429, 8]);
    });
  }
});
