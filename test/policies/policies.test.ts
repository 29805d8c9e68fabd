/**
 * Spend policies (docs/policies.md): the routes (what works, bad input, who is refused, the
 * ceiling of a grant) and what they do to actions: each kind of limit refuses with 403 code
 * 7 naming the policy and the limit, and a refused action costs nothing.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permissionsOfRole, type Permission } from '../../src/lib/permissions.js';
import { newId } from '../../src/lib/ids.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createMember } from '../helpers/fixtures.js';
import {
  ACTION_FEE,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  snapshot,
  type EoaSigner,
} from '../helpers/ebus.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const FEE = ACTION_FEE;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

type Headers = Record<string, string>;
const call = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  headers: Headers,
  payload?: unknown,
) =>
  svc.app.inject({
    method,
    url,
    headers,
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });

async function createPolicy(by: { headers: Headers }, body: Record<string, unknown>) {
  const res = await call('POST', '/policies', by.headers, { name: 'p', ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ id: string } & Record<string, unknown>>();
}

/** An owner who signs with an EOA, a funded organization and a template. */
async function world(balance = FEE * 100n) {
  const owner = await createSigner(svc);
  await fund(svc, owner.orgId, balance);
  const templateId = await createTemplate(svc, owner.orgId);
  const nonces = new Map<string, number>();
  /** Signs and sends a mint (by default of `templateId`) as `signer`, with `headers`. */
  const mint = async (signer: EoaSigner, opts: { template?: string; headers?: Headers } = {}) => {
    const nonce = nonces.get(signer.walletId) ?? 0;
    const body = await signEoa(svc, signer, {
      name: 'mint',
      params: { template_id: opts.template ?? templateId },
      nonce,
    });
    const res = await call('POST', '/ebus/execute', opts.headers ?? signer.headers, body);
    if (res.statusCode === 200) nonces.set(signer.walletId, nonce + 1);
    return res;
  };
  return { owner, orgId: owner.orgId, templateId, mint, nonces };
}

async function expectRefusedBy(
  res: Awaited<ReturnType<typeof call>>,
  policyId: string,
  limit: string,
) {
  expect(res.statusCode, res.body).toBe(403);
  const body = res.json<{ code: number; message: string; details: Record<string, unknown> }>();
  expect(body.code).toBe(7);
  expect(body.message).toContain(policyId);
  expect(body.details).toMatchObject({ policy_id: policyId, limit });
}

describe('CRUD', () => {
  it('an owner creates, reads, lists, replaces and deletes a policy', async () => {
    const w = await world();
    const created = await createPolicy(w.owner, {
      name: 'org cap',
      target_type: 'organization',
      period: 'day',
      spend_cap_wei: (FEE * 10n).toString(),
      max_actions: 50,
      denied_actions: ['drop'],
      max_fee_wei: (FEE * 2n).toString(),
    });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^pol_/),
      organization_id: w.orgId,
      name: 'org cap',
      target_type: 'organization',
      target_id: null,
      period: 'day',
      spend_cap_wei: (FEE * 10n).toString(),
      max_actions: 50,
      allowed_actions: null,
      denied_actions: ['drop'],
      max_fee_wei: (FEE * 2n).toString(),
      usage: { period: 'day', spent_wei: '0', actions: 0 },
    });
    const got = await call('GET', `/policies/${created.id}`, w.owner.headers);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(created);
    const list = await call('GET', '/policies', w.owner.headers);
    expect(list.json().policies.map((p: { id: string }) => p.id)).toEqual([created.id]);

    const put = await call('PUT', `/policies/${created.id}`, w.owner.headers, {
      name: 'renamed',
      allowed_templates: [w.templateId],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      name: 'renamed',
      period: null,
      spend_cap_wei: null,
      max_actions: null,
      allowed_templates: [w.templateId],
      usage: null,
    });

    const del = await call('DELETE', `/policies/${created.id}`, w.owner.headers);
    expect(del.statusCode, del.body).toBe(200);
    expect((await call('GET', `/policies/${created.id}`, w.owner.headers)).statusCode).toBe(404);
    expect((await call('DELETE', `/policies/${created.id}`, w.owner.headers)).statusCode).toBe(404);
  });

  it('refuses bad input with 400 code 3', async () => {
    const w = await world();
    const bad: Record<string, unknown>[] = [
      { target_type: 'organization', max_actions: 5 }, // a cap without a period
      { target_type: 'organization', period: 'hour' }, // a period without a cap
      { target_type: 'organization' }, // no limit at all
      { target_type: 'organization', target_id: w.owner.walletId, max_fee_wei: '1' },
      { target_type: 'wallet', max_fee_wei: '1' }, // no target id
      { target_type: 'wallet', target_id: w.templateId, max_fee_wei: '1' }, // wrong kind
      { target_type: 'galaxy', max_fee_wei: '1' },
      { target_type: 'organization', period: 'week', max_actions: 1 },
      { target_type: 'organization', period: 'hour', spend_cap_wei: '-1' },
      { target_type: 'organization', period: 'hour', spend_cap_wei: '1e18' },
      { target_type: 'organization', period: 'hour', max_actions: -1 },
      { target_type: 'organization', allowed_actions: ['steal'] },
      { target_type: 'organization', allowed_templates: ['not-a-template'] },
      { target_type: 'organization', max_fee_wei: '1', extra: true },
      { target_type: 'organization', max_fee_wei: '1', name: '' },
      { target_type: 'organization', max_fee_wei: '1', name: 'x'.repeat(101) },
    ];
    for (const b of bad) {
      const res = await call('POST', '/policies', w.owner.headers, { name: 'p', ...b });
      expect(res.statusCode, JSON.stringify(b) + res.body).toBe(400);
      expect(res.json().code).toBe(3);
    }
    const malformed = await call('GET', '/policies/pol_nope', w.owner.headers);
    expect(malformed.statusCode).toBe(400);
    const unknown = await call('GET', `/policies/${newId('policy')}`, w.owner.headers);
    expect(unknown.statusCode).toBe(404);
    const ghostWallet = await call('POST', '/policies', w.owner.headers, {
      name: 'p',
      target_type: 'wallet',
      target_id: newId('wallet'),
      max_fee_wei: '1',
    });
    expect(ghostWallet.statusCode).toBe(404);
    const ghostKey = await call('POST', '/policies', w.owner.headers, {
      name: 'p',
      target_type: 'api_key',
      target_id: newId('apiKey'),
      max_fee_wei: '1',
    });
    expect(ghostKey.statusCode).toBe(404);
  });

  it('bounds how many policies an organization holds', async () => {
    const w = await world();
    const now = svc.clock.now();
    for (let i = 0; i < 100; i++) {
      await svc.container.db.execute(sql`INSERT INTO policies (id, organization_id, name,
        target_type, max_fee_wei, created_at, updated_at)
        VALUES (${newId('policy')}, ${w.orgId}, 'filler', 'organization', 1, ${now}, ${now})`);
    }
    const res = await call('POST', '/policies', w.owner.headers, {
      name: 'one too many',
      target_type: 'organization',
      max_fee_wei: '1',
    });
    expect(res.statusCode, res.body).toBe(429);
    expect(res.json().code).toBe(8);
  });
});

describe('a policy whose target is gone', () => {
  // Who may delete it, by target (docs/policies.md): the rule's table, run for every caller.
  type Caller = 'owner' | 'admin' | 'key with policies.delete';
  const RULE: {
    target: string;
    gone: 'key deleted' | 'key expired' | 'member removed';
    may: Caller[];
  }[] = [
    { target: 'api_key', gone: 'key deleted', may: ['owner', 'admin', 'key with policies.delete'] },
    { target: 'api_key', gone: 'key expired', may: ['owner', 'admin', 'key with policies.delete'] },
    { target: 'wallet', gone: 'member removed', may: ['owner'] },
  ];
  const CALLERS: Caller[] = ['owner', 'admin', 'key with policies.delete'];

  /** A policy on a target of `gone`'s kind, then the target gone. */
  async function orphan(w: Awaited<ReturnType<typeof world>>, gone: (typeof RULE)[number]['gone']) {
    if (gone === 'member removed') {
      const member = await createMember(svc, { orgId: w.orgId, role: 'member' });
      const p = await createPolicy(w.owner, {
        target_type: 'wallet',
        target_id: member.walletId,
        max_fee_wei: '1',
      });
      const res = await call(
        'DELETE',
        `/organizations/${w.orgId}/members/${member.memberId}`,
        w.owner.headers,
      );
      expect(res.statusCode, res.body).toBe(200);
      return p.id;
    }
    const key = await createApiKey(svc, w.owner, ['objects.read'] as Permission[], {
      ttlHours: 1,
    });
    const p = await createPolicy(w.owner, {
      target_type: 'api_key',
      target_id: key.id,
      max_fee_wei: '1',
    });
    // Expired an hour ago (moving the clock would end the callers' sessions too).
    if (gone === 'key expired') {
      await svc.container.db.execute(sql`UPDATE api_keys
        SET expires_at = ${new Date(svc.clock.now().getTime() - 3_600_000)} WHERE id = ${key.id}`);
    } else
      expect((await call('DELETE', `/api-keys/${key.id}`, w.owner.headers)).statusCode).toBe(200);
    return p.id;
  }

  for (const { target, gone, may } of RULE) {
    for (const caller of CALLERS) {
      const allowed = may.includes(caller);
      it(`${target}, ${gone}: ${caller} ${allowed ? 'deletes it' : 'is refused'}`, async () => {
        const w = await world();
        const id = await orphan(w, gone);
        // It cannot be changed any more.
        const put = await call('PUT', `/policies/${id}`, w.owner.headers, {
          name: 'p',
          max_fee_wei: '2',
        });
        expect([put.statusCode, put.json<{ code: number }>().code]).toEqual([404, 5]);
        const headers =
          caller === 'owner'
            ? w.owner.headers
            : caller === 'admin'
              ? (await createMember(svc, { orgId: w.orgId, role: 'admin' })).headers
              : (
                  await createApiKey(svc, w.owner, [
                    'policies.read',
                    'policies.delete',
                  ] as Permission[])
                ).headers;
        const res = await call('DELETE', `/policies/${id}`, headers);
        if (allowed) {
          expect(res.statusCode, res.body).toBe(200);
          expect((await call('GET', `/policies/${id}`, w.owner.headers)).statusCode).toBe(404);
        } else {
          expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([403, 7]);
          expect(res.json<{ details: { owner_only?: boolean } }>().details.owner_only).toBe(true);
          expect((await call('GET', `/policies/${id}`, w.owner.headers)).statusCode).toBe(200);
        }
      });
    }
  }

  it('a full organization of such policies can be cleaned up by its owner', async () => {
    const w = await world();
    const now = svc.clock.now();
    for (let i = 0; i < 99; i++) {
      await svc.container.db.execute(sql`INSERT INTO policies (id, organization_id, name,
        target_type, max_fee_wei, created_at, updated_at)
        VALUES (${newId('policy')}, ${w.orgId}, 'filler', 'organization', 1, ${now}, ${now})`);
    }
    const id = await orphan(w, 'key deleted');
    const body = { name: 'budget', target_type: 'organization', max_fee_wei: '1' };
    expect((await call('POST', '/policies', w.owner.headers, body)).statusCode).toBe(429);
    expect((await call('DELETE', `/policies/${id}`, w.owner.headers)).statusCode).toBe(200);
    expect((await call('POST', '/policies', w.owner.headers, body)).statusCode).toBe(200);
  });
});

describe('who is refused', () => {
  it('no credential: 401 code 16 on every route', async () => {
    const id = newId('policy');
    for (const [m, u] of [
      ['GET', '/policies'],
      ['POST', '/policies'],
      ['GET', `/policies/${id}`],
      ['PUT', `/policies/${id}`],
      ['DELETE', `/policies/${id}`],
    ] as const) {
      const res = await call(m, u, {}, m === 'POST' || m === 'PUT' ? { name: 'x' } : undefined);
      expect(res.statusCode, `${m} ${u}`).toBe(401);
      expect(res.json().code).toBe(16);
    }
  });

  it('another organization sees nothing and changes nothing (404)', async () => {
    const w = await world();
    const p = await createPolicy(w.owner, { target_type: 'organization', max_fee_wei: '1' });
    const stranger = await createMember(svc, { role: 'owner' });
    expect((await call('GET', `/policies/${p.id}`, stranger.headers)).statusCode).toBe(404);
    expect(
      (await call('PUT', `/policies/${p.id}`, stranger.headers, { name: 'x', max_fee_wei: '2' }))
        .statusCode,
    ).toBe(404);
    expect((await call('DELETE', `/policies/${p.id}`, stranger.headers)).statusCode).toBe(404);
    expect((await call('GET', '/policies', stranger.headers)).json().policies).toEqual([]);
    expect((await call('GET', `/policies/${p.id}`, w.owner.headers)).json().max_fee_wei).toBe('1');
  });

  it('a role or key without the permission: 403 code 7', async () => {
    const w = await world();
    const p = await createPolicy(w.owner, { target_type: 'organization', max_fee_wei: '1' });
    const viewer = await createMember(svc, { orgId: w.orgId, role: 'viewer' });
    const member = await createMember(svc, { orgId: w.orgId, role: 'member' });
    expect((await call('GET', '/policies', viewer.headers)).statusCode).toBe(403);
    expect((await call('GET', '/policies', member.headers)).statusCode).toBe(200);
    const denied = await call('POST', '/policies', member.headers, {
      name: 'x',
      target_type: 'wallet',
      target_id: member.walletId,
      max_fee_wei: '1',
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe(7);
    const readKey = await createApiKey(svc, w.owner, ['policies.read']);
    expect((await call('GET', `/policies/${p.id}`, readKey.headers)).statusCode).toBe(200);
    expect((await call('DELETE', `/policies/${p.id}`, readKey.headers)).statusCode).toBe(403);
    expect(
      (await call('PUT', `/policies/${p.id}`, readKey.headers, { name: 'x', max_fee_wei: '9' }))
        .statusCode,
    ).toBe(403);
  });
});

describe('a policy is a grant: bounded by the caller', () => {
  it('only an owner person sets, changes or removes an organization or template policy', async () => {
    const w = await world();
    const admin = await createMember(svc, { orgId: w.orgId, role: 'admin' });
    for (const target of [
      { target_type: 'organization' },
      { target_type: 'template', target_id: w.templateId },
    ]) {
      const res = await call('POST', '/policies', admin.headers, {
        name: 'x',
        ...target,
        max_fee_wei: '1',
      });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({ code: 7, details: { owner_only: true } });
    }
    const p = await createPolicy(w.owner, { target_type: 'organization', max_fee_wei: '1' });
    expect((await call('DELETE', `/policies/${p.id}`, admin.headers)).statusCode).toBe(403);
    expect(
      (await call('PUT', `/policies/${p.id}`, admin.headers, { name: 'x', max_fee_wei: '99' }))
        .statusCode,
    ).toBe(403);
    // An owner's key is no owner either.
    const key = await createApiKey(svc, w.owner, [
      'policies.create',
      'policies.delete',
    ] as Permission[]);
    expect((await call('DELETE', `/policies/${p.id}`, key.headers)).statusCode).toBe(403);
    expect((await call('GET', `/policies/${p.id}`, w.owner.headers)).statusCode).toBe(200);
  });

  it("an admin limits a member's wallet, not an owner's, and not its own", async () => {
    const w = await world();
    const admin = await createMember(svc, { orgId: w.orgId, role: 'admin' });
    const member = await createMember(svc, { orgId: w.orgId, role: 'member' });
    const body = (walletId: string) => ({
      name: 'staff',
      target_type: 'wallet',
      target_id: walletId,
      period: 'hour',
      max_actions: 100,
    });
    expect((await call('POST', '/policies', admin.headers, body(member.walletId))).statusCode).toBe(
      200,
    );
    const onOwner = await call('POST', '/policies', admin.headers, body(w.owner.walletId));
    expect(onOwner.statusCode).toBe(403);
    // The owner caps the admin; the admin cannot lift it.
    const onAdmin = await createPolicy(w.owner, body(admin.walletId));
    const lift = await call('DELETE', `/policies/${onAdmin.id}`, admin.headers);
    expect(lift.statusCode, lift.body).toBe(403);
    expect(lift.json().message).toMatch(/binds you/);
    // Nor through a key it made with everything its role holds: the key acts for its wallet.
    const own = await createApiKey(svc, admin, [...permissionsOfRole('admin')]);
    const tries = [
      call('DELETE', `/policies/${onAdmin.id}`, own.headers),
      call('PUT', `/policies/${onAdmin.id}`, own.headers, {
        name: 'staff',
        period: 'hour',
        max_actions: 1e6,
      }),
      call('POST', '/policies', own.headers, body(admin.walletId)),
    ];
    for (const res of await Promise.all(tries)) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().message).toMatch(/binds you/);
    }
    // The same key may limit a member's wallet, as its creator may.
    expect((await call('POST', '/policies', own.headers, body(member.walletId))).statusCode).toBe(
      200,
    );
    expect((await call('GET', `/policies/${onAdmin.id}`, w.owner.headers)).json()).toMatchObject({
      max_actions: 100,
    });
  });

  // Who set a policy bounds who may change it: an owner's limits are an owner's to lift, so two
  // admins cannot lift each other's. Every target × setter × caller × change, on a member's
  // wallet or a key that each of them may limit: refused exactly when an owner set it and the
  // caller is no owner.
  const setters = ['owner', 'admin'] as const;
  const callers = ['owner', 'other admin', "owner's key with an admin's permissions"] as const;
  for (const target of ['wallet', 'api_key'] as const)
    for (const setter of setters) {
      for (const caller of callers) {
        for (const change of ['PUT', 'DELETE'] as const) {
          const allowed = setter === 'admin' || caller === 'owner';
          it(`on a ${target}, set by ${setter}, ${change} by ${caller}: ${allowed ? 'allowed' : 'refused'}`, async () => {
            const w = await world();
            const admin = await createMember(svc, { orgId: w.orgId, role: 'admin' });
            const otherAdmin = await createMember(svc, { orgId: w.orgId, role: 'admin' });
            const member = await createMember(svc, { orgId: w.orgId, role: 'member' });
            const key = await createApiKey(svc, w.owner, [...permissionsOfRole('admin')]);
            const limited = await createApiKey(svc, w.owner, ['objects.read'] as Permission[]);
            const by = { owner: w.owner, admin }[setter];
            const policy = await createPolicy(by, {
              target_type: target,
              target_id: target === 'wallet' ? member.walletId : limited.id,
              period: 'hour',
              max_actions: 5,
            });
            expect(policy.set_by_owner).toBe(setter === 'owner');
            const headers = {
              owner: w.owner.headers,
              'other admin': otherAdmin.headers,
              "owner's key with an admin's permissions": key.headers,
            }[caller];
            const res = await call(change, `/policies/${policy.id}`, headers, {
              name: 'p',
              period: 'hour',
              max_actions: 1e6,
            });
            const after = await call('GET', `/policies/${policy.id}`, w.owner.headers);
            if (allowed) {
              expect(res.statusCode, res.body).toBe(200);
              if (change === 'PUT') {
                expect(after.json()).toMatchObject({
                  max_actions: 1e6,
                  set_by_owner: caller === 'owner',
                });
              } else expect(after.statusCode).toBe(404);
            } else {
              expect(res.statusCode, res.body).toBe(403);
              expect(res.json()).toMatchObject({ code: 7, details: { owner_only: true } });
              expect(res.json().message).toMatch(/an owner set it/);
              expect(after.json()).toMatchObject({ max_actions: 5, set_by_owner: true });
            }
          });
        }
      }
    }

  it("an owner's change makes the policy the owners' own", async () => {
    const w = await world();
    const admin = await createMember(svc, { orgId: w.orgId, role: 'admin' });
    const member = await createMember(svc, { orgId: w.orgId, role: 'member' });
    const policy = await createPolicy(admin, {
      target_type: 'wallet',
      target_id: member.walletId,
      max_fee_wei: '10',
    });
    const tighten = await call('PUT', `/policies/${policy.id}`, w.owner.headers, {
      name: 'p',
      max_fee_wei: '1',
    });
    expect(tighten.statusCode, tighten.body).toBe(200);
    expect(tighten.json()).toMatchObject({ set_by_owner: true });
    const lift = await call('DELETE', `/policies/${policy.id}`, admin.headers);
    expect(lift.statusCode, lift.body).toBe(403);
  });

  it('a key limits only keys within its own permissions, and never lifts its own policy', async () => {
    const w = await world();
    const strong = await createApiKey(svc, w.owner, [
      'objects.read',
      'objects.create',
      'actions.create',
    ] as Permission[]);
    const manager = await createApiKey(svc, w.owner, [
      'policies.create',
      'policies.delete',
      'objects.read',
    ] as Permission[]);
    const refused = await call('POST', '/policies', manager.headers, {
      name: 'x',
      target_type: 'api_key',
      target_id: strong.id,
      max_fee_wei: '1',
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().details.missing_permissions).toEqual([
      'objects.create',
      'actions.create',
    ]);
    const weak = await createApiKey(svc, w.owner, ['objects.read'] as Permission[]);
    const ok = await call('POST', '/policies', manager.headers, {
      name: 'x',
      target_type: 'api_key',
      target_id: weak.id,
      max_fee_wei: '1',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const onManager = await createPolicy(w.owner, {
      target_type: 'api_key',
      target_id: manager.id,
      max_fee_wei: '1',
    });
    const lift = await call('DELETE', `/policies/${onManager.id}`, manager.headers);
    expect(lift.statusCode).toBe(403);
  });

  it("a key's policy is bounded by what the key lists, not by what its demoted creator leaves it", async () => {
    const w = await world();
    const adminA = await createMember(svc, { orgId: w.orgId, role: 'admin' });
    const adminB = await createMember(svc, { orgId: w.orgId, role: 'admin' });
    const member = permissionsOfRole('member');
    const adminOnly = [...permissionsOfRole('admin')].filter((p) => !member.has(p)).slice(0, 2);
    expect(adminOnly.length).toBe(2);
    const key = await createApiKey(svc, adminA, ['objects.read', ...adminOnly] as Permission[]);
    const cap = await createPolicy(adminB, {
      target_type: 'api_key',
      target_id: key.id,
      max_fee_wei: '1',
    });
    // The key's creator is demoted: the key now acts with less, but still lists the rest,
    // and gets it back if its creator is promoted again.
    await svc.container.db.execute(
      sql`UPDATE members SET role = 'member' WHERE id = ${adminA.memberId}`,
    );
    const manager = await createApiKey(svc, w.owner, [
      'policies.delete',
      'policies.update',
      'objects.read',
    ] as Permission[]);
    for (const [method, body] of [
      ['DELETE', undefined],
      ['PUT', { name: 'p', max_fee_wei: '100' }],
    ] as const) {
      const lift = await call(method, `/policies/${cap.id}`, manager.headers, body);
      expect(lift.statusCode, `${method} ${lift.body}`).toBe(403);
      const err = lift.json<{ code: number; details: { missing_permissions: string[] } }>();
      expect(err.code).toBe(7);
      expect(err.details.missing_permissions).toEqual(expect.arrayContaining(adminOnly));
    }
    const byAdmin = await call('DELETE', `/policies/${cap.id}`, adminB.headers);
    expect(byAdmin.statusCode, byAdmin.body).toBe(200);
  });
});

describe('what a policy does to actions', () => {
  it('a wallet capped at N actions per hour: the N+1th is refused and costs nothing', async () => {
    const w = await world();
    const staff = await createSigner(svc, { orgId: w.orgId, role: 'member' });
    const p = await createPolicy(w.owner, {
      target_type: 'wallet',
      target_id: staff.walletId,
      period: 'hour',
      max_actions: 3,
    });
    for (let i = 0; i < 3; i++) expect((await w.mint(staff)).statusCode).toBe(200);
    const before = await snapshot(svc, w.orgId, staff.walletId);
    const res = await w.mint(staff);
    await expectRefusedBy(res, p.id, 'max_actions');
    expect(res.json().details).toMatchObject({ limit_value: 3, used: '3', period: 'hour' });
    expect(await snapshot(svc, w.orgId, staff.walletId)).toEqual(before);
    // Other wallets are not bound by it.
    expect((await w.mint(w.owner)).statusCode).toBe(200);
    const view = (await call('GET', `/policies/${p.id}`, w.owner.headers)).json();
    expect(view.usage).toMatchObject({ actions: 3, spent_wei: (FEE * 3n).toString() });
  });

  it('a replaced policy keeps its use while its period stays, and starts afresh when it changes', async () => {
    const w = await world();
    const p = await createPolicy(w.owner, {
      target_type: 'organization',
      period: 'hour',
      max_actions: 5,
    });
    for (let i = 0; i < 2; i++) expect((await w.mint(w.owner)).statusCode).toBe(200);
    const usage = async () =>
      (await call('GET', `/policies/${p.id}`, w.owner.headers)).json().usage as {
        actions: number;
        spent_wei: string;
      };
    expect(await usage()).toMatchObject({ actions: 2, spent_wei: (FEE * 2n).toString() });
    const replace = (body: Record<string, unknown>) =>
      call('PUT', `/policies/${p.id}`, w.owner.headers, body);
    expect((await replace({ name: 'wider', period: 'hour', max_actions: 10 })).statusCode).toBe(
      200,
    );
    expect(await usage()).toMatchObject({ actions: 2 });
    expect((await replace({ name: 'daily', period: 'day', max_actions: 1 })).statusCode).toBe(200);
    expect(await usage()).toMatchObject({ actions: 0, spent_wei: '0' });
    // The cap of 1 counts from the change: one more action applies, the next is refused.
    expect((await w.mint(w.owner)).statusCode).toBe(200);
    await expectRefusedBy(await w.mint(w.owner), p.id, 'max_actions');
    expect(await usage()).toMatchObject({ actions: 1 });
  });

  it("an organization spend cap per minute rolls on the database's clock: refused at the cap, allowed once the window moves", async () => {
    const w = await world();
    const p = await createPolicy(w.owner, {
      target_type: 'organization',
      period: 'minute',
      spend_cap_wei: (FEE * 2n).toString(),
    });
    expect((await w.mint(w.owner)).statusCode).toBe(200);
    expect((await w.mint(w.owner)).statusCode).toBe(200);
    const res = await w.mint(w.owner);
    await expectRefusedBy(res, p.id, 'spend_cap_wei');
    expect(res.json().details).toMatchObject({
      limit_value: (FEE * 2n).toString(),
      used: (FEE * 2n).toString(),
      requested: FEE.toString(),
    });
    // The process's clock does not move the window: the database's clock ends it, for the
    // checks and for the use answered. (The fake clock stood still since the service began.)
    svc.clock.set(new Date(Date.now() + 62_000));
    await expectRefusedBy(await w.mint(w.owner), p.id, 'spend_cap_wei');
    const view = (await call('GET', `/policies/${p.id}`, w.owner.headers)).json();
    expect(view.usage).toMatchObject({ spent_wei: (FEE * 2n).toString(), actions: 2 });
    // Nor can a test move the database's clock: the use is moved back instead, by a whole
    // ring (61 buckets, so each stays in its slot), as if 61 s had passed on that clock.
    await svc.container.db.execute(sql`UPDATE policy_usage
      SET cur_bucket = cur_bucket - 61, buckets = ARRAY(SELECT CASE WHEN b >= 0 THEN b - 61
        ELSE b END FROM unnest(buckets) WITH ORDINALITY AS z(b, i) ORDER BY i)
      WHERE policy_id = ${p.id}`);
    expect((await w.mint(w.owner)).statusCode).toBe(200);
  });

  it('a key that may mint only template X, at most 1 a day', async () => {
    const w = await world();
    const other = await createTemplate(svc, w.orgId);
    const key = await createApiKey(svc, w.owner, [
      'objects.read',
      'objects.create',
      'actions.create',
    ] as Permission[]);
    const p = await createPolicy(w.owner, {
      target_type: 'api_key',
      target_id: key.id,
      allowed_actions: ['mint'],
      allowed_templates: [w.templateId],
      period: 'day',
      max_actions: 1,
    });
    await expectRefusedBy(
      await w.mint(w.owner, { template: other, headers: key.headers }),
      p.id,
      'allowed_templates',
    );
    expect((await w.mint(w.owner, { headers: key.headers })).statusCode).toBe(200);
    await expectRefusedBy(await w.mint(w.owner, { headers: key.headers }), p.id, 'max_actions');
    // The same wallet with its own session is not bound by the key's policy.
    expect((await w.mint(w.owner)).statusCode).toBe(200);
    // A transfer through the key: not an allowed action.
    const obj = await svc.container.db.execute<{ id: string }>(
      sql`SELECT id FROM objects WHERE organization_id = ${w.orgId} LIMIT 1`,
    );
    const transfer = await signEoa(svc, w.owner, {
      name: 'transfer',
      params: { object_id: obj.rows[0]!.id, to: '0x000000000000000000000000000000000000dead' },
      nonce: w.nonces.get(w.owner.walletId)!,
    });
    await expectRefusedBy(
      await call('POST', '/ebus/execute', key.headers, transfer),
      p.id,
      'allowed_actions',
    );
  });

  it('denied actions and templates, and the largest single fee', async () => {
    const w = await world();
    const denied = await createPolicy(w.owner, {
      target_type: 'template',
      target_id: w.templateId,
      denied_actions: ['mint'],
    });
    await expectRefusedBy(await w.mint(w.owner), denied.id, 'denied_actions');
    await call('DELETE', `/policies/${denied.id}`, w.owner.headers);
    // Deleted: at once, in this process.
    expect((await w.mint(w.owner)).statusCode).toBe(200);
    const deniedTemplate = await createPolicy(w.owner, {
      target_type: 'organization',
      denied_templates: [w.templateId],
    });
    await expectRefusedBy(await w.mint(w.owner), deniedTemplate.id, 'denied_templates');
    await call('DELETE', `/policies/${deniedTemplate.id}`, w.owner.headers);
    const fee = await createPolicy(w.owner, {
      target_type: 'organization',
      max_fee_wei: (FEE - 1n).toString(),
    });
    const res = await w.mint(w.owner);
    await expectRefusedBy(res, fee.id, 'max_fee_wei');
    expect(res.json().details).toMatchObject({ requested: FEE.toString() });
    // Raised: allowed again.
    await call('PUT', `/policies/${fee.id}`, w.owner.headers, {
      name: 'fee',
      max_fee_wei: FEE.toString(),
    });
    expect((await w.mint(w.owner)).statusCode).toBe(200);
  });

  it('a policy written by another process is seen: the group statement guards the version', async () => {
    const w = await world();
    expect((await w.mint(w.owner)).statusCode).toBe(200); // the empty set is now remembered
    // Behind this process's back, as another instance would: a policy and its version.
    const id = newId('policy');
    const now = svc.clock.now();
    await svc.container.db.execute(sql`INSERT INTO policies (id, organization_id, name,
      target_type, denied_actions, created_at, updated_at)
      VALUES (${id}, ${w.orgId}, 'elsewhere', 'organization', '{mint}', ${now}, ${now})`);
    await svc.container.db.execute(sql`INSERT INTO policy_usage (policy_id, organization_id)
      VALUES (${id}, ${w.orgId})`);
    await svc.container.db.execute(
      sql`UPDATE organizations SET policy_version = policy_version + 1 WHERE id = ${w.orgId}`,
    );
    await expectRefusedBy(await w.mint(w.owner), id, 'denied_actions');
  });

  it('a batch refusal names the policy too', async () => {
    const w = await world();
    const p = await createPolicy(w.owner, {
      target_type: 'organization',
      period: 'hour',
      max_actions: 1,
    });
    const items = [];
    for (let nonce = 0; nonce < 2; nonce++) {
      items.push(
        await signEoa(svc, w.owner, {
          name: 'mint',
          params: { template_id: w.templateId },
          nonce,
        }),
      );
    }
    const res = await call('POST', '/ebus/actions/batch', w.owner.headers, { actions: items });
    expect(res.statusCode, res.body).toBe(200);
    const results = res.json().results as {
      status: string;
      error?: { code: number; message: string };
    }[];
    expect(results.map((r) => r.status)).toEqual(['applied', 'refused']);
    expect(results[1]!.error).toMatchObject({ code: 7, message: expect.stringContaining(p.id) });
  });
});
