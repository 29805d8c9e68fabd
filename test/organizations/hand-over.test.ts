import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routeTableOf } from '../../src/http/app.js';
import { permissionsOfRole } from '../../src/lib/permissions.js';
import { ADDRESS_PROOFS } from '../../src/modules/auth/code-flows.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createMember, createOrganization, type TestMember } from '../helpers/fixtures.js';
import {
  bearer,
  lastCode,
  sessionIdOf,
  signUp,
  uniqueEmail,
  type Tokens,
} from '../helpers/identity.js';
import { memberSteps } from '../helpers/members.js';
import { useTestService } from '../helpers/harness.js';

// Issue 27 item 4: when the first proof of an address hands a wallet to its owner, nothing
// the unproven holder set up stays: its keys answer 401, its memberships and the invitations
// of the organizations it founded end, and the owner lands in none of its organizations.
// Every way a code proves an address (ADDRESS_PROOFS) is run; the caches are read before the
// proof, so a 401 right after it shows this instance forgot them at once.

const svc = useTestService();

const { invite, confirm } = memberSteps(() => svc);

const inject = (
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string> = {},
  payload?: object,
) => svc.app.inject({ method, url, headers, payload });

type Channel = 'email' | 'sms';
let phones = 0;
const contactFor = (channel: Channel) => {
  phones += 1;
  return channel === 'email'
    ? { email: uniqueEmail('ceo') }
    : { phone_number: `+1415555${String(1000 + phones).padStart(4, '0')}` };
};
const addressOf = (c: { email?: string; phone_number?: string }) => (c.email ?? c.phone_number)!;

/** As the squatter: an organization, a full key, invitations, a membership elsewhere. */
async function squatterSetsUp(channel: Channel) {
  const contact = contactFor(channel);
  const password = 'the squatter password';
  const first = await signUp(svc, { ...contact, password });
  const created = await inject('POST', '/organizations', bearer(first), { name: 'Squatter Co' });
  expect(created.statusCode, created.body).toBe(200);
  const orgId = created.json<{ id: string }>().id;
  const switched = await inject('POST', '/organizations/switch', bearer(first), {
    organization_id: orgId,
  });
  expect(switched.statusCode, switched.body).toBe(200);
  const tokens = switched.json<Tokens>();
  const asOwner: TestMember = {
    orgId,
    walletId: tokens.wallet.id,
    memberId: '',
    address: tokens.wallet.address,
    email: contact.email ?? '',
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    sessionId: sessionIdOf(tokens.access_token),
    headers: bearer(tokens),
  };
  const key = await createApiKey(svc, asOwner, [...permissionsOfRole('owner')]);
  const accomplice = await invite(asOwner, uniqueEmail('accomplice'), 'admin');
  // An invitation to the owner's own address, opened: it would bind at the owner's proof.
  const bait = channel === 'email' ? await invite(asOwner, addressOf(contact), 'owner') : null;
  if (bait) expect((await confirm(orgId, bait.token, bait.id)).statusCode).toBe(200);
  // A membership of someone else's open organization.
  const open = await createOrganization(svc, { allowSelfSignup: true });
  const openOwner = await createMember(svc, { orgId: open });
  const joined = await inject(
    'POST',
    '/auth/login',
    {},
    { ...contact, password, organization_id: open },
  );
  expect(joined.statusCode, joined.body).toBe(200);
  // Prime this instance's caches: the key and the session are now remembered.
  expect((await inject('GET', `/organizations/${orgId}`, key.headers)).statusCode).toBe(200);
  expect((await inject('GET', '/wallets/me', bearer(tokens))).statusCode).toBe(200);
  return { contact, walletId: first.wallet.id, orgId, tokens, key, accomplice, open, openOwner };
}

type Setup = Awaited<ReturnType<typeof squatterSetsUp>>;

/** Each proof route, driven for the address of `s`; answers the tokens it signs in with. */
const proofs: Record<(typeof ADDRESS_PROOFS)[number]['route'], (s: Setup) => Promise<Tokens>> = {
  'POST /auth/otp/verify': async (s) => {
    expect((await inject('POST', '/auth/otp', {}, s.contact)).statusCode).toBe(200);
    const res = await inject(
      'POST',
      '/auth/otp/verify',
      {},
      {
        ...s.contact,
        code: await lastCode(svc, addressOf(s.contact)),
      },
    );
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Tokens>();
  },
  'POST /auth/password-reset/confirm': async (s) => {
    expect((await inject('POST', '/auth/password-reset', {}, s.contact)).statusCode).toBe(200);
    const res = await inject(
      'POST',
      '/auth/password-reset/confirm',
      {},
      {
        ...s.contact,
        code: await lastCode(svc, addressOf(s.contact)),
        password: 'the owner password',
      },
    );
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Tokens>();
  },
  // The signed-in wallet proves its own address: its maker is the address's owner.
  'POST /auth/verify': async (s) => {
    expect((await inject('POST', '/auth/verification-code', bearer(s.tokens))).statusCode).toBe(
      200,
    );
    const res = await inject('POST', '/auth/verify', bearer(s.tokens), {
      code: await lastCode(svc, addressOf(s.contact)),
    });
    expect(res.statusCode, res.body).toBe(200);
    return s.tokens;
  },
};

async function orgsOf(tokens: Tokens): Promise<string[]> {
  const res = await inject('GET', '/organizations', bearer(tokens));
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ organizations: { id: string }[] }>().organizations.map((o) => o.id);
}

async function membersOf(orgId: string) {
  const { rows } = await svc.container.db.execute<{
    id: string;
    wallet_id: string | null;
    status: string;
  }>(sql`SELECT id, wallet_id, status FROM members WHERE organization_id = ${orgId}`);
  return rows;
}

async function defaultOrgOf(walletId: string) {
  const { rows } = await svc.container.db.execute<{ default_org_id: string | null }>(
    sql`SELECT default_org_id FROM wallets WHERE id = ${walletId}`,
  );
  return rows[0]!.default_org_id;
}

describe('the first proof of an address, every way there is', () => {
  for (const proof of ADDRESS_PROOFS) {
    const name = `${proof.route} (${proof.channel})`;
    if (proof.handsOver) {
      it(`hands the wallet over with nothing of its maker left: ${name}`, async () => {
        const s = await squatterSetsUp(proof.channel);
        const owner = await proofs[proof.route](s);
        expect(owner.wallet.id).toBe(s.walletId);
        expect(owner.wallet.organization_id).toBeNull();

        // At once, on this instance: the key and the squatter's session are refused.
        const byKey = await inject('GET', `/organizations/${s.orgId}`, s.key.headers);
        expect(byKey.statusCode).toBe(401);
        expect(byKey.json()).toMatchObject({ code: 16 });
        expect((await inject('GET', '/wallets/me', bearer(s.tokens))).statusCode).toBe(401);

        // The owner is in no organization of the squatter's, and cannot enter one.
        expect(await orgsOf(owner)).toEqual([]);
        for (const orgId of [s.orgId, s.open]) {
          const sw = await inject('POST', '/organizations/switch', bearer(owner), {
            organization_id: orgId,
          });
          expect(sw.statusCode).toBe(403);
        }
        expect(await defaultOrgOf(s.walletId)).toBeNull();
        // The squatter's organization: every membership and invitation ended.
        expect((await membersOf(s.orgId)).map((m) => m.status)).toEqual(
          (await membersOf(s.orgId)).map(() => 'removed'),
        );
        const { rows: keys } = await svc.container.db.execute<{ deleted_at: Date | null }>(
          sql`SELECT deleted_at FROM api_keys WHERE id = ${s.key.id}`,
        );
        expect(keys[0]!.deleted_at).not.toBeNull();
        // Someone else's open organization keeps its owner; the squatter's membership ended.
        const open = await membersOf(s.open);
        expect(open.find((m) => m.wallet_id === s.openOwner.walletId)?.status).toBe('active');
        expect(open.find((m) => m.wallet_id === s.walletId)?.status).toBe('removed');

        // What the owner now creates is theirs alone.
        const mine = await inject('POST', '/organizations', bearer(owner), { name: 'Mine' });
        expect(mine.statusCode).toBe(200);
        const mineId = mine.json<{ id: string }>().id;
        expect(await orgsOf(owner)).toEqual([mineId]);
        expect((await inject('GET', `/organizations/${mineId}`, s.key.headers)).statusCode).toBe(
          401,
        );
      });
    } else {
      it(`leaves the wallet as it was when its own holder proves the address: ${name}`, async () => {
        const s = await squatterSetsUp(proof.channel);
        await proofs[proof.route](s);
        expect((await inject('GET', `/organizations/${s.orgId}`, s.key.headers)).statusCode).toBe(
          200,
        );
        expect((await inject('GET', '/wallets/me', bearer(s.tokens))).statusCode).toBe(200);
        expect((await orgsOf(s.tokens)).sort()).toEqual([s.orgId, s.open].sort());
        const pending = (await membersOf(s.orgId)).find((m) => m.id === s.accomplice.id);
        expect(pending?.status).toBe('invited');
      });
    }
  }

  it('leaves the owner the invitations accepted for the address in organizations the squatter did not found', async () => {
    const s = await squatterSetsUp('email');
    const other = await createMember(svc);
    const real = await invite(other, addressOf(s.contact), 'viewer');
    expect((await confirm(other.orgId, real.token, real.id)).statusCode).toBe(200);
    const owner = await proofs['POST /auth/otp/verify'](s);
    expect(await orgsOf(owner)).toEqual([other.orgId]);
  });
});

describe('the list of address proofs is complete', () => {
  // Every POST route that signs in or up, or sends or takes a code, is either a proof listed
  // in ADDRESS_PROOFS or says here why it proves no address.
  const notProofs: Record<string, string> = {
    'POST /auth/login': 'a password proves no address',
    'POST /auth/refresh-token': 'continues a session',
    'POST /auth/logout': 'ends a session',
    'POST /auth/verification-code': 'sends a code',
    'POST /auth/password-reset': 'sends a code',
    'POST /auth/otp': 'sends a code',
    'POST /auth/provider/google':
      "Google's verified email signs in its holder or makes a new wallet holding it, never another's",
    'POST /organizations/wallets': 'a sign-up names an address without proving it',
    'POST /wallets': 'a sign-up names an address without proving it',
    'POST /wallets/connect/passkey/register/options': 'a passkey proves no address',
    'POST /wallets/connect/passkey/register/verify': 'a passkey proves no address',
    'POST /wallets/connect/passkey/login/options': 'a passkey proves no address',
    'POST /wallets/connect/passkey/login/verify': 'a passkey proves no address',
    'POST /wallets/connect/eoa/challenge': 'an EOA signature proves no email or phone',
    'POST /wallets/connect/eoa': 'an EOA signature proves no email or phone',
  };

  it('classifies every sign-in, sign-up and code route', () => {
    const listed = new Set<string>(ADDRESS_PROOFS.map((p) => p.route));
    const routes = routeTableOf(svc.app)
      .filter(
        (r) =>
          r.method === 'POST' &&
          (r.url.startsWith('/auth/') ||
            r.url.startsWith('/wallets/connect/') ||
            r.url === '/wallets' ||
            r.url === '/organizations/wallets'),
      )
      .map((r) => `${r.method} ${r.url}`);
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      expect(listed.has(route) || route in notProofs, `${route} is not classified`).toBe(true);
    }
    for (const p of ADDRESS_PROOFS) expect(routes).toContain(p.route);
  });

  it('confirms addresses only in the code flows, which hand over through HandOver', () => {
    const dir = new URL('../../src/modules/', import.meta.url);
    const callers = (readdirSync(dir, { recursive: true }) as string[])
      // wallets/ owns the confirmation; every other module reaches it through Accounts.
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('wallets/'))
      .filter((f) => /\.confirmAddress\(/.test(readFileSync(new URL(f, dir), 'utf8')))
      .sort();
    expect(callers).toEqual(['auth/code-flows.ts']);
  });
});
