import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createMember, createOrganization, type TestMember } from '../helpers/fixtures.js';
import {
  bearer,
  lastCode,
  outboxCount,
  signUp,
  uniqueEmail,
  type Tokens,
} from '../helpers/identity.js';
import { memberSteps } from '../helpers/members.js';
import { lastMessageTo } from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

// Issue 14: an address is trusted only once a code proved it. Someone who signs up with
// another person's address gets an account like any other, learns nothing, and gets nothing
// of the address: no codes, no invitations, no hold on it.

const svc = useTestService();

const { invite, confirm, listMembers } = memberSteps(() => svc);

const { post, get } = svc;

type Account = Tokens & { email: string; password: string };
type CreationOptions = Parameters<SoftAuthenticator['createCredential']>[0];
type RequestOptions = Parameters<SoftAuthenticator['getAssertion']>[0];

/** Confirms the account's address with the code sent to it. */
async function confirmAddress(acct: Tokens, address: string) {
  expect((await post('/auth/verification-code', {}, bearer(acct))).statusCode).toBe(200);
  const res = await post('/auth/verify', { code: await lastCode(svc, address) }, bearer(acct));
  expect(res.statusCode, res.body).toBe(200);
}

async function confirmedAccount(email = uniqueEmail('owner')): Promise<Account> {
  const acct = await signUp(svc, { email, password: 'the owner password' });
  await confirmAddress(acct, email);
  return acct;
}

function signIn(email: string, password: string, organizationId?: string) {
  return post('/auth/login', {
    email,
    password,
    ...(organizationId ? { organization_id: organizationId } : {}),
  });
}

async function me(tokens: Tokens) {
  const res = await get('/wallets/me', bearer(tokens));
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    id: string;
    email: string | null;
    email_confirmed: boolean;
    roles: string[];
    credentials: { type: string }[];
  }>();
}

const noticesSent = () => svc.container.identity.accounts.notices.idle();

async function addPasskey(acct: Tokens): Promise<SoftAuthenticator> {
  const auth = new SoftAuthenticator();
  const options = await get('/wallets/me/credentials/passkey/options', bearer(acct));
  const credential = auth.createCredential(options.json<CreationOptions>());
  const res = await post('/wallets/me/credentials/passkey', { credential }, bearer(acct));
  expect(res.statusCode, res.body).toBe(200);
  return auth;
}

async function passkeySignIn(auth: SoftAuthenticator) {
  const options = (await get('/wallets/connect/passkey/login/options')).json<RequestOptions>();
  return post('/wallets/connect/passkey/login/verify', { credential: auth.getAssertion(options) });
}

const keys = (o: object) => Object.keys(o).sort();

/** The roles a password sign-in into `orgId` gets, or the refusal's status. */
async function joinedAs(email: string, password: string, orgId: string) {
  const res = await signIn(email, password, orgId);
  return res.statusCode === 200 ? (await me(res.json<Tokens>())).roles : res.statusCode;
}

describe('a sign-up with an address another account holds', () => {
  it('answers exactly as for a new address, and tells the holder instead of the caller', async () => {
    const holder = await confirmedAccount();
    const fresh = await post('/organizations/wallets', {
      email: uniqueEmail('fresh'),
      password: 'a long password',
    });
    const taken = await post('/organizations/wallets', {
      email: holder.email,
      password: 'the attacker password',
    });
    expect(taken.statusCode).toBe(fresh.statusCode);
    const [a, b] = [fresh.json<Tokens>(), taken.json<Tokens>()];
    expect(keys(b)).toEqual(keys(a));
    expect(keys(b.wallet)).toEqual(keys(a.wallet));
    expect(b.wallet.id).not.toBe(holder.wallet.id);
    const [meFresh, meTaken] = [await me(a), await me(b)];
    expect(keys(meTaken)).toEqual(keys(meFresh));
    expect(meTaken).toMatchObject({ email: holder.email, email_confirmed: false });
    expect(meFresh).toMatchObject({ email_confirmed: false });

    await noticesSent();
    const notice = await lastMessageTo(svc, holder.email);
    expect(notice).toMatchObject({ kind: 'sign-up-attempt' });
    expect(notice!.body).not.toContain('the attacker password');
    expect(await outboxCount(svc, meFresh.email!)).toBe(0);
    // The holder keeps the address, its password and its confirmation.
    expect(await me(holder)).toMatchObject({ email: holder.email, email_confirmed: true });
    const back = await signIn(holder.email, holder.password);
    expect(back.json<Tokens>().wallet.id).toBe(holder.wallet.id);
  });

  it('signs the new wallet in with its own password, like any new account', async () => {
    const holder = await confirmedAccount();
    const taken = await signUp(svc, { email: holder.email, password: 'the attacker password' });
    const res = await signIn(holder.email, 'the attacker password');
    expect(res.statusCode).toBe(200);
    expect(res.json<Tokens>().wallet.id).toBe(taken.wallet.id);
  });

  it('gives the new wallet no code for the address: the same answer, a wrong code, the same limit', async () => {
    const holder = await confirmedAccount();
    const taken = await signUp(svc, { email: holder.email, password: 'the attacker password' });
    const ask = await post('/auth/verification-code', {}, bearer(taken));
    expect(ask.statusCode).toBe(200);
    expect(ask.json()).toEqual({});
    expect(await lastMessageTo(svc, holder.email)).toMatchObject({ kind: 'confirmation-attempt' });
    const { rows } = await svc.container.db.execute(
      sql`SELECT id FROM codes WHERE wallet_id = ${taken.wallet.id}`,
    );
    expect(rows).toEqual([]);
    const guess = await post('/auth/verify', { code: '123456' }, bearer(taken));
    expect(guess.statusCode).toBe(400);
    expect(guess.json()).toMatchObject({ code: 3 });
    for (let i = 0; i < 4; i++) {
      expect((await post('/auth/verification-code', {}, bearer(taken))).statusCode).toBe(200);
    }
    const limited = await post('/auth/verification-code', {}, bearer(taken));
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 8 });
    expect(await me(taken)).toMatchObject({ email_confirmed: false });
  });

  it('sends one-time sign-in and password reset codes for the address to its holder only', async () => {
    const holder = await confirmedAccount();
    await signUp(svc, { email: holder.email, password: 'the attacker password' });
    expect((await post('/auth/otp', { email: holder.email })).statusCode).toBe(200);
    const otp = await post('/auth/otp/verify', {
      email: holder.email,
      code: await lastCode(svc, holder.email),
    });
    expect(otp.json<Tokens>().wallet.id).toBe(holder.wallet.id);
    expect((await post('/auth/password-reset', { email: holder.email })).statusCode).toBe(200);
    const reset = await post('/auth/password-reset/confirm', {
      email: holder.email,
      code: await lastCode(svc, holder.email),
      password: 'a new owner password',
    });
    expect(reset.json<Tokens>().wallet.id).toBe(holder.wallet.id);
  });

  it('lets the owner confirm an address someone else named first, which the other never can', async () => {
    const email = uniqueEmail('victim');
    const first = await signUp(svc, { email, password: 'the attacker password' });
    const owner = await signUp(svc, { email, password: 'the owner password' });
    await confirmAddress(owner, email);
    expect(await me(owner)).toMatchObject({ email, email_confirmed: true });
    expect((await post('/auth/verification-code', {}, bearer(first))).statusCode).toBe(200);
    expect(await lastMessageTo(svc, email)).toMatchObject({ kind: 'confirmation-attempt' });
    expect(await me(first)).toMatchObject({ email_confirmed: false });
  });

  it('answers POST /wallets with a held address as for a new one, and the holder keeps it', async () => {
    const holder = await confirmedAccount();
    const org = await createOrganization(svc, { allowSelfSignup: true });
    const res = await post('/wallets', {
      organization_id: org,
      email: holder.email,
      password: 'the attacker password',
    });
    expect(res.statusCode).toBe(200);
    const created = res.json<Tokens & { id: string }>();
    expect(created.id).not.toBe(holder.wallet.id);
    expect(await me(created)).toMatchObject({ email_confirmed: false, roles: ['member'] });
    await noticesSent();
    expect(await lastMessageTo(svc, holder.email)).toMatchObject({ kind: 'sign-up-attempt' });
    expect(await me(holder)).toMatchObject({ email_confirmed: true });
  });

  it('treats a phone number the same way', async () => {
    const phone = '+14155550177';
    const holder = await signUp(svc, { phone_number: phone });
    await confirmAddress(holder, phone);
    const taken = await post('/organizations/wallets', {
      phone_number: phone,
      password: 'the attacker password',
    });
    expect(taken.statusCode).toBe(200);
    await noticesSent();
    expect(await lastMessageTo(svc, phone)).toMatchObject({ kind: 'sign-up-attempt' });
    expect(
      (await post('/auth/verification-code', {}, bearer(taken.json<Tokens>()))).statusCode,
    ).toBe(200);
    expect(await lastMessageTo(svc, phone)).toMatchObject({ kind: 'confirmation-attempt' });
  });
});

describe('invitations bind only to a wallet that proved the email', () => {
  async function memberOf(owner: TestMember, memberId: string) {
    return (await listMembers(owner)).members.find((m) => m.id === memberId);
  }

  it('attacker signs up first, then the invitation: the real person becomes the member, never the attacker', async () => {
    const owner = await createMember(svc);
    const email = uniqueEmail('victim');
    const attacker = await signUp(svc, { email, password: 'the attacker password' });
    const { id, token } = await invite(owner, email, 'admin');
    const opened = await confirm(owner.orgId, token, id);
    expect(opened.statusCode, opened.body).toBe(200);
    // Nobody can act as it yet: still `invited` (issue 32).
    expect(opened.json().member).toMatchObject({ status: 'invited', wallet_id: null });
    expect(await joinedAs(email, 'the attacker password', owner.orgId)).toBe(403);

    const victim = await signUp(svc, { email, password: 'the owner password' });
    await confirmAddress(victim, email);
    expect(await joinedAs(email, 'the owner password', owner.orgId)).toEqual(['admin']);
    expect(await memberOf(owner, id)).toMatchObject({ wallet_id: victim.wallet.id, email });
    expect(await joinedAs(email, 'the attacker password', owner.orgId)).toBe(403);
    expect(attacker.wallet.id).not.toBe(victim.wallet.id);
  });

  it('invitation first, then the attacker signs up: no one is the member until the real person confirms', async () => {
    const owner = await createMember(svc);
    const email = uniqueEmail('victim');
    const { id, token } = await invite(owner, email, 'admin');
    expect((await confirm(owner.orgId, token, id)).json().member).toMatchObject({
      wallet_id: null,
    });
    const attacker = await signUp(svc, { email, password: 'the attacker password' });
    expect(await joinedAs(email, 'the attacker password', owner.orgId)).toBe(403);
    expect((await memberOf(owner, id))?.wallet_id).toBeNull();

    const victim = await signUp(svc, { email, password: 'the owner password' });
    await confirmAddress(victim, email);
    expect(await joinedAs(email, 'the owner password', owner.orgId)).toEqual(['admin']);
    expect((await memberOf(owner, id))?.wallet_id).toBe(victim.wallet.id);
    expect(await joinedAs(email, 'the attacker password', owner.orgId)).toBe(403);
    expect(attacker.wallet.id).not.toBe(victim.wallet.id);
  });

  it('binds to the confirmed account when the link is opened, even if another names the email', async () => {
    const owner = await createMember(svc);
    const victim = await confirmedAccount();
    await signUp(svc, { email: victim.email, password: 'the attacker password' });
    const { id, token } = await invite(owner, victim.email, 'viewer');
    const opened = await confirm(owner.orgId, token, id);
    expect(opened.json().member).toMatchObject({ wallet_id: victim.wallet.id, status: 'active' });
    expect(await joinedAs(victim.email, victim.password, owner.orgId)).toEqual(['viewer']);
    expect(await joinedAs(victim.email, 'the attacker password', owner.orgId)).toBe(403);
  });

  it('does not make an unconfirmed account a member by opening the link; its code does', async () => {
    const owner = await createMember(svc);
    const person = await signUp(svc, { password: 'the owner password' });
    const { id, token } = await invite(owner, person.email);
    expect((await confirm(owner.orgId, token, id)).json().member).toMatchObject({
      wallet_id: null,
    });
    expect(await joinedAs(person.email, person.password, owner.orgId)).toBe(403);
    await confirmAddress(person, person.email);
    expect(await joinedAs(person.email, person.password, owner.orgId)).toEqual(['member']);
  });

  it('neither shows nor counts a member that only names an email', async () => {
    const org = await createOrganization(svc, { allowSelfSignup: true });
    const owner = await createMember(svc, { orgId: org });
    const email = uniqueEmail('victim');
    const attacker = await post('/wallets', {
      organization_id: org,
      email,
      password: 'the attacker password',
    });
    expect(attacker.statusCode).toBe(200);
    const listed = (await listMembers(owner)).members.find(
      (m) => m.wallet_id === attacker.json<{ id: string }>().id,
    );
    expect(listed).toMatchObject({ email: null, role: 'member' });
    await invite(owner, email, 'admin');
  });
});

describe('the first proof of an address by a code hands the wallet to its owner', () => {
  it('a password reset removes what the maker of the wallet set up: password, passkeys, sessions', async () => {
    const owner = await createMember(svc);
    const email = uniqueEmail('victim');
    const attacker = await signUp(svc, { email, password: 'the attacker password' });
    const attackerPasskey = await addPasskey(attacker);
    const { id, token } = await invite(owner, email, 'admin');
    await confirm(owner.orgId, token, id);

    await post('/auth/password-reset', { email });
    const reset = await post('/auth/password-reset/confirm', {
      email,
      code: await lastCode(svc, email),
      password: 'the owner password',
    });
    expect(reset.statusCode, reset.body).toBe(200);
    const victim = reset.json<Tokens>();
    expect(await me(victim)).toMatchObject({ email_confirmed: true, roles: [] });
    expect((await me(victim)).credentials.map((c) => c.type)).toEqual(['password']);
    expect(await joinedAs(email, 'the owner password', owner.orgId)).toEqual(['admin']);

    expect((await signIn(email, 'the attacker password')).statusCode).toBe(401);
    expect((await passkeySignIn(attackerPasskey)).statusCode).toBe(401);
    expect((await get('/wallets/me', bearer(attacker))).statusCode).toBe(401);
  });

  it('a one-time-code sign-in does the same, and the password goes too', async () => {
    const email = uniqueEmail('victim');
    const attacker = await signUp(svc, { email, password: 'the attacker password' });
    await post('/auth/otp', { email });
    const otp = await post('/auth/otp/verify', { email, code: await lastCode(svc, email) });
    expect(otp.statusCode, otp.body).toBe(200);
    const victim = otp.json<Tokens>();
    expect(await me(victim)).toMatchObject({ email_confirmed: true, credentials: [] });
    expect((await signIn(email, 'the attacker password')).statusCode).toBe(401);
    expect((await get('/wallets/me', bearer(attacker))).statusCode).toBe(401);
    expect((await get('/wallets/me', bearer(victim))).statusCode).toBe(200);
  });

  it('leaves a wallet that had already proved its address as it was', async () => {
    const holder = await confirmedAccount();
    const passkey = await addPasskey(holder);
    await post('/auth/otp', { email: holder.email });
    const otp = await post('/auth/otp/verify', {
      email: holder.email,
      code: await lastCode(svc, holder.email),
    });
    expect(otp.json<Tokens>().wallet.id).toBe(holder.wallet.id);
    expect((await signIn(holder.email, holder.password)).statusCode).toBe(200);
    expect((await passkeySignIn(passkey)).statusCode).toBe(200);
    expect((await get('/wallets/me', bearer(holder))).statusCode).toBe(200);
  });
});
