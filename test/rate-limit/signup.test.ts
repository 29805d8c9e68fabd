import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, createOrganization, type TestMember } from '../helpers/fixtures.js';
import { uniqueEmail } from '../helpers/identity.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Every route that can make a wallet counts in the `signup` group (30 a minute, 5 a second,
 * per client address; docs/api.md, "Rate limits"); the routes that make one only on a first
 * sign-in count only the sign-ins that make one. Invitations count per organization.
 */
const CLIENT_ID = 'ons-test-client.apps.googleusercontent.com';
let svc: TestService;
let jwks: Server;
let googleKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  googleKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'google-test', alg: 'RS256' };
  jwks = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const port = (jwks.address() as AddressInfo).port;
  svc = await startTestService({
    env: {
      RATE_LIMIT_ENABLED: 'true',
      GOOGLE_JWKS_URL: `http://127.0.0.1:${port}/certs`,
      GOOGLE_CLIENT_IDS: CLIENT_ID,
    },
  });
});
afterAll(async () => {
  await svc.stop();
  await new Promise((resolve) => jwks.close(resolve));
});

const post = (url: string, payload: object, remoteAddress: string, headers = {}) =>
  svc.app.inject({ method: 'POST', url, payload, remoteAddress, headers });

/**
 * Moves the service's clock (which the limiter reads, and which stands still while the calls
 * run) into a second of its own, with the second before it unused (the 5-a-second rule).
 */
function freshSecond(): void {
  const now = svc.clock.now().getTime();
  svc.clock.set(new Date((Math.floor(now / 1000) + 2) * 1000 + 20));
}

async function eoaSignIn(account: PrivateKeyAccount, addr: string) {
  const c = await svc.app.inject({
    method: 'GET',
    url: `/wallets/connect/eoa/challenge?address=${account.address}`,
    remoteAddress: addr,
  });
  const { message } = c.json<{ message: string }>();
  return post(
    '/wallets/connect/eoa',
    { message, signature: await account.signMessage({ message }) },
    addr,
  );
}

async function googleToken(sub: string, email: string) {
  const nowSec = Math.floor(svc.clock.now().getTime() / 1000);
  return new SignJWT({ email, email_verified: true })
    .setProtectedHeader({ alg: 'RS256', kid: 'google-test', typ: 'JWT' })
    .setIssuer('https://accounts.google.com')
    .setAudience(CLIENT_ID)
    .setSubject(sub)
    .setIssuedAt(nowSec)
    .setExpirationTime(nowSec + 3600)
    .setJti(Math.random().toString(36).slice(2))
    .sign(googleKey);
}

interface Row {
  /** A request that makes a wallet (or, for a route that always does, is counted as one). */
  create: (addr: string) => Promise<LightMyRequestResponse>;
  /** For a route that makes a wallet only on a first sign-in: a sign-in of one that exists. */
  existing?: () => Promise<(addr: string) => Promise<LightMyRequestResponse>>;
}

let n = 0;
const rows: Record<string, Row> = {
  // Always counted, refused (400) or not: an empty body makes nothing, and hashes nothing.
  'POST /organizations/wallets': { create: (a) => post('/organizations/wallets', {}, a) },
  'POST /wallets': { create: (a) => post('/wallets', {}, a) },
  'POST /wallets/connect/passkey/register/verify': {
    create: (a) => post('/wallets/connect/passkey/register/verify', {}, a),
  },
  'POST /wallets/connect/eoa': {
    create: (a) => eoaSignIn(privateKeyToAccount(generatePrivateKey()), a),
    existing: async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      expect((await eoaSignIn(account, '198.51.100.200')).statusCode).toBe(200);
      return (a) => eoaSignIn(account, a);
    },
  },
  'POST /auth/provider/google': {
    create: async (a) =>
      post(
        '/auth/provider/google',
        { id_token: await googleToken(`sub-new-${(n += 1)}`, uniqueEmail('g')) },
        a,
      ),
    existing: async () => {
      const sub = `sub-existing-${Date.now()}`;
      const email = uniqueEmail('g-existing');
      const token = await googleToken(sub, email);
      expect(
        (await post('/auth/provider/google', { id_token: token }, '198.51.100.201')).statusCode,
      ).toBe(200);
      return async (a) =>
        post('/auth/provider/google', { id_token: await googleToken(sub, email) }, a);
    },
  },
};

describe('the signup group: every route that makes a wallet', () => {
  let i = 0;
  for (const [name, row] of Object.entries(rows)) {
    i += 1;
    const addr = `192.0.2.${100 + i}`;
    it(`${name}: 30 wallets a minute from an address, the 31st 429 code 8${row.existing ? '; sign-ins of an existing wallet uncounted' : ''}`, async () => {
      const signIn = row.existing ? await row.existing() : null;
      // A minute long enough for what follows (six seconds of five, then one).
      const now = svc.clock.now().getTime();
      if (now % 60_000 > 40_000) svc.clock.set(new Date(now - (now % 60_000) + 60_000 + 50));
      if (signIn) {
        // More sign-ins in one second than the group's burst: none counted as a sign-up.
        freshSecond();
        for (let k = 0; k < 7; k++) {
          const res = await signIn(addr);
          expect(res.statusCode, res.body).toBe(200);
        }
      }
      for (let batch = 0; batch < 6; batch++) {
        freshSecond();
        for (let k = 0; k < 5; k++) {
          const res = await row.create(addr);
          expect(res.statusCode, `creation ${batch * 5 + k + 1}: ${res.body}`).not.toBe(429);
          if (signIn) expect(res.statusCode, res.body).toBe(200);
        }
      }
      freshSecond();
      const refused = await row.create(addr);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ code: 8 });
      expect(refused.headers['x-ratelimit-limit']).toBe('30');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Another address has its own allowance.
      expect((await row.create(`198.18.1.${i}`)).statusCode).not.toBe(429);
      if (signIn) {
        // A sign-in of a wallet that exists is no sign-up: not refused with the sign-ups.
        const res = await signIn(addr);
        expect(res.statusCode, res.body).toBe(200);
      }
    });
  }
});

describe('the invitations group: per organization', () => {
  const invite = (by: TestMember, orgId = by.orgId) =>
    svc.app.inject({
      method: 'POST',
      url: `/organizations/${orgId}/members`,
      headers: by.headers,
      payload: { email: uniqueEmail('inv'), role: 'member' },
    });

  it("an organization's members share 5 a second; a caller from elsewhere spends none of it", async () => {
    const orgId = await createOrganization(svc);
    const a = await createMember(svc, { orgId, role: 'admin' });
    const b = await createMember(svc, { orgId, role: 'admin' });
    const outsider = await createMember(svc);
    // Every call below in this one second of the service's clock.
    freshSecond();
    const outside: number[] = [];
    for (let k = 0; k < 5; k++) outside.push((await invite(outsider, orgId)).statusCode);
    const statuses: number[] = [];
    for (const by of [a, a, a, b, b, b]) statuses.push((await invite(by)).statusCode);
    const last = await invite(b);
    expect(outside.every((s) => s !== 200 && s !== 429)).toBe(true);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses[5]).toBe(429);
    expect(last.statusCode).toBe(429);
    expect(last.headers['x-ratelimit-limit']).toBe('30');
  });
});
