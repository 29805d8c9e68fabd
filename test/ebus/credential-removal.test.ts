import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { webauthnChallenge } from '../../src/modules/ebus/action-text.js';
import { createMember } from '../helpers/fixtures.js';
import { createTemplate, fund, snapshot, textOf, ACTION_FEE } from '../helpers/ebus.js';
import {
  bearer,
  sessionEnded,
  sessionIdOf,
  uniqueEmail,
  type Tokens,
} from '../helpers/identity.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * A credential removed with `DELETE /wallets/me/credentials/{id}` signs nothing afterwards,
 * on every instance of the service, however recently one of them checked it; and the
 * sessions it opened end. Two instances share one database.
 */
let a: TestService;
let b: TestService;

beforeAll(async () => {
  a = await startTestService();
  b = await startTestService({ databaseUrl: a.config.databaseUrl!, now: a.clock.now() });
});
afterAll(async () => {
  await b.stop();
  await a.stop();
});

type CreationOptions = Parameters<SoftAuthenticator['createCredential']>[0];
type Headers = Record<string, string>;

const post = (svc: TestService, url: string, headers: Headers, payload: unknown) =>
  svc.app.inject({ method: 'POST', url, headers, payload: payload as object });
const get = (svc: TestService, url: string, headers: Headers = {}) =>
  svc.app.inject({ method: 'GET', url, headers });
const remove = (svc: TestService, credentialId: string, headers: Headers) =>
  svc.app.inject({ method: 'DELETE', url: `/wallets/me/credentials/${credentialId}`, headers });

interface PasswordWallet {
  orgId: string;
  walletId: string;
  address: string;
  email: string;
  password: string;
  tokens: Tokens;
  headers: Headers;
  templateId: string;
}

/** A password wallet made through `POST /wallets` in a funded organization with a template. */
async function passwordWallet(): Promise<PasswordWallet> {
  const owner = await createMember(a, { role: 'owner' });
  await fund(a, owner.orgId, ACTION_FEE * 100n);
  const templateId = await createTemplate(a, owner.orgId);
  const email = uniqueEmail('signer');
  const password = 'correct horse battery';
  const res = await post(a, '/wallets', owner.headers, {
    organization_id: owner.orgId,
    email,
    password,
  });
  expect(res.statusCode, res.body).toBe(200);
  const tokens = res.json<Tokens & { id: string }>();
  return {
    orgId: owner.orgId,
    walletId: tokens.id,
    address: tokens.wallet.address,
    email,
    password,
    tokens,
    headers: bearer(tokens),
    templateId,
  };
}

async function siweMessage(svc: TestService, account: PrivateKeyAccount) {
  const c = await get(svc, `/wallets/connect/eoa/challenge?address=${account.address}`);
  const message = c.json<{ message: string }>().message;
  return { message, signature: await account.signMessage({ message }) };
}

/** Links a fresh crypto wallet to `w` through the route; answers it and its credential id. */
async function linkEoa(w: PasswordWallet) {
  const account = privateKeyToAccount(generatePrivateKey());
  const res = await post(
    a,
    '/wallets/me/credentials/eoa',
    w.headers,
    await siweMessage(a, account),
  );
  expect(res.statusCode, res.body).toBe(200);
  return { account, credentialId: res.json<{ id: string }>().id };
}

/** Adds a passkey to `w` through the route; answers its authenticator and credential id. */
async function addPasskey(w: PasswordWallet) {
  const options = await get(a, '/wallets/me/credentials/passkey/options', w.headers);
  const authenticator = new SoftAuthenticator({
    origin: a.config.webauthn.origins[0]!,
    rpId: a.config.webauthn.rpId,
  });
  const credential = authenticator.createCredential(options.json<CreationOptions>());
  const res = await post(a, '/wallets/me/credentials/passkey', w.headers, { credential });
  expect(res.statusCode, res.body).toBe(200);
  return { authenticator, credentialId: res.json<{ id: string }>().id };
}

function unsigned(w: PasswordWallet, nonce: number) {
  return {
    wallet: w.address,
    name: 'mint',
    params: { template_id: w.templateId },
    nonce,
    expires: new Date(a.clock.now().getTime() + 5 * 60_000).toISOString(),
  };
}

async function signedByEoa(w: PasswordWallet, account: PrivateKeyAccount, nonce: number) {
  const action = unsigned(w, nonce);
  const signature = await account.signMessage({ message: textOf(a, w.orgId, action) });
  return { action, signature: { type: 'eoa' as const, signature } };
}

function signedByPasskey(w: PasswordWallet, authenticator: SoftAuthenticator, nonce: number) {
  const action = unsigned(w, nonce);
  const challenge = webauthnChallenge(textOf(a, w.orgId, action));
  return {
    action,
    signature: { type: 'webauthn' as const, credential: authenticator.getAssertion({ challenge }) },
  };
}

const execute = (svc: TestService, w: PasswordWallet, body: unknown) =>
  post(svc, '/ebus/execute', w.headers, body);

/** Sends `body` to `svc`, expects 401 code 16, and checks that nothing moved. */
async function expectRefused(svc: TestService, w: PasswordWallet, body: unknown) {
  const before = await snapshot(a, w.orgId, w.walletId);
  const res = await execute(svc, w, body);
  expect(res.statusCode, res.body).toBe(401);
  expect(res.json()).toMatchObject({ code: 16 });
  expect(res.json().message).toMatch(/signature/);
  expect(await snapshot(a, w.orgId, w.walletId)).toEqual(before);
}

describe('a removed credential signs no action', () => {
  it('refuses an action signed by a linked crypto wallet once it has been removed', async () => {
    const w = await passwordWallet();
    const { account, credentialId } = await linkEoa(w);
    const first = await execute(a, w, await signedByEoa(w, account, 0));
    expect(first.statusCode, first.body).toBe(200);

    expect((await remove(a, credentialId, w.headers)).statusCode).toBe(200);
    await expectRefused(a, w, await signedByEoa(w, account, 1));
    // In a batch too, item by item.
    const batch = await post(a, '/ebus/actions/batch', w.headers, {
      actions: [await signedByEoa(w, account, 1)],
    });
    expect(batch.statusCode, batch.body).toBe(200);
    expect(batch.json().results[0]).toMatchObject({ status: 'refused', error: { code: 16 } });
  });

  it('refuses an action signed by a second passkey once it has been removed; the first still signs', async () => {
    const w = await passwordWallet();
    const firstKey = await addPasskey(w);
    const secondKey = await addPasskey(w);
    const signed = await execute(a, w, signedByPasskey(w, secondKey.authenticator, 0));
    expect(signed.statusCode, signed.body).toBe(200);

    expect((await remove(a, secondKey.credentialId, w.headers)).statusCode).toBe(200);
    await expectRefused(a, w, signedByPasskey(w, secondKey.authenticator, 1));
    const kept = await execute(a, w, signedByPasskey(w, firstKey.authenticator, 1));
    expect(kept.statusCode, kept.body).toBe(200);
  });

  it('refuses on a second instance that had just accepted the removed crypto wallet', async () => {
    const w = await passwordWallet();
    const { account, credentialId } = await linkEoa(w);
    // b checks the crypto wallet and remembers it; the removal happens on a.
    const accepted = await execute(b, w, await signedByEoa(w, account, 0));
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect((await remove(a, credentialId, w.headers)).statusCode).toBe(200);
    await expectRefused(b, w, await signedByEoa(w, account, 1));
  });

  it('refuses on a second instance a passkey removed on the first', async () => {
    const w = await passwordWallet();
    await addPasskey(w);
    const key = await addPasskey(w);
    const accepted = await execute(b, w, signedByPasskey(w, key.authenticator, 0));
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect((await remove(a, key.credentialId, w.headers)).statusCode).toBe(200);
    await expectRefused(b, w, signedByPasskey(w, key.authenticator, 1));
  });

  it('accepts the crypto wallet again once it is linked again', async () => {
    const w = await passwordWallet();
    const { account, credentialId } = await linkEoa(w);
    expect((await execute(b, w, await signedByEoa(w, account, 0))).statusCode).toBe(200);
    expect((await remove(a, credentialId, w.headers)).statusCode).toBe(200);
    const relinked = await post(
      a,
      '/wallets/me/credentials/eoa',
      w.headers,
      await siweMessage(a, account),
    );
    expect(relinked.statusCode, relinked.body).toBe(200);
    const res = await execute(b, w, await signedByEoa(w, account, 1));
    expect(res.statusCode, res.body).toBe(200);
  });

  it("refuses another wallet's removal request and keeps the credential signing", async () => {
    const w = await passwordWallet();
    const other = await passwordWallet();
    const { account, credentialId } = await linkEoa(w);
    const res = await remove(a, credentialId, other.headers);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 5 });
    const signed = await execute(a, w, await signedByEoa(w, account, 0));
    expect(signed.statusCode, signed.body).toBe(200);
  });
});

describe('the sessions a removed credential opened', () => {
  async function sessionOf(res: { statusCode: number; body: string; json<T>(): T }) {
    expect(res.statusCode, res.body).toBe(200);
    const tokens = res.json<Tokens>();
    return { tokens, headers: bearer(tokens), id: sessionIdOf(tokens.access_token) };
  }

  it('end with it, an organization switch made from them too; the others keep working', async () => {
    const w = await passwordWallet();
    const { account, credentialId } = await linkEoa(w);
    const viaEoa = await sessionOf(
      await post(a, '/wallets/connect/eoa', {}, await siweMessage(a, account)),
    );
    const viaPassword = await sessionOf(
      await post(a, '/auth/login', {}, { email: w.email, password: w.password }),
    );
    // A second organization to switch to: the switched session was opened by the EOA too.
    const second = await createMember(a, { role: 'owner' });
    await a.container.db.execute(sql`INSERT INTO members
        (id, organization_id, wallet_id, role, status, created_at, updated_at)
      VALUES (${newId('member')}, ${second.orgId}, ${w.walletId}, 'member', 'active',
        ${a.clock.now()}, ${a.clock.now()})`);
    const switched = await sessionOf(
      await post(a, '/organizations/switch', viaEoa.headers, { organization_id: second.orgId }),
    );

    expect((await remove(a, credentialId, viaPassword.headers)).statusCode).toBe(200);
    for (const s of [viaEoa, switched]) {
      expect(await sessionEnded(a, s.id)).toBe(true);
      expect((await get(a, '/wallets/me', s.headers)).statusCode).toBe(401);
      const refresh = await post(
        a,
        '/auth/refresh-token',
        {},
        { refresh_token: s.tokens.refresh_token },
      );
      expect(refresh.statusCode).toBe(401);
    }
    // The switch replaced the EOA's session; the removal ended the one that replaced it.
    const reason = async (id: string) =>
      (
        await a.container.db.execute<{ ended_reason: string }>(
          sql`SELECT ended_reason FROM sessions WHERE id = ${id}`,
        )
      ).rows[0]!.ended_reason;
    expect(await reason(viaEoa.id)).toBe('switched');
    expect(await reason(switched.id)).toBe('credential_removed');
    for (const s of [viaPassword, { headers: w.headers }]) {
      expect((await get(a, '/wallets/me', s.headers)).statusCode).toBe(200);
    }
  });

  it('end with a removed passkey, but the session that removes it keeps working', async () => {
    const w = await passwordWallet();
    const key = await addPasskey(w);
    const login = async () => {
      const options = await get(a, '/wallets/connect/passkey/login/options');
      const credential = key.authenticator.getAssertion(
        options.json<Parameters<SoftAuthenticator['getAssertion']>[0]>(),
      );
      return sessionOf(await post(a, '/wallets/connect/passkey/login/verify', {}, { credential }));
    };
    const one = await login();
    const two = await login();
    expect((await remove(a, key.credentialId, one.headers)).statusCode).toBe(200);
    expect(await sessionEnded(a, two.id)).toBe(true);
    expect((await get(a, '/wallets/me', two.headers)).statusCode).toBe(401);
    expect(await sessionEnded(a, one.id)).toBe(false);
    expect((await get(a, '/wallets/me', one.headers)).statusCode).toBe(200);
  });

  it('are not touched when the removal is refused', async () => {
    const w = await passwordWallet();
    const password = (await get(a, '/wallets/me/credentials', w.headers)).json<{
      credentials: { id: string; type: string }[];
    }>().credentials[0]!;
    const other = await sessionOf(
      await post(a, '/auth/login', {}, { email: w.email, password: w.password }),
    );
    const res = await remove(a, password.id, w.headers);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 9 });
    expect(await sessionEnded(a, other.id)).toBe(false);
  });
});
