import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { permissionsOfRole } from '../../src/lib/permissions.js';
import { RECENT_SIGN_IN_MS } from '../../src/modules/auth/recent-sign-in.js';
import { readOutbox } from '../../src/modules/notify/repo.js';
import { createApiKey, crudOf } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { bearer, lastCode, signUp, uniqueEmail, type Tokens } from '../helpers/identity.js';
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

/**
 * A change that commits is told to every address the wallet holds (docs/auth.md, "Changing
 * credentials"), so an owner sees a thief's passkey or crypto wallet arrive. Each operation
 * against an account that confirmed its email and one that did not; and a refused change
 * tells nothing.
 */
describe('credential changes are told to the addresses the wallet holds', () => {
  const KIND = {
    'add a passkey': 'passkey-added',
    'link a crypto wallet': 'eoa-linked',
    'remove a credential': 'credential-removed',
  } as const;
  const noticesSent = () => svc.container.identity.accounts.notices.idle();
  const kindsTo = async (to: string) =>
    (await readOutbox(svc.container.db, to, 50)).map((m) => m.kind);

  async function account(confirmed: boolean) {
    const acct = await signUp(svc);
    if (confirmed) {
      expect((await post('/auth/verification-code', {}, bearer(acct))).statusCode).toBe(200);
      const code = await lastCode(svc, acct.email);
      expect((await post('/auth/verify', { code }, bearer(acct))).statusCode).toBe(200);
    }
    return acct;
  }

  async function change(operation: (typeof OPERATIONS)[number], tokens: Tokens) {
    if (operation === 'add a passkey') return addPasskey(tokens);
    if (operation === 'link a crypto wallet') return linkEoa(tokens);
    // A second credential to remove, added while the sign-in is fresh.
    expect((await linkEoa(tokens)).statusCode).toBe(200);
    const { credentials } = (await get('/wallets/me/credentials', bearer(tokens))).json<{
      credentials: { id: string; type: string; label: string }[];
    }>();
    const eoa = credentials.find((c) => c.type === 'eoa')!.id;
    return svc.app.inject({
      method: 'DELETE',
      url: `/wallets/me/credentials/${eoa}`,
      headers: bearer(tokens),
    });
  }

  for (const operation of OPERATIONS) {
    for (const confirmed of [true, false]) {
      const told = confirmed ? `tells the address (${KIND[operation]})` : 'tells no one';
      it(`${operation}, email ${confirmed ? 'confirmed' : 'not confirmed'}: ${told}`, async () => {
        const acct = await account(confirmed);
        const res = await change(operation, acct);
        expect(res.statusCode, res.body).toBe(200);
        await noticesSent();
        const kinds = (await kindsTo(acct.email)).filter((k) => k !== 'verification');
        // Newest first; a removal's setup linked the crypto wallet it removes.
        const setup = operation === 'remove a credential' ? ['eoa-linked'] : [];
        expect(kinds).toEqual(confirmed ? [KIND[operation], ...setup] : []);
      });
    }
  }

  it('a change refused for want of a recent sign-in tells no one', async () => {
    const acct = await account(true);
    svc.clock.advance(11 * MIN);
    for (const operation of ['add a passkey', 'link a crypto wallet'] as const) {
      const res = await change(operation, acct);
      expect(res.statusCode, res.body).toBe(403);
    }
    await noticesSent();
    expect((await kindsTo(acct.email)).filter((k) => k !== 'verification')).toEqual([]);
  });
});

/**
 * Power that outlives the token needs a recent sign-in too (docs/auth.md, "Changing
 * credentials"): an API key (it lasts up to a year and survives a password reset or a
 * sign-out), and the admin or owner role given by an invitation or a role change (its holder
 * mints keys and makes others admin); so does any invitation (a member mints and acts:
 * test/auth/recent-sign-in-footholds.test.ts has the others). A demotion stays open to any
 * live session. Each
 * operation against each way of holding a session; the refusal is the one credential changes
 * get.
 */
describe('minting lasting power needs a recent sign-in', () => {
  const GRANTS = [
    { operation: 'create an API key', guarded: true },
    { operation: 'invite an admin', guarded: true },
    { operation: 'invite an owner', guarded: true },
    { operation: 'make a member admin', guarded: true },
    { operation: 'make a member owner', guarded: true },
    { operation: 'invite a member', guarded: true },
    { operation: 'make an admin a viewer', guarded: false },
  ] as const;
  type Operation = (typeof GRANTS)[number]['operation'];

  /** An organization's owner, holding its session as `holder` says; answers its headers. */
  async function ownerHolding(holder: Holder) {
    const owner = await createMember(svc, { role: 'owner' });
    let headers = owner.headers;
    if (holder === '9 minutes after') svc.clock.advance(9 * MIN);
    if (holder === '11 minutes after') svc.clock.advance(11 * MIN);
    if (holder === 'refreshed 11 minutes after') {
      svc.clock.advance(11 * MIN);
      const res = await post('/auth/refresh-token', { refresh_token: owner.refreshToken });
      expect(res.statusCode, res.body).toBe(200);
      headers = bearer(res.json<Tokens>());
    }
    if (holder === 'signed in again') {
      svc.clock.advance(11 * MIN);
      const db = svc.container.db;
      const tokens = await svc.container.sessions.issue(db, {
        walletId: owner.walletId,
        orgId: owner.orgId,
        device: 'test',
      });
      headers = bearer(tokens);
    }
    return { owner, headers };
  }

  const keysOf = async (orgId: string) =>
    (
      await svc.container.db.execute<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = ${orgId}`,
      )
    ).rows[0]!.n;
  const membersOf = async (orgId: string) =>
    (
      await svc.container.db.execute<{ id: string; role: string; status: string }>(
        sql`SELECT id, role, status FROM members WHERE organization_id = ${orgId} ORDER BY id`,
      )
    ).rows;

  /** Runs `operation` as `owner` with `headers`; the answer. */
  async function run(operation: Operation, owner: TestMember, headers: Record<string, string>) {
    const membersUrl = `/organizations/${owner.orgId}/members`;
    if (operation === 'create an API key') {
      return post('/api-keys', { name: 'k', permissions: crudOf(['objects.read']) }, headers);
    }
    if (operation.startsWith('invite')) {
      const role = operation.split(' ').pop()!;
      return post(membersUrl, { email: uniqueEmail('invitee'), role }, headers);
    }
    const [from, to] =
      operation === 'make an admin a viewer'
        ? ['admin', 'viewer']
        : ['member', operation.split(' ').pop()!];
    const target = await createMember(svc, { orgId: owner.orgId, role: from as 'admin' });
    return svc.app.inject({
      method: 'PATCH',
      url: `${membersUrl}/${target.memberId}`,
      headers,
      payload: { role: to },
    });
  }

  for (const { operation, guarded } of GRANTS) {
    for (const { holder, allowed: recent } of RULE) {
      const allowed = recent || !guarded;
      it(`${operation}, ${holder}: ${allowed ? 'allowed' : '403 code 7'}`, async () => {
        const { owner, headers } = await ownerHolding(holder);
        const before = { keys: await keysOf(owner.orgId), members: await membersOf(owner.orgId) };
        const res = await run(operation, owner, headers);
        if (allowed) {
          expect(res.statusCode, res.body).toBe(200);
          return;
        }
        expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([403, 7]);
        expect(res.json<{ details: unknown }>().details).toEqual({
          reauthenticate: true,
          max_age_seconds: 600,
        });
        // Nothing changed: no key, no invitation, no role (the target made for a role change
        // is the only new member, with the role it had).
        expect(await keysOf(owner.orgId)).toBe(before.keys);
        const after = await membersOf(owner.orgId);
        const added = after.filter((m) => !before.members.some((b) => b.id === m.id));
        expect(added.map((m) => [m.role, m.status])).toEqual(
          operation.startsWith('make') ? [['member', 'active']] : [],
        );
      });
    }
  }

  it('leaves an API key as it was: it invites an admin within its permissions, and makes no key', async () => {
    const owner = await createMember(svc, { role: 'owner' });
    const key = await createApiKey(svc, owner, [...permissionsOfRole('admin')]);
    svc.clock.advance(11 * MIN);
    const invited = await post(
      `/organizations/${owner.orgId}/members`,
      { email: uniqueEmail('by-key'), role: 'admin' },
      key.headers,
    );
    expect(invited.statusCode, invited.body).toBe(200);
    const minted = await post(
      '/api-keys',
      { name: 'k', permissions: crudOf(['objects.read']) },
      key.headers,
    );
    expect([minted.statusCode, minted.json<{ code: number }>().code]).toEqual([401, 16]);
  });
});
