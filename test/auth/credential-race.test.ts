import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { bearer, signUp, type Tokens } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import { connect, started, waitsOrDone } from '../helpers/locks.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

type CreationOptions = Parameters<SoftAuthenticator['createCredential']>[0];

/**
 * Two requests adding the same credential at once (a passkey's credential id, a crypto
 * wallet's address) both find it absent, and the second's insert meets the unique index
 * `credentials_external`: it is answered 409 code 6, as if it had come second, never 500.
 * Made deterministic: the test's own transaction inserts the credential first (the other
 * request) and commits only once the route's insert waits for it. Each way a credential is
 * added by a route of its own.
 */
const svc = useTestService();
const { get, post } = svc;

interface Race {
  /** The credential's type and external id, as the route would store them. */
  type: 'passkey' | 'eoa';
  externalId: string;
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
    return { type: 'eoa', externalId, send: () => post('/wallets/connect/eoa', body) };
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
    it(`answers the second 409 code 6, never 500: ${route}`, async () => {
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
        expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([409, 6]);
      } finally {
        await first.end();
        await probe.end();
      }
    });
  }
});
