import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createSigner, createTemplate, fund, signEoa, ACTION_FEE } from '../helpers/ebus.js';
import {
  createMember,
  createOrganization,
  joinOrganization,
  type TestMember,
} from '../helpers/fixtures.js';
import { requestsTo, type Headers } from '../helpers/harness.js';
import {
  bearer,
  lastCode,
  sessionIdOf,
  signUp,
  uniqueEmail,
  type Tokens,
} from '../helpers/identity.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * A revocation on one instance is refused on every other at once (docs/auth.md, "Revocation
 * on every server"). Two instances on one database: for each way a credential or a role is
 * taken away, instance B answers a call with it (so B remembers the credential), A takes it
 * away, and B refuses it within BOUND_MS. Without the revocation notices B would go on
 * trusting its memory for up to 30 s (API keys) or 3 to 4 s (sessions, EOA signers): those
 * caches count real time (performance.now), not the fake clock, which nothing here moves.
 */
const BOUND_MS = 1_000;

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

const onA = requestsTo(() => a);
const to = (svc: TestService) => requestsTo(() => svc);

type Response = LightMyRequestResponse;

/** Calls `call` until it answers `status`, for at most `ms`; answers its last answer. */
async function answersWithin(
  call: () => Promise<Response>,
  status: number,
  ms: number,
): Promise<Response> {
  const deadline = performance.now() + ms;
  for (;;) {
    const res = await call();
    if (res.statusCode === status || performance.now() >= deadline) return res;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function ok(res: Response): void {
  expect(res.statusCode, res.body).toBe(200);
}

/** One credential, a call that uses it on an instance, and how A takes it away. */
interface Revocation {
  call(svc: TestService): Promise<Response>;
  revoke(): Promise<void>;
  /** What B answers once it knows. */
  refused: 401 | 403;
}

const readOrganization = (orgId: string, headers: Headers) => (svc: TestService) =>
  to(svc).get(`/organizations/${orgId}`, headers);
const me = (headers: Headers) => (svc: TestService) => to(svc).get('/wallets/me', headers);
const listWebhooks = (headers: Headers) => (svc: TestService) => to(svc).get('/webhooks', headers);

const removeMember = async (owner: TestMember, m: TestMember) =>
  ok(await onA.del(`/organizations/${owner.orgId}/members/${m.memberId}`, owner.headers));
const demote = async (owner: TestMember, m: TestMember) =>
  ok(
    await onA.patch(
      `/organizations/${owner.orgId}/members/${m.memberId}`,
      { role: 'viewer' },
      owner.headers,
    ),
  );

/** An account made by someone who never proved its email, in an organization it founded. */
async function squatter() {
  const email = uniqueEmail('squatter');
  const first = await signUp(a, { email });
  const created = await onA.post('/organizations', { name: 'Squatter Co' }, bearer(first));
  ok(created);
  const orgId = created.json<{ id: string }>().id;
  const switched = await onA.post(
    '/organizations/switch',
    { organization_id: orgId },
    bearer(first),
  );
  ok(switched);
  const tokens = switched.json<Tokens>();
  const asOwner: TestMember = {
    orgId,
    walletId: tokens.wallet.id,
    memberId: '',
    address: tokens.wallet.address,
    email,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    sessionId: sessionIdOf(tokens.access_token),
    headers: bearer(tokens),
  };
  const key = await createApiKey(a, asOwner, ['organizations.read']);
  // The owner of the address asks for a sign-in code: its first proof hands the account over.
  ok(await onA.post('/auth/otp', { email }));
  const code = await lastCode(a, email);
  const handOver = async () => ok(await onA.post('/auth/otp/verify', { email, code }));
  return { orgId, tokens, key, handOver };
}

const CASES: { name: string; setup: () => Promise<Revocation> }[] = [
  {
    name: 'an API key deleted',
    async setup() {
      const owner = await createMember(a, { role: 'owner' });
      const key = await createApiKey(a, owner, ['organizations.read']);
      return {
        call: readOrganization(owner.orgId, key.headers),
        revoke: async () => ok(await onA.del(`/api-keys/${key.id}`, owner.headers)),
        refused: 401,
      };
    },
  },
  {
    name: 'a member removed: the API key it created',
    async setup() {
      const owner = await createMember(a, { role: 'owner' });
      const admin = await createMember(a, { orgId: owner.orgId, role: 'admin' });
      const key = await createApiKey(a, admin, ['organizations.read']);
      return {
        call: readOrganization(owner.orgId, key.headers),
        revoke: () => removeMember(owner, admin),
        refused: 401,
      };
    },
  },
  {
    name: 'a member demoted: its API key loses what the role no longer holds',
    async setup() {
      const owner = await createMember(a, { role: 'owner' });
      const admin = await createMember(a, { orgId: owner.orgId, role: 'admin' });
      const key = await createApiKey(a, admin, ['webhooks.read']);
      return { call: listWebhooks(key.headers), revoke: () => demote(owner, admin), refused: 403 };
    },
  },
  {
    name: 'a member removed: its session',
    async setup() {
      const owner = await createMember(a, { role: 'owner' });
      const m = await createMember(a, { orgId: owner.orgId, role: 'member' });
      return { call: me(m.headers), revoke: () => removeMember(owner, m), refused: 401 };
    },
  },
  {
    name: 'a member demoted: its session loses what the role no longer holds',
    async setup() {
      const owner = await createMember(a, { role: 'owner' });
      const admin = await createMember(a, { orgId: owner.orgId, role: 'admin' });
      return {
        call: listWebhooks(admin.headers),
        revoke: () => demote(owner, admin),
        refused: 403,
      };
    },
  },
  {
    name: 'a session signed out (POST /auth/logout)',
    async setup() {
      const m = await createMember(a, { role: 'member' });
      return {
        call: me(m.headers),
        revoke: async () => ok(await onA.post('/auth/logout', {}, m.headers)),
        refused: 401,
      };
    },
  },
  {
    name: 'a session ended by its wallet (DELETE /wallets/sessions/{id})',
    async setup() {
      const m = await createMember(a, { role: 'member' });
      const other = await a.container.sessions.issue(a.container.db, {
        walletId: m.walletId,
        orgId: m.orgId,
        device: 'other',
      });
      return {
        call: me(bearer(other)),
        revoke: async () =>
          ok(await onA.del(`/wallets/sessions/${sessionIdOf(other.access_token)}`, m.headers)),
        refused: 401,
      };
    },
  },
  {
    name: 'a session continued by an organization switch',
    async setup() {
      const m = await createMember(a, { role: 'member' });
      const elsewhere = await createOrganization(a);
      await joinOrganization(a, m, elsewhere);
      return {
        call: me(m.headers),
        revoke: async () =>
          ok(await onA.post('/organizations/switch', { organization_id: elsewhere }, m.headers)),
        refused: 401,
      };
    },
  },
  {
    name: 'a session whose refresh token was used twice',
    async setup() {
      const first = await signUp(a);
      const rotated = await onA.post('/auth/refresh-token', { refresh_token: first.refresh_token });
      ok(rotated);
      return {
        call: me(bearer(rotated.json<Tokens>())),
        revoke: async () => {
          const reused = await onA.post('/auth/refresh-token', {
            refresh_token: first.refresh_token,
          });
          expect(reused.statusCode, reused.body).toBe(401);
        },
        refused: 401,
      };
    },
  },
  {
    name: 'every session of a wallet whose password was reset',
    async setup() {
      const m = await createMember(a, { role: 'member' });
      ok(await onA.post('/auth/password-reset', { email: m.email }));
      const code = await lastCode(a, m.email);
      return {
        call: me(m.headers),
        revoke: async () =>
          ok(
            await onA.post('/auth/password-reset/confirm', {
              email: m.email,
              code,
              password: 'a brand new password',
            }),
          ),
        refused: 401,
      };
    },
  },
  {
    name: 'the sessions a removed credential opened',
    async setup() {
      const account = await signUp(a);
      // A second credential, so the password is not the last one.
      const eoa = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
      await a.container.db.execute(sql`INSERT INTO credentials
          (id, wallet_id, type, external_id, created_at)
        VALUES (${newId('credential')}, ${account.wallet.id}, 'eoa', ${eoa}, ${a.clock.now()})`);
      const login = await onA.post('/auth/login', {
        email: account.email,
        password: account.password,
      });
      ok(login);
      const creds = await onA.get('/wallets/me/credentials', bearer(account));
      ok(creds);
      const password = creds
        .json<{ credentials: { id: string; type: string }[] }>()
        .credentials.find((c) => c.type === 'password')!;
      return {
        call: me(bearer(login.json<Tokens>())),
        revoke: async () =>
          ok(await onA.del(`/wallets/me/credentials/${password.id}`, bearer(account))),
        refused: 401,
      };
    },
  },
  {
    name: 'a hand-over: the API keys the squatter made',
    async setup() {
      const s = await squatter();
      return { call: readOrganization(s.orgId, s.key.headers), revoke: s.handOver, refused: 401 };
    },
  },
  {
    name: "a hand-over: the squatter's sessions",
    async setup() {
      const s = await squatter();
      return { call: me(bearer(s.tokens)), revoke: s.handOver, refused: 401 };
    },
  },
  {
    name: "an organization deleted: its owner's API key",
    async setup() {
      const owner = await createMember(a, { role: 'owner' });
      const key = await createApiKey(a, owner, ['organizations.read']);
      return {
        call: readOrganization(owner.orgId, key.headers),
        revoke: async () => ok(await onA.del(`/organizations/${owner.orgId}`, owner.headers)),
        refused: 401,
      };
    },
  },
  {
    name: "a member removed: the actions its crypto wallet signs (B's EOA signer memory)",
    async setup() {
      const owner = await createSigner(a, { role: 'owner' });
      await fund(a, owner.orgId, ACTION_FEE * 100n);
      const templateId = await createTemplate(a, owner.orgId);
      const signer = await createSigner(a, { orgId: owner.orgId, role: 'member' });
      // The owner sends what the member signed; each applied action takes the next nonce.
      let nonce = 0;
      return {
        async call(svc) {
          const body = await signEoa(a, signer, {
            name: 'mint',
            params: { template_id: templateId },
            nonce,
          });
          const res = await svc.app.inject({
            method: 'POST',
            url: '/ebus/execute',
            headers: owner.headers,
            payload: body,
          });
          if (res.statusCode === 200) nonce += 1;
          return res;
        },
        revoke: () => removeMember(owner, signer),
        refused: 403,
      };
    },
  },
];

describe('a revocation on instance A', () => {
  for (const { name, setup } of CASES) {
    it(`${name}: refused on instance B within ${BOUND_MS} ms`, async () => {
      const r = await setup();
      ok(await r.call(b));
      await r.revoke();
      const res = await answersWithin(() => r.call(b), r.refused, BOUND_MS);
      expect(res.statusCode, res.body).toBe(r.refused);
    });
  }
});

/** The backends listening for revocations on this test's database. */
async function listeners(): Promise<number[]> {
  const { rows } = await a.container.db.execute<{ pid: number }>(sql`
    SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = 'ons-listen'`);
  return rows.map((r) => Number(r.pid));
}

/** One series of B's /metrics (rendered at most once a second). */
async function metricOfB(name: string): Promise<number> {
  const text = (await to(b).get('/metrics')).body;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : NaN;
}

describe('the listening connection', () => {
  it('when it is lost, B forgets what it remembered, listens again and hears what follows', async () => {
    const owner = await createMember(a, { role: 'owner' });
    const before = await createApiKey(a, owner, ['organizations.read']);
    const after = await createApiKey(a, owner, ['organizations.read']);
    const read = (key: { headers: Headers }) =>
      to(b).get(`/organizations/${owner.orgId}`, key.headers);
    ok(await read(before));
    ok(await read(after));

    // Revoked without a notice (its trigger off within the one transaction): B cannot hear of
    // it and answers from its memory.
    await a.container.db.transaction(async (tx) => {
      await tx.execute(sql`ALTER TABLE api_keys DISABLE TRIGGER api_keys_revoked`);
      await tx.execute(sql`UPDATE api_keys SET deleted_at = now() WHERE id = ${before.id}`);
      await tx.execute(sql`ALTER TABLE api_keys ENABLE TRIGGER api_keys_revoked`);
    });
    ok(await read(before));

    // A's and B's listening connections, ended as a restart or a failover would end them.
    const lost = await listeners();
    expect(lost).toHaveLength(2);
    const listens = await metricOfB('ons_revocation_listens_total');
    await a.container.db.execute(sql`
      SELECT pg_terminate_backend(pid) FROM unnest(${`{${lost.join(',')}}`}::int[]) AS pid`);

    // It may have missed notices: it forgets what it remembered.
    const forgotten = await answersWithin(() => read(before), 401, BOUND_MS);
    expect(forgotten.statusCode, forgotten.body).toBe(401);

    // It listens again, on a new connection.
    const deadline = performance.now() + 10_000;
    while (
      (await metricOfB('ons_revocation_listens_total')) !== listens + 1 ||
      (await metricOfB('ons_revocation_listener_up')) !== 1
    ) {
      expect(performance.now(), 'B listens again within 10 s').toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 100));
    }
    const now = await listeners();
    expect(now).toHaveLength(2);
    expect(now.filter((pid) => lost.includes(pid))).toEqual([]);

    // And hears the revocations made after.
    ok(await read(after));
    ok(await onA.del(`/api-keys/${after.id}`, owner.headers));
    const refused = await answersWithin(() => read(after), 401, BOUND_MS);
    expect(refused.statusCode, refused.body).toBe(401);
  });
});
