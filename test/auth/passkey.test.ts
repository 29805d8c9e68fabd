import { beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { createOrganization } from '../helpers/fixtures.js';
import {
  bearer,
  expectNoSecrets,
  pad,
  padCredential,
  signUp,
  type Tokens,
} from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import { SoftAuthenticator, type SoftOverrides } from '../support/soft-authenticator.js';

let openOrg: string;

const svc = useTestService();
beforeAll(async () => {
  openOrg = await createOrganization(svc, { allowSelfSignup: true });
});

const { post, get } = svc;

type CreationOptions = Parameters<SoftAuthenticator['createCredential']>[0];
type RequestOptions = Parameters<SoftAuthenticator['getAssertion']>[0];

async function registerPasskey(
  auth = new SoftAuthenticator(),
  orgId: string | null = openOrg,
  overrides: SoftOverrides = {},
) {
  const options = (await get('/wallets/connect/passkey/register/options')).json<CreationOptions>();
  const credential = auth.createCredential(options, overrides);
  const res = await post('/wallets/connect/passkey/register/verify', {
    credential,
    ...(orgId === null ? {} : { organization_id: orgId }),
  });
  return { auth, res, credential };
}

async function loginOptions() {
  return (await get('/wallets/connect/passkey/login/options')).json<RequestOptions>();
}

describe('GET /wallets/connect/passkey/register/options', () => {
  it('answers the registration options of docs/auth.md with their types and values', async () => {
    const res = await get('/wallets/connect/passkey/register/options');
    expect(res.statusCode).toBe(200);
    const o = res.json<Record<string, unknown>>();
    expect(typeof o.challenge).toBe('string');
    expect(o.rp).toEqual({ id: 'localhost', name: 'Object Network Service' });
    expect(o.user).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      displayName: expect.any(String),
    });
    expect(o.pubKeyCredParams).toEqual([
      { type: 'public-key', alg: -7 },
      { type: 'public-key', alg: -257 },
    ]);
    expect(o.authenticatorSelection).toMatchObject({
      residentKey: 'required',
      userVerification: 'required',
    });
    expect(Number.isInteger(o.timeout)).toBe(true);
  });

  it('gives a new challenge every time', async () => {
    const a = (await get('/wallets/connect/passkey/register/options')).json<CreationOptions>();
    const b = (await get('/wallets/connect/passkey/register/options')).json<CreationOptions>();
    expect(a.challenge).not.toBe(b.challenge);
  });
});

describe('GET /wallets/connect/organizations/{id}', () => {
  it('answers the name of an organization open to sign-up, and the same 404 for any other', async () => {
    const open = await get(`/wallets/connect/organizations/${openOrg}`);
    expect(open.statusCode, open.body).toBe(200);
    expect(open.json()).toEqual({ id: openOrg, name: expect.any(String) });
    const closed = await createOrganization(svc, { allowSelfSignup: false });
    const a = await get(`/wallets/connect/organizations/${closed}`);
    const b = await get('/wallets/connect/organizations/org_01JZZZZZZZZZZZZZZZZZZZZZZZ');
    expect([a.statusCode, a.json().code, b.statusCode]).toEqual([404, 5, 404]);
    expect(a.json().message).toBe(b.json().message);
    expect((await get('/wallets/connect/organizations/nope')).json().code).toBe(3);
  });
});

describe('POST /wallets/connect/passkey/register/verify', () => {
  it('creates a wallet in the organization as member and signs in', async () => {
    const { res } = await registerPasskey();
    expect(res.statusCode).toBe(200);
    const tokens = res.json<Tokens>();
    expect(tokens.wallet.organization_id).toBe(openOrg);
    expect(tokens.wallet.address).toMatch(/^0x[0-9a-f]{40}$/);
    const me = await get('/wallets/me', bearer(tokens));
    expect(me.json()).toMatchObject({ roles: ['member'], email: null });
    expect(me.json<{ credentials: { type: string }[] }>().credentials.map((c) => c.type)).toEqual([
      'passkey',
    ]);
    expectNoSecrets(res.body);
  });

  it('without an organization: a standalone wallet acting in none, as a password sign-up (issue 32)', async () => {
    const { res } = await registerPasskey(new SoftAuthenticator(), null);
    expect(res.statusCode, res.body).toBe(200);
    const tokens = res.json<Tokens>();
    expect(tokens.wallet.organization_id).toBeNull();
    const me = await get('/wallets/me', bearer(tokens));
    expect(me.json()).toMatchObject({ roles: [] });
    expectNoSecrets(res.body);
  });

  it('refuses an organization without self sign-up (403 code 7) and a missing one (404 code 5)', async () => {
    const closed = await createOrganization(svc, { allowSelfSignup: false });
    const refused = await registerPasskey(new SoftAuthenticator(), closed);
    expect(refused.res.statusCode).toBe(403);
    expect(refused.res.json()).toMatchObject({ code: 7 });
    const missing = await registerPasskey(
      new SoftAuthenticator(),
      'org_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    );
    expect(missing.res.statusCode).toBe(404);
    expect(missing.res.json()).toMatchObject({ code: 5 });
  });

  it('refuses a replayed registration: the challenge is single-use', async () => {
    const { res, credential } = await registerPasskey();
    expect(res.statusCode).toBe(200);
    const replay = await post('/wallets/connect/passkey/register/verify', {
      credential,
      organization_id: openOrg,
    });
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ code: 16 });
  });

  it.each<[string, SoftOverrides]>([
    ['a wrong origin', { origin: 'https://evil.example' }],
    ['a wrong RP id', { rpId: 'evil.example' }],
    ['a missing UV flag', { flags: 0x01 | 0x40 }],
    ['an unknown challenge', { challenge: Buffer.from('not ours').toString('base64url') }],
  ])('refuses %s with 401 code 16', async (_name, overrides) => {
    const { res } = await registerPasskey(new SoftAuthenticator(), openOrg, overrides);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('refuses an expired challenge', async () => {
    const auth = new SoftAuthenticator();
    const options = (
      await get('/wallets/connect/passkey/register/options')
    ).json<CreationOptions>();
    svc.clock.advance(5 * 60_000 + 1);
    const credential = auth.createCredential(options);
    const res = await post('/wallets/connect/passkey/register/verify', {
      credential,
      organization_id: openOrg,
    });
    expect(res.statusCode).toBe(401);
  });

  it.each([
    ['no credential', { organization_id: 'org_x' }],
    [
      'no organization',
      {
        credential: {
          id: 'a',
          rawId: 'a',
          type: 'public-key',
          response: {},
          clientExtensionResults: {},
        },
      },
    ],
    ['a mistyped credential', { credential: 'abc', organization_id: 'org_x' }],
    [
      'an oversize clientDataJSON',
      {
        organization_id: 'org_x',
        credential: {
          id: 'a',
          rawId: 'a',
          type: 'public-key',
          clientExtensionResults: {},
          response: { clientDataJSON: 'a'.repeat(5000), attestationObject: 'a' },
        },
      },
    ],
  ])('refuses %s with 400 code 3', async (_name, body) => {
    const res = await post('/wallets/connect/passkey/register/verify', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 3 });
  });
});

describe('passkey sign-in', () => {
  it('signs in with the discoverable credential and returns the same wallet', async () => {
    const { auth, res } = await registerPasskey();
    const wallet = res.json<Tokens>().wallet;
    const options = await loginOptions();
    expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    const credential = auth.getAssertion(options);
    const login = await post('/wallets/connect/passkey/login/verify', { credential });
    expect(login.statusCode).toBe(200);
    expect(login.json<Tokens>().wallet).toEqual(wallet);
  });

  it('refuses a replayed assertion', async () => {
    const { auth } = await registerPasskey();
    const credential = auth.getAssertion(await loginOptions());
    expect((await post('/wallets/connect/passkey/login/verify', { credential })).statusCode).toBe(
      200,
    );
    const replay = await post('/wallets/connect/passkey/login/verify', { credential });
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ code: 16 });
  });

  it('refuses an assertion whose counter went backwards (a cloned authenticator)', async () => {
    const { auth } = await registerPasskey();
    expect(
      (
        await post('/wallets/connect/passkey/login/verify', {
          credential: auth.getAssertion(await loginOptions()),
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await post('/wallets/connect/passkey/login/verify', {
          credential: auth.getAssertion(await loginOptions()),
        })
      ).statusCode,
    ).toBe(200);
    const cloned = auth.getAssertion(await loginOptions(), { signCount: 1 });
    expect(
      (await post('/wallets/connect/passkey/login/verify', { credential: cloned })).statusCode,
    ).toBe(401);
  });

  it.each<[string, SoftOverrides]>([
    ['a wrong origin', { origin: 'https://evil.example' }],
    ['a wrong RP id', { rpId: 'evil.example' }],
    ['a missing UV flag', { flags: 0x01 }],
    ['an unknown credential', { credentialId: Buffer.from('unknown').toString('base64url') }],
  ])('refuses %s with 401 code 16', async (_name, overrides) => {
    const { auth } = await registerPasskey();
    const credential = auth.getAssertion(await loginOptions(), overrides);
    const res = await post('/wallets/connect/passkey/login/verify', { credential });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 16 });
  });

  it('refuses a registration challenge used for sign-in', async () => {
    const { auth } = await registerPasskey();
    const reg = (await get('/wallets/connect/passkey/register/options')).json<CreationOptions>();
    const credential = auth.getAssertion({ challenge: reg.challenge, rpId: 'localhost' });
    expect((await post('/wallets/connect/passkey/login/verify', { credential })).statusCode).toBe(
      401,
    );
  });

  it('refuses bad input with 400 code 3', async () => {
    for (const body of [{}, { credential: 1 }, { credential: { id: 'x' } }]) {
      const res = await post('/wallets/connect/passkey/login/verify', body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 3 });
    }
  });
});

describe('credentials of the signed-in wallet', () => {
  it('adds a passkey, which then signs in to the same wallet', async () => {
    const acct = await signUp(svc);
    const options = await get('/wallets/me/credentials/passkey/options', bearer(acct));
    expect(options.statusCode).toBe(200);
    const auth = new SoftAuthenticator();
    const credential = auth.createCredential(options.json<CreationOptions>());
    const added = await post('/wallets/me/credentials/passkey', { credential }, bearer(acct));
    expect(added.statusCode).toBe(200);
    expect(added.json<{ id: string }>().id).toMatch(/^crd_/);
    const list = await get('/wallets/me/credentials', bearer(acct));
    expect(list.json<{ credentials: { type: string }[] }>().credentials.map((c) => c.type)).toEqual(
      ['password', 'passkey'],
    );
    const login = await post('/wallets/connect/passkey/login/verify', {
      credential: auth.getAssertion(await loginOptions()),
    });
    expect(login.json<Tokens>().wallet.id).toBe(acct.wallet.id);
  });

  it("refuses another wallet's passkey options challenge", async () => {
    const a = await signUp(svc);
    const b = await signUp(svc);
    const options = (
      await get('/wallets/me/credentials/passkey/options', bearer(a))
    ).json<CreationOptions>();
    const credential = new SoftAuthenticator().createCredential(options);
    const res = await post('/wallets/me/credentials/passkey', { credential }, bearer(b));
    expect(res.statusCode).toBe(401);
  });

  it('links an EOA, which then signs in to the same wallet; a second link elsewhere is 409 code 6', async () => {
    const acct = await signUp(svc);
    const eoa = privateKeyToAccount(generatePrivateKey());
    const challenge = async () =>
      (await get(`/wallets/connect/eoa/challenge?address=${eoa.address}`)).json<{
        message: string;
      }>().message;
    let message = await challenge();
    const linked = await post(
      '/wallets/me/credentials/eoa',
      { message, signature: await eoa.signMessage({ message }) },
      bearer(acct),
    );
    expect(linked.statusCode).toBe(200);
    message = await challenge();
    const signIn = await post('/wallets/connect/eoa', {
      message,
      signature: await eoa.signMessage({ message }),
    });
    expect(signIn.statusCode).toBe(200);
    expect(signIn.json<Tokens>().wallet).toMatchObject({
      id: acct.wallet.id,
      address: acct.wallet.address,
    });
    const other = await signUp(svc);
    message = await challenge();
    const again = await post(
      '/wallets/me/credentials/eoa',
      { message, signature: await eoa.signMessage({ message }) },
      bearer(other),
    );
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 6 });
  });

  it('removes a credential but refuses the last one with 400 code 9', async () => {
    const acct = await signUp(svc);
    const auth = new SoftAuthenticator();
    const options = (
      await get('/wallets/me/credentials/passkey/options', bearer(acct))
    ).json<CreationOptions>();
    const { id: passkeyId } = (
      await post(
        '/wallets/me/credentials/passkey',
        { credential: auth.createCredential(options) },
        bearer(acct),
      )
    ).json<{ id: string }>();
    const creds = (await get('/wallets/me/credentials', bearer(acct))).json<{
      credentials: { id: string; type: string }[];
    }>();
    const password = creds.credentials.find((c) => c.type === 'password')!;
    const del = await svc.app.inject({
      method: 'DELETE',
      url: `/wallets/me/credentials/${password.id}`,
      headers: bearer(acct),
    });
    expect(del.statusCode).toBe(200);
    expect(
      (await post('/auth/login', { email: acct.email, password: acct.password })).statusCode,
    ).toBe(401);
    const last = await svc.app.inject({
      method: 'DELETE',
      url: `/wallets/me/credentials/${passkeyId}`,
      headers: bearer(acct),
    });
    expect(last.statusCode).toBe(400);
    expect(last.json()).toMatchObject({ code: 9 });
  });

  it("answers 404 for another wallet's credential", async () => {
    const a = await signUp(svc);
    const b = await signUp(svc);
    const bCred = (await get('/wallets/me/credentials', bearer(b))).json<{
      credentials: { id: string }[];
    }>().credentials[0]!;
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `/wallets/me/credentials/${bCred.id}`,
      headers: bearer(a),
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 5 });
  });

  it('refuses every credential route without a credential (401 code 16)', async () => {
    for (const [method, url] of [
      ['GET', '/wallets/me/credentials'],
      ['GET', '/wallets/me/credentials/passkey/options'],
      ['POST', '/wallets/me/credentials/passkey'],
      ['POST', '/wallets/me/credentials/eoa'],
      ['DELETE', '/wallets/me/credentials/crd_x'],
    ] as const) {
      const res = await svc.app.inject({
        method,
        url,
        payload: method === 'POST' ? {} : undefined,
      });
      expect(res.statusCode, url).toBe(401);
    }
  });

  it('refuses bad link input with 400 code 3', async () => {
    const acct = await signUp(svc);
    for (const body of [
      {},
      { message: 'x' },
      { message: 'x', signature: '0x12' },
      { message: 'x'.repeat(5000), signature: `0x${'1'.repeat(130)}` },
    ]) {
      const res = await post('/wallets/me/credentials/eoa', body, bearer(acct));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 3 });
    }
    const pk = await post(
      '/wallets/me/credentials/passkey',
      { credential: { id: 1 } },
      bearer(acct),
    );
    expect(pk.statusCode).toBe(400);
  });
});

describe('padded base64url', () => {
  it('registers with a padded credential and signs in with a padded assertion', async () => {
    const auth = new SoftAuthenticator();
    const options = (
      await get('/wallets/connect/passkey/register/options')
    ).json<CreationOptions>();
    const sent = padCredential(auth.createCredential(options));
    expect(sent.id).toMatch(/=$/);
    const reg = await post('/wallets/connect/passkey/register/verify', {
      credential: sent,
      organization_id: openOrg,
    });
    expect(reg.statusCode, reg.body).toBe(200);
    const wallet = reg.json<Tokens>().wallet;
    const login = await post('/wallets/connect/passkey/login/verify', {
      credential: padCredential(auth.getAssertion(await loginOptions())),
    });
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json<Tokens>().wallet).toEqual(wallet);
    // The unpadded form of the same credential signs in to the same wallet.
    const bare = await post('/wallets/connect/passkey/login/verify', {
      credential: auth.getAssertion(await loginOptions()),
    });
    expect(bare.json<Tokens>().wallet).toEqual(wallet);
  });

  it('accepts an id padded while rawId is not', async () => {
    const { auth, res } = await registerPasskey();
    const credential = auth.getAssertion(await loginOptions());
    const login = await post('/wallets/connect/passkey/login/verify', {
      credential: { ...credential, id: pad(credential.id) },
    });
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json<Tokens>().wallet.id).toBe(res.json<Tokens>().wallet.id);
  });

  it('adds a passkey to the signed-in wallet whose id alone is padded', async () => {
    const acct = await signUp(svc);
    const auth = new SoftAuthenticator();
    const options = (
      await get('/wallets/me/credentials/passkey/options', bearer(acct))
    ).json<CreationOptions>();
    const credential = padCredential(auth.createCredential(options));
    const added = await post(
      '/wallets/me/credentials/passkey',
      { credential: { ...credential, rawId: credential.rawId.replace(/=+$/, '') } },
      bearer(acct),
    );
    expect(added.statusCode, added.body).toBe(200);
    const login = await post('/wallets/connect/passkey/login/verify', {
      credential: auth.getAssertion(await loginOptions()),
    });
    expect(login.json<Tokens>().wallet.id).toBe(acct.wallet.id);
  });

  it('refuses more padding than base64url can have, or padding inside, with 400 code 3', async () => {
    const { auth } = await registerPasskey();
    const credential = auth.getAssertion(await loginOptions());
    for (const bad of [
      { ...credential, id: `${credential.id}===` },
      { ...credential, rawId: `${credential.rawId.slice(0, 4)}=${credential.rawId.slice(4)}` },
      { ...credential, response: { ...credential.response, signature: '=abc' } },
    ]) {
      const res = await post('/wallets/connect/passkey/login/verify', { credential: bad });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 3 });
    }
  });
});
