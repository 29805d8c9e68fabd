import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type CryptoKey } from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../helpers/fixtures.js';
import { bearer, expectNoSecrets, signUp, uniqueEmail, type Tokens } from '../helpers/identity.js';
import { startTestService, type TestService } from '../helpers/service.js';

const CLIENT_ID = 'ons-test-client.apps.googleusercontent.com';
let svc: TestService;
let jwksServer: Server;
let googleKey: CryptoKey;
let googleJwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  googleKey = pair.privateKey;
  googleJwk = {
    ...(await exportJWK(pair.publicKey)),
    kid: 'google-test',
    alg: 'RS256',
    use: 'sig',
  };
  jwksServer = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [googleJwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  const port = (jwksServer.address() as AddressInfo).port;
  svc = await startTestService({
    env: { GOOGLE_JWKS_URL: `http://127.0.0.1:${port}/certs`, GOOGLE_CLIENT_IDS: CLIENT_ID },
  });
});
afterAll(async () => {
  await svc.stop();
  await new Promise((resolve) => jwksServer.close(resolve));
});

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'POST', url, payload: payload as object, headers });
const get = (url: string) => svc.app.inject({ method: 'GET', url });

interface Challenge {
  message: string;
  nonce: string;
  expires_at: string;
}

async function challengeFor(address: string): Promise<Challenge> {
  const res = await get(`/wallets/connect/eoa/challenge?address=${address}`);
  expect(res.statusCode).toBe(200);
  return res.json<Challenge>();
}

describe('crypto wallet sign-in (SIWE)', () => {
  it('answers an EIP-4361 message for our domain with a nonce and a short expiry', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const c = await challengeFor(account.address.toLowerCase());
    expect(c.message).toContain('localhost:8080 wants you to sign in with your Ethereum account:');
    expect(c.message).toContain(account.address);
    expect(c.message).toContain(`Nonce: ${c.nonce}`);
    expect(c.message).toContain(`Expiration Time: ${c.expires_at}`);
    const ttl = Date.parse(c.expires_at) - svc.clock.now().getTime();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000);
  });

  it('creates a wallet whose address is the EOA, then returns the same wallet', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    let c = await challengeFor(account.address);
    const first = await post('/wallets/connect/eoa', {
      message: c.message,
      signature: await account.signMessage({ message: c.message }),
    });
    expect(first.statusCode).toBe(200);
    const tokens = first.json<Tokens>();
    expect(tokens.wallet.address).toBe(account.address.toLowerCase());
    expect(tokens.wallet.organization_id).toBeNull();
    expectNoSecrets(first.body);
    c = await challengeFor(account.address);
    const again = await post('/wallets/connect/eoa', {
      message: c.message,
      signature: await account.signMessage({ message: c.message }),
    });
    expect(again.json<Tokens>().wallet.id).toBe(tokens.wallet.id);
    // The EOA that is the wallet's address cannot be removed.
    const creds = await svc.app.inject({
      method: 'GET',
      url: '/wallets/me/credentials',
      headers: bearer(tokens),
    });
    const eoa = creds.json<{ credentials: { id: string; type: string }[] }>().credentials[0]!;
    expect(eoa.type).toBe('eoa');
    const del = await svc.app.inject({
      method: 'DELETE',
      url: `/wallets/me/credentials/${eoa.id}`,
      headers: bearer(tokens),
    });
    expect(del.statusCode).toBe(400);
    expect(del.json()).toMatchObject({ code: 9 });
  });

  it('joins an organization given at sign-in where self sign-up is allowed, else 403 / 404', async () => {
    const open = await createOrganization(svc, { allowSelfSignup: true });
    const closed = await createOrganization(svc, { allowSelfSignup: false });
    const account = privateKeyToAccount(generatePrivateKey());
    const attempt = async (organization_id: string) => {
      const c = await challengeFor(account.address);
      return post('/wallets/connect/eoa', {
        message: c.message,
        signature: await account.signMessage({ message: c.message }),
        organization_id,
      });
    };
    const ok = await attempt(open);
    expect(ok.statusCode).toBe(200);
    expect(ok.json<Tokens>().wallet.organization_id).toBe(open);
    expect((await attempt(closed)).statusCode).toBe(403);
    expect((await attempt('org_01JZZZZZZZZZZZZZZZZZZZZZZZ')).statusCode).toBe(404);
  });

  it('refuses a signature from another key', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const thief = privateKeyToAccount(generatePrivateKey());
    const c = await challengeFor(account.address);
    const res = await post('/wallets/connect/eoa', {
      message: c.message,
      signature: await thief.signMessage({ message: c.message }),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('refuses a reused nonce', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const c = await challengeFor(account.address);
    const body = {
      message: c.message,
      signature: await account.signMessage({ message: c.message }),
    };
    expect((await post('/wallets/connect/eoa', body)).statusCode).toBe(200);
    const replay = await post('/wallets/connect/eoa', body);
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ code: 16 });
  });

  it('refuses an expired message', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const c = await challengeFor(account.address);
    const signature = await account.signMessage({ message: c.message });
    svc.clock.advance(5 * 60_000 + 1_000);
    const res = await post('/wallets/connect/eoa', { message: c.message, signature });
    expect(res.statusCode).toBe(401);
  });

  it('refuses a message for another domain, even with our nonce', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const c = await challengeFor(account.address);
    const message = createSiweMessage({
      address: account.address,
      chainId: 1,
      domain: 'evil.example',
      uri: 'https://evil.example',
      version: '1',
      nonce: c.nonce,
      issuedAt: svc.clock.now(),
      expirationTime: new Date(c.expires_at),
    });
    const res = await post('/wallets/connect/eoa', {
      message,
      signature: await account.signMessage({ message }),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('refuses a nonce we never issued, and a nonce issued for another address', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const c = await challengeFor(other.address);
    const make = (nonce: string) =>
      createSiweMessage({
        address: account.address,
        chainId: 1,
        domain: 'localhost:8080',
        uri: 'http://localhost:8080',
        version: '1',
        nonce,
        issuedAt: svc.clock.now(),
        expirationTime: new Date(svc.clock.now().getTime() + 60_000),
      });
    for (const nonce of ['abcdef0123456789abcdef0123456789', c.nonce]) {
      const message = make(nonce);
      const res = await post('/wallets/connect/eoa', {
        message,
        signature: await account.signMessage({ message }),
      });
      expect(res.statusCode).toBe(401);
    }
  });

  it('refuses bad input with 400 code 3', async () => {
    for (const q of [
      '',
      '?address=0x12',
      '?address=not-an-address',
      `?address=0x${'g'.repeat(40)}`,
    ]) {
      const res = await get(`/wallets/connect/eoa/challenge${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json()).toMatchObject({ code: 3 });
    }
    for (const body of [
      {},
      { message: 'hello' },
      { message: 'hello', signature: 'nothex' },
      { message: 'x'.repeat(4097), signature: `0x${'1'.repeat(130)}` },
      { message: 'hello', signature: `0x${'1'.repeat(130)}`, extra: true },
    ]) {
      const res = await post('/wallets/connect/eoa', body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 3 });
    }
  });

  it('refuses garbage that passes the schema with 401 code 16', async () => {
    const res = await post('/wallets/connect/eoa', {
      message: 'hello',
      signature: `0x${'1'.repeat(130)}`,
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /auth/provider/google', () => {
  async function idToken(
    claims: Record<string, unknown> = {},
    opts: { expiresIn?: number; key?: CryptoKey } = {},
  ) {
    const nowSec = Math.floor(svc.clock.now().getTime() / 1000);
    return new SignJWT({ email: 'g@example.test', email_verified: true, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'google-test', typ: 'JWT' })
      .setIssuer('https://accounts.google.com')
      .setAudience(CLIENT_ID)
      .setSubject(
        (claims.sub as string | undefined) ?? `sub-${Math.random().toString(36).slice(2)}`,
      )
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + (opts.expiresIn ?? 3600))
      .setJti(Math.random().toString(36).slice(2)) // each of Google's tokens is its own
      .sign(opts.key ?? googleKey);
  }

  it('a token signs in once: the same token again is refused until it expires', async () => {
    const open = await createOrganization(svc, { allowSelfSignup: true });
    const token = await idToken({ email: uniqueEmail('google') });
    const first = await post('/auth/provider/google', { id_token: token });
    expect(first.statusCode, first.body).toBe(200);
    // Again, alone and with an organization, and two at once: never a second session.
    const again = await Promise.all([
      post('/auth/provider/google', { id_token: token }),
      post('/auth/provider/google', { id_token: token, organization_id: open }),
    ]);
    for (const res of again) {
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json()).toMatchObject({
        code: 16,
        message: expect.stringMatching(/used already/),
      });
    }
    // Nor the same token spelled otherwise: its signature part decodes loosely, and only what
    // the signature covers names the token.
    const [head, body, sig] = token.split('.') as [string, string, string];
    const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const lastBit = b64[b64.indexOf(sig.at(-1)!) ^ 1]!;
    for (const spelled of [
      `${head}.${body}.${sig.slice(0, 5)} ${sig.slice(5)}`,
      `${head}.${body}.${sig.slice(0, 5)}\n${sig.slice(5)}`,
      `${head}.${body}.${sig.slice(0, -1)}${lastBit}`,
      `${head}.${body}.${sig}==`,
    ]) {
      const res = await post('/auth/provider/google', { id_token: spelled });
      expect(res.statusCode, res.body).toBe(401);
    }
    // A sign-in that failed did not spend its token: one that could not join is tried again.
    const other = await idToken({ email: uniqueEmail('google') });
    const closed = await createOrganization(svc);
    const refused = await post('/auth/provider/google', {
      id_token: other,
      organization_id: closed,
    });
    expect(refused.statusCode).not.toBe(200);
    const retried = await post('/auth/provider/google', { id_token: other });
    expect(retried.statusCode, retried.body).toBe(200);
  });

  it('creates a wallet with the verified email, then returns it', async () => {
    const email = uniqueEmail('google');
    const token = await idToken({ email, sub: 'google-sub-1' });
    const res = await post('/auth/provider/google', { id_token: token });
    expect(res.statusCode).toBe(200);
    const tokens = res.json<Tokens>();
    const me = await svc.app.inject({ method: 'GET', url: '/wallets/me', headers: bearer(tokens) });
    expect(me.json()).toMatchObject({ email, email_confirmed: true });
    expect(me.json<{ credentials: { type: string }[] }>().credentials.map((c) => c.type)).toEqual([
      'google',
    ]);
    const again = await post('/auth/provider/google', {
      id_token: await idToken({ email, sub: 'google-sub-1' }),
    });
    expect(again.json<Tokens>().wallet.id).toBe(tokens.wallet.id);
  });

  it('joins an open organization given with the token', async () => {
    const open = await createOrganization(svc, { allowSelfSignup: true });
    const res = await post('/auth/provider/google', {
      id_token: await idToken({ email: uniqueEmail('google') }),
      organization_id: open,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json<Tokens>().wallet.organization_id).toBe(open);
  });

  // Issue 14 changed this from 409 code 6: an unconfirmed account does not hold its email, so
  // it must not keep the email's owner out either.
  it('does not take over an account whose email nobody confirmed: a new wallet holds the email', async () => {
    const acct = await signUp(svc);
    const res = await post('/auth/provider/google', {
      id_token: await idToken({ email: acct.email }),
    });
    expect(res.statusCode).toBe(200);
    const tokens = res.json<Tokens>();
    expect(tokens.wallet.id).not.toBe(acct.wallet.id);
    const me = await svc.app.inject({ method: 'GET', url: '/wallets/me', headers: bearer(tokens) });
    expect(me.json()).toMatchObject({ email: acct.email, email_confirmed: true });
    const theirs = await svc.app.inject({
      method: 'GET',
      url: '/wallets/me',
      headers: bearer(acct),
    });
    expect(theirs.json()).toMatchObject({ email: acct.email, email_confirmed: false });
    expect(
      theirs.json<{ credentials: { type: string }[] }>().credentials.map((c) => c.type),
    ).toEqual(['password']);
  });

  it('refuses an expired token', async () => {
    const token = await idToken({ email: uniqueEmail('google') }, { expiresIn: 60 });
    svc.clock.advance(120_000);
    const res = await post('/auth/provider/google', { id_token: token });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('refuses a token for another audience', async () => {
    const nowSec = Math.floor(svc.clock.now().getTime() / 1000);
    const token = await new SignJWT({ email: uniqueEmail('google'), email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'google-test' })
      .setIssuer('https://accounts.google.com')
      .setAudience('someone-else.apps.googleusercontent.com')
      .setSubject('sub-aud')
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + 3600)
      .sign(googleKey);
    const res = await post('/auth/provider/google', { id_token: token });
    expect(res.statusCode).toBe(401);
  });

  it('refuses another issuer, an unverified email and a token signed with another key', async () => {
    const nowSec = Math.floor(svc.clock.now().getTime() / 1000);
    const wrongIssuer = await new SignJWT({ email: uniqueEmail('g'), email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'google-test' })
      .setIssuer('https://evil.example')
      .setAudience(CLIENT_ID)
      .setSubject('sub-iss')
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + 3600)
      .sign(googleKey);
    const otherKey = (await generateKeyPair('RS256')).privateKey;
    for (const token of [
      wrongIssuer,
      await idToken({ email: uniqueEmail('g'), email_verified: false }),
      await idToken({ email: uniqueEmail('g') }, { key: otherKey }),
    ]) {
      const res = await post('/auth/provider/google', { id_token: token });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 16 });
    }
  });

  it('refuses alg confusion: HS256 keyed with the public key, and alg none', async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const nowSec = Math.floor(svc.clock.now().getTime() / 1000);
    const payload = b64({
      iss: 'https://accounts.google.com',
      aud: CLIENT_ID,
      sub: 'sub-confused',
      email: uniqueEmail('g'),
      email_verified: true,
      iat: nowSec,
      exp: nowSec + 3600,
    });
    const hsHeader = b64({ alg: 'HS256', kid: 'google-test', typ: 'JWT' });
    const sig = createHmac('sha256', JSON.stringify(googleJwk))
      .update(`${hsHeader}.${payload}`)
      .digest('base64url');
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    for (const token of [`${hsHeader}.${payload}.${sig}`, none]) {
      const res = await post('/auth/provider/google', { id_token: token });
      expect(res.statusCode).toBe(401);
    }
  });

  it('refuses bad input with 400 code 3', async () => {
    for (const body of [
      {},
      { id_token: { t: 1 } },
      { id_token: 'x'.repeat(8193) },
      { id_token: 'x', extra: 1 },
    ]) {
      const res = await post('/auth/provider/google', body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 3 });
    }
  });
});
