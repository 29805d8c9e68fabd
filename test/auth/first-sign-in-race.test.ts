import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  lastCode,
  sessionIdOf,
  signUp,
  uniqueEmail,
  type Tokens,
} from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';

/**
 * First sign-ins of one identity at once (docs/auth.md, "The four ways in"): with no wallet
 * linked to it yet, every request finds none and makes or links one; the unique indexes let
 * one win. Each of the others must sign in to the wallet that won, as if it had come after:
 * all answer 200, one wallet, one credential, and as many live sessions as requests.
 */
const CLIENT_ID = 'ons-race-client.apps.googleusercontent.com';
let jwksServer: Server;
let googleKey: CryptoKey;
let jwksUrl = '';

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  googleKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'race', alg: 'RS256', use: 'sig' };
  jwksServer = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/certs`;
});
afterAll(async () => {
  await new Promise((resolve) => jwksServer.close(resolve));
});

const svc = useTestService(() => ({
  env: { GOOGLE_JWKS_URL: jwksUrl, GOOGLE_CLIENT_IDS: CLIENT_ID },
}));
const { get, post } = svc;

/** Requests at once per round, and rounds per row (each round a new identity). */
const AT_ONCE = 5;
const ROUNDS = 3;

/** A Google ID token of its own (its `jti`) for this account. */
async function idToken(sub: string, email: string): Promise<string> {
  const now = Math.floor(svc.clock.now().getTime() / 1000);
  return new SignJWT({ email, email_verified: true })
    .setProtectedHeader({ alg: 'RS256', kid: 'race', typ: 'JWT' })
    .setIssuer('https://accounts.google.com')
    .setAudience(CLIENT_ID)
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(Math.random().toString(36).slice(2))
    .sign(googleKey);
}

/** A standalone account that proved `email` with a code (it holds the email). */
async function holderOf(email: string): Promise<string> {
  const acct = await signUp(svc, { email });
  expect((await post('/auth/verification-code', {}, bearer(acct))).statusCode).toBe(200);
  const res = await post('/auth/verify', { code: await lastCode(svc, email) }, bearer(acct));
  expect(res.statusCode, res.body).toBe(200);
  return acct.wallet.id;
}

interface Round {
  /** The credential the sign-ins link (its type and external id, as stored). */
  type: 'google' | 'eoa';
  externalId: string;
  /** The wallet they must land on, when one exists before them. */
  wallet?: string;
  /** How many wallets there are for the identity afterwards (the SQL's one parameter). */
  wallets: ReturnType<typeof sql>;
  /** The requests, each with its own token or signed message. */
  requests: (() => Promise<{ statusCode: number; body: string; json: <T>() => T }>)[];
}

const ROWS: Record<string, () => Promise<Round>> = {
  'Google, no wallet yet: one new wallet holds the email': async () => {
    const sub = `race-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail('race');
    const tokens = await Promise.all(Array.from({ length: AT_ONCE }, () => idToken(sub, email)));
    return {
      type: 'google',
      externalId: sub,
      wallets: sql`SELECT count(*)::int AS n FROM wallets WHERE email = ${email}`,
      requests: tokens.map((t) => () => post('/auth/provider/google', { id_token: t })),
    };
  },
  'Google, a wallet that proved the email: linked to it once': async () => {
    const sub = `race-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail('race');
    const wallet = await holderOf(email);
    const tokens = await Promise.all(Array.from({ length: AT_ONCE }, () => idToken(sub, email)));
    return {
      type: 'google',
      externalId: sub,
      wallet,
      wallets: sql`SELECT count(*)::int AS n FROM wallets WHERE email = ${email}`,
      requests: tokens.map((t) => () => post('/auth/provider/google', { id_token: t })),
    };
  },
  'crypto wallet (SIWE), no wallet yet: one new wallet at its address': async () => {
    const eoa = privateKeyToAccount(generatePrivateKey());
    const address = eoa.address.toLowerCase();
    const bodies = [];
    for (let i = 0; i < AT_ONCE; i++) {
      const res = await get(`/wallets/connect/eoa/challenge?address=${eoa.address}`);
      const { message } = res.json<{ message: string }>();
      bodies.push({ message, signature: await eoa.signMessage({ message }) });
    }
    return {
      type: 'eoa',
      externalId: address,
      wallets: sql`SELECT count(*)::int AS n FROM wallets WHERE address = ${address}`,
      requests: bodies.map((b) => () => post('/wallets/connect/eoa', b)),
    };
  },
};

describe(`${AT_ONCE} first sign-ins of one identity at once`, () => {
  for (const [row, prepare] of Object.entries(ROWS)) {
    it(`all sign in to one wallet: ${row}`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const r = await prepare();
        const answers = await Promise.all(r.requests.map((send) => send()));
        expect(
          answers.map((a) => a.statusCode),
          answers.map((a) => a.body).join('\n'),
        ).toEqual(Array<number>(AT_ONCE).fill(200));
        const tokens = answers.map((a) => a.json<Tokens>());
        const wallets = new Set(tokens.map((t) => t.wallet.id));
        expect(wallets.size).toBe(1);
        const [wallet] = [...wallets];
        if (r.wallet !== undefined) expect(wallet).toBe(r.wallet);
        // Every session is its own and works.
        expect(new Set(tokens.map((t) => sessionIdOf(t.access_token))).size).toBe(AT_ONCE);
        for (const t of tokens) {
          const me = await get('/wallets/me', bearer(t));
          expect(me.statusCode, me.body).toBe(200);
          expect(me.json<{ id: string }>().id).toBe(wallet);
        }
        // Nothing of the requests that lost is left: one wallet, one credential.
        const db = svc.container.db;
        const { rows } = await db.execute<{ n: number }>(r.wallets);
        expect(rows[0]!.n).toBe(1);
        const creds = await db.execute<{ wallet_id: string }>(
          sql`SELECT wallet_id FROM credentials
              WHERE type = ${r.type} AND external_id = ${r.externalId}`,
        );
        expect(creds.rows).toEqual([{ wallet_id: wallet }]);
      }
    });
  }
});
