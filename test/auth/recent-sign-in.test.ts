import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { RECENT_SIGN_IN_MS } from '../../src/modules/auth/recent-sign-in.js';
import { bearer, signUp, type Tokens } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

type CreationOptions = Parameters<SoftAuthenticator['createCredential']>[0];

/**
 * Adding or removing a credential needs a recent sign-in (docs/auth.md, "Changing
 * credentials"): a stolen access or refresh token must not let its holder link a credential of
 * their own, or remove the owner's, which would outlive the token. The table is the rule; each
 * operation runs against each way of holding a session.
 */
const svc = useTestService();
const { post, get } = svc;
const MIN = 60_000;

type Holder =
  | 'just signed in'
  | '9 minutes after'
  | '11 minutes after'
  | 'refreshed 11 minutes after'
  | 'signed in again';
const RULE: { holder: Holder; allowed: boolean }[] = [
  { holder: 'just signed in', allowed: true },
  { holder: '9 minutes after', allowed: true },
  { holder: '11 minutes after', allowed: false },
  { holder: 'refreshed 11 minutes after', allowed: false },
  { holder: 'signed in again', allowed: true },
];
const OPERATIONS = ['add a passkey', 'link a crypto wallet', 'remove a credential'] as const;

/** Adds a passkey with `tokens`; answers the two answers (options, verify). */
async function addPasskey(tokens: { access_token: string }) {
  const options = await get('/wallets/me/credentials/passkey/options', bearer(tokens));
  if (options.statusCode !== 200) return options;
  const credential = new SoftAuthenticator().createCredential(options.json<CreationOptions>());
  return post('/wallets/me/credentials/passkey', { credential }, bearer(tokens));
}

async function linkEoa(tokens: { access_token: string }) {
  const eoa = privateKeyToAccount(generatePrivateKey());
  const { message } = (await get(`/wallets/connect/eoa/challenge?address=${eoa.address}`)).json<{
    message: string;
  }>();
  return post(
    '/wallets/me/credentials/eoa',
    { message, signature: await eoa.signMessage({ message }) },
    bearer(tokens),
  );
}

/** Signs up, then holds the session as `holder` says; answers the tokens to use. */
async function holding(holder: Holder) {
  const acct = await signUp(svc);
  // A second credential, added while the sign-in is fresh, for the removal.
  expect((await addPasskey(acct)).statusCode).toBe(200);
  const { credentials } = (await get('/wallets/me/credentials', bearer(acct))).json<{
    credentials: { id: string; type: string }[];
  }>();
  const passkey = credentials.find((c) => c.type === 'passkey')!.id;
  let tokens: Tokens = acct;
  if (holder === '9 minutes after') svc.clock.advance(9 * MIN);
  if (holder === '11 minutes after') svc.clock.advance(11 * MIN);
  if (holder === 'refreshed 11 minutes after') {
    svc.clock.advance(11 * MIN);
    const res = await post('/auth/refresh-token', { refresh_token: acct.refresh_token });
    expect(res.statusCode, res.body).toBe(200);
    tokens = res.json<Tokens>();
  }
  if (holder === 'signed in again') {
    svc.clock.advance(11 * MIN);
    const res = await post('/auth/login', { email: acct.email, password: acct.password });
    expect(res.statusCode, res.body).toBe(200);
    tokens = res.json<Tokens>();
  }
  return { tokens, passkey };
}

describe('changing credentials needs a recent sign-in', () => {
  it('names the window as ten minutes', () => {
    expect(RECENT_SIGN_IN_MS).toBe(10 * MIN);
  });

  for (const operation of OPERATIONS) {
    for (const { holder, allowed } of RULE) {
      it(`${operation}, ${holder}: ${allowed ? 'allowed' : '403 code 7'}`, async () => {
        const { tokens, passkey } = await holding(holder);
        const res =
          operation === 'add a passkey'
            ? await addPasskey(tokens)
            : operation === 'link a crypto wallet'
              ? await linkEoa(tokens)
              : await svc.app.inject({
                  method: 'DELETE',
                  url: `/wallets/me/credentials/${passkey}`,
                  headers: bearer(tokens),
                });
        if (allowed) {
          expect(res.statusCode, res.body).toBe(200);
          return;
        }
        expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([403, 7]);
        expect(res.json<{ details: unknown }>().details).toEqual({
          reauthenticate: true,
          max_age_seconds: 600,
        });
        // Nothing changed: the wallet still has exactly its password and passkey.
        const after = (await get('/wallets/me/credentials', bearer(tokens))).json<{
          credentials: { type: string }[];
        }>();
        expect(after.credentials.map((c) => c.type).sort()).toEqual(['passkey', 'password']);
      });
    }
  }
});
