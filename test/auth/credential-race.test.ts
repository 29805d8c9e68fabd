import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { bearer, signUp, uniqueEmail, type Tokens } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import { connect, started, waitsOrDone } from '../helpers/locks.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

type CreationOptions = Parameters<SoftAuthenticator['createCredential']>[0];

/**
 * Two requests adding the same credential at once (a passkey's credential id, a crypto
 * wallet's address, a Google account) both find it absent, and the second's insert meets the
 * unique index `credentials_external`. Adding it to a wallet is answered 409 code 6, as if it
 * had come second, never 500. A first sign-in with it (a crypto wallet's, Google's) signs in
 * to the wallet the other request linked it to, as a sign-in that came second would
 * (docs/auth.md, "First sign-ins at once"). Made deterministic: the test's own transaction
 * inserts the credential first (the other request) and commits only once the route's insert
 * waits for it. Each way a credential is added by a route of its own.
 */
const CLIENT_ID = 'ons-credential-race.apps.googleusercontent.com';
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

interface Race {
  /** The credential's type and external id, as the route would store them. */
  type: 'passkey' | 'eoa' | 'google';
  externalId: string;
  /** A sign-in: it signs in to the wallet the other request linked, instead of a 409. */
  signsIn?: true;
  /** Sends the request that adds it. */
  send: () => Promise<{ statusCode: number; body: string; json: <T>() => T }>;
}

async function eoaMessage() {
  const eoa = privateKeyToAccount(generatePrivateKey());
  const { message } = (await get(`/wallets/connect/eoa/challenge?address=${eoa.address}`)).json<{
    message: string;
  }>();
  return {
    externalId: eoa.address.toLowerCase(),
    body: { message, signature: await eoa.signMessage({ message }) },
  };
}

const ROUTES: Record<string, () => Promise<Race>> = {
  'POST /wallets/me/credentials/eoa (link a crypto wallet)': async () => {
    const acct = await signUp(svc);
    const { externalId, body } = await eoaMessage();
    return {
      type: 'eoa',
      externalId,
      send: () => post('/wallets/me/credentials/eoa', body, bearer(acct)),
    };
  },
  'POST /wallets/connect/eoa (a new crypto wallet signs in)': async () => {
    const { externalId, body } = await eoaMessage();
    return {
      type: 'eoa',
      externalId,
      signsIn: true,
      send: () => post('/wallets/connect/eoa', body),
    };
  },
  'POST /auth/provider/google (a new Google account signs in)': async () => {
    const sub = `race-${newId('credential')}`;
    const now = Math.floor(svc.clock.now().getTime() / 1000);
    const idToken = await new SignJWT({ email: uniqueEmail('race'), email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'race', typ: 'JWT' })
      .setIssuer('https://accounts.google.com')
      .setAudience(CLIENT_ID)
      .setSubject(sub)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(googleKey);
    return {
      type: 'google',
      externalId: sub,
      signsIn: true,
      send: () => post('/auth/provider/google', { id_token: idToken }),
    };
  },
  'POST /wallets/me/credentials/passkey (add a passkey)': async () => {
    const acct = await signUp(svc);
    const options = await get('/wallets/me/credentials/passkey/options', bearer(acct));
    const credential = new SoftAuthenticator().createCredential(options.json<CreationOptions>());
    return {
      type: 'passkey',
      externalId: credential.id,
      send: () => post('/wallets/me/credentials/passkey', { credential }, bearer(acct)),
    };
  },
  'POST /wallets/connect/passkey/register/verify (sign up with a passkey)': async () => {
    const options = await get('/wallets/connect/passkey/register/options');
    const credential = new SoftAuthenticator().createCredential(options.json<CreationOptions>());
    return {
      type: 'passkey',
      externalId: credential.id,
      send: () => post('/wallets/connect/passkey/register/verify', { credential }),
    };
  },
};

describe('a credential added twice at once', () => {
  for (const [route, prepare] of Object.entries(ROUTES)) {
    it(`answers the second 409 code 6 (a sign-in: signs it in), never 500: ${route}`, async () => {
      const race = await prepare();
      const other: Tokens = await signUp(svc);
      const first = await connect(svc);
      const probe = await connect(svc);
      try {
        // The other request: its insert is made, not yet committed.
        await first.query('BEGIN');
        await first.query(
          `INSERT INTO credentials (id, wallet_id, type, label, external_id, created_at)
           VALUES ($1, $2, $3, 'the other request', $4, now())`,
          [newId('credential'), other.wallet.id, race.type, race.externalId],
        );
        const second = started(race.send());
        // The route found no such credential and waits on the index for the other insert.
        const waited = await waitsOrDone(probe, '^INSERT INTO credentials', second);
        expect(waited, 'the route did not reach its insert').not.toBeNull();
        await first.query('COMMIT');
        const res = await second;
        if (race.signsIn) {
          expect(res.statusCode, res.body).toBe(200);
          const tokens = res.json<Tokens>();
          expect(tokens.wallet.id).toBe(other.wallet.id);
          const me = await get('/wallets/me', bearer(tokens));
          expect([me.statusCode, me.json<{ id: string }>().id]).toEqual([200, other.wallet.id]);
        } else {
          expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([409, 6]);
        }
      } finally {
        await first.end();
        await probe.end();
      }
    });
  }
});
