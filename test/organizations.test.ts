import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember } from './helpers/fixtures.js';
import {
  createStandaloneAccount,
  deposit,
  fakeApiKey,
  expectBalanceIsLedgerSum,
} from './helpers/orgs.js';
import { startTestService, type TestService } from './helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.stop();
});

async function createOrg(headers: Record<string, string>, payload: Record<string, unknown>) {
  const res = await svc.app.inject({ method: 'POST', url: '/organizations', headers, payload });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as string;
}

describe('POST /organizations', () => {
  it('creates an organization whose creator is its owner, self sign-up off by default', async () => {
    const account = await createStandaloneAccount(svc);
    const id = await createOrg(account.headers, { name: 'Acme', description: 'widgets' });
    expect(id).toMatch(/^org_/);
    const res = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${id}`,
      headers: account.headers,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id,
      name: 'Acme',
      description: 'widgets',
      settings: { allow_self_signup: false },
      role: 'owner',
    });
    expect(res.json().when_created).toBe(svc.clock.now().toISOString());
  });

  it('takes initial settings', async () => {
    const m = await createMember(svc);
    const id = await createOrg(m.headers, {
      name: 'Open',
      settings: { allow_self_signup: true },
    });
    const res = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${id}`,
      headers: m.headers,
    });
    expect(res.json().settings).toEqual({ allow_self_signup: true });
  });

  it('refuses a missing, oversize or unknown field with 400 code 3', async () => {
    const m = await createMember(svc);
    for (const payload of [
      {},
      { name: '' },
      { name: 'x'.repeat(201) },
      { name: 'ok', extra: 1 },
      { name: 'ok', settings: { allow_self_signup: 'yes' } },
      { name: 'ok', settings: { unknown: true } },
    ]) {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/organizations',
        headers: m.headers,
        payload,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses a call without credentials with 401 code 16', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/organizations',
      payload: { name: 'x' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe(16);
  });

  it("makes an API key's creator the owner, and needs organizations.create", async () => {
    const creator = await createMember(svc, { role: 'owner' });
    const weak = fakeApiKey(svc, {
      orgId: creator.orgId,
      walletId: creator.walletId,
      permissions: ['organizations.read'],
    });
    const refused = await svc.app.inject({
      method: 'POST',
      url: '/organizations',
      headers: weak,
      payload: { name: 'by key' },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe(7);

    const key = fakeApiKey(svc, {
      orgId: creator.orgId,
      walletId: creator.walletId,
      role: 'owner',
    });
    const id = await createOrg(key, { name: 'by key' });
    const res = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${id}`,
      headers: creator.headers,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().role).toBe('owner');
  });
});

describe('GET /organizations', () => {
  it('lists only the organizations the caller belongs to, with its role in each', async () => {
    const a = await createMember(svc, { role: 'viewer' });
    await createMember(svc); // someone else's organization
    const own = await createOrg(a.headers, { name: 'Second of mine' });
    const res = await svc.app.inject({ method: 'GET', url: '/organizations', headers: a.headers });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.organizations.map((o: { id: string }) => o.id).sort()).toEqual(
      [a.orgId, own].sort(),
    );
    const roles = Object.fromEntries(
      body.organizations.map((o: { id: string; role: string }) => [o.id, o.role]),
    );
    expect(roles).toEqual({ [a.orgId]: 'viewer', [own]: 'owner' });
    expect(body).toMatchObject({ next: '', has_more: false });
  });

  it('filters by id, name, autocomplete and role_name', async () => {
    const a = await createMember(svc, { role: 'member' });
    const blue = await createOrg(a.headers, { name: 'Blue Harbour' });
    const green = await createOrg(a.headers, { name: 'Green_Field 100%' });
    const list = async (qs: string) => {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/organizations?${qs}`,
        headers: a.headers,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res
        .json()
        .organizations.map((o: { id: string }) => o.id)
        .sort();
    };
    expect(await list(`id=${blue}`)).toEqual([blue]);
    expect(await list('name=blue%20harbour')).toEqual([blue]);
    expect(await list('autocomplete=harb')).toEqual([blue]);
    expect(await list('autocomplete=100%25')).toEqual([green]);
    expect(await list('autocomplete=_')).toEqual([green]);
    expect(await list('role_name=owner')).toEqual([blue, green].sort());
    expect(await list('role_name=member')).toEqual([a.orgId]);
  });

  it('pages with limit and next, in either order and by name', async () => {
    const a = await createMember(svc);
    const made = [a.orgId];
    for (const name of ['C', 'A', 'B']) {
      svc.clock.advance(1000);
      made.push(await createOrg(a.headers, { name }));
    }
    const seen: string[] = [];
    let next = '';
    for (let i = 0; i < 3; i++) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/organizations?limit=2&order=asc${next ? `&next=${next}` : ''}`,
        headers: a.headers,
      });
      const body = res.json();
      seen.push(...body.organizations.map((o: { id: string }) => o.id));
      next = body.next;
      if (!body.has_more) break;
    }
    expect(seen).toEqual(made);
    const byName = await svc.app.inject({
      method: 'GET',
      url: '/organizations?sortBy=name&order=asc',
      headers: a.headers,
    });
    expect(byName.json().organizations.map((o: { name: string }) => o.name)).toEqual([
      'A',
      'B',
      'C',
      'Test Org',
    ]);
  });

  it('refuses a bad limit, sort field, role or cursor with 400 code 3', async () => {
    const a = await createMember(svc);
    for (const qs of ['limit=101', 'limit=0', 'sortBy=balance', 'role_name=king', 'next=%%%']) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/organizations?${qs}`,
        headers: a.headers,
      });
      expect(res.statusCode, qs).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses a call without credentials with 401 code 16', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/organizations' });
    expect(res.statusCode).toBe(401);
  });
});

describe('GET, PATCH /organizations/{id}', () => {
  it('answers 404 code 5 for an organization the caller is not a member of', async () => {
    const a = await createMember(svc);
    const b = await createMember(svc);
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await svc.app.inject({
        method,
        url: `/organizations/${b.orgId}`,
        headers: a.headers,
        ...(method === 'PATCH' ? { payload: { name: 'mine now' } } : {}),
      });
      expect(res.statusCode, method).toBe(404);
      expect(res.json().code).toBe(5);
    }
    const missing = await svc.app.inject({
      method: 'GET',
      url: '/organizations/org_01HZZZZZZZZZZZZZZZZZZZZZZZ',
      headers: a.headers,
    });
    expect(missing.statusCode).toBe(404);
  });

  it('updates name, description and settings, and moves when_modified', async () => {
    const a = await createMember(svc, { role: 'admin' });
    svc.clock.advance(5000);
    const res = await svc.app.inject({
      method: 'PATCH',
      url: `/organizations/${a.orgId}`,
      headers: a.headers,
      payload: {
        name: 'Renamed',
        description: 'now described',
        settings: { allow_self_signup: true },
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    const got = (
      await svc.app.inject({ method: 'GET', url: `/organizations/${a.orgId}`, headers: a.headers })
    ).json();
    expect(got).toMatchObject({
      name: 'Renamed',
      description: 'now described',
      settings: { allow_self_signup: true },
      role: 'admin',
      when_modified: svc.clock.now().toISOString(),
    });
    expect(got.when_created).not.toBe(got.when_modified);
  });

  it('refuses a viewer or member the update with 403 code 7, and bad bodies with 400', async () => {
    const owner = await createMember(svc);
    for (const role of ['viewer', 'member'] as const) {
      const m = await createMember(svc, { role, orgId: owner.orgId });
      const res = await svc.app.inject({
        method: 'PATCH',
        url: `/organizations/${owner.orgId}`,
        headers: m.headers,
        payload: { name: 'x' },
      });
      expect(res.statusCode, role).toBe(403);
      expect(res.json().code).toBe(7);
    }
    const bad = await svc.app.inject({
      method: 'PATCH',
      url: `/organizations/${owner.orgId}`,
      headers: owner.headers,
      payload: { name: 'x', balance_wei: '100' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(3);
  });

  it("acts with the caller's role in the organization named by the path, not the token's", async () => {
    const viewer = await createMember(svc, { role: 'viewer' });
    const mine = await createOrg(viewer.headers, { name: 'Owned elsewhere' });
    const res = await svc.app.inject({
      method: 'PATCH',
      url: `/organizations/${mine}`,
      headers: viewer.headers,
      payload: { name: 'Still mine' },
    });
    expect(res.statusCode).toBe(200);
    const refused = await svc.app.inject({
      method: 'PATCH',
      url: `/organizations/${viewer.orgId}`,
      headers: viewer.headers,
      payload: { name: 'not allowed' },
    });
    expect(refused.statusCode).toBe(403);
  });
});

describe('DELETE /organizations/{id}', () => {
  it('lets only an owner delete', async () => {
    const owner = await createMember(svc);
    const admin = await createMember(svc, { role: 'admin', orgId: owner.orgId });
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `/organizations/${owner.orgId}`,
      headers: admin.headers,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
  });

  it('refuses while the organization holds a balance or other members, saying which', async () => {
    const owner = await createMember(svc);
    await deposit(svc, owner.orgId, '1.25');
    await createMember(svc, { role: 'member', orgId: owner.orgId });
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `/organizations/${owner.orgId}`,
      headers: owner.headers,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(9);
    expect(res.json().message).toContain('balance of 1.25 ONS');
    expect(res.json().message).toContain('1 other active member');

    const lonely = await createMember(svc);
    await deposit(svc, lonely.orgId, '2');
    const balanceOnly = await svc.app.inject({
      method: 'DELETE',
      url: `/organizations/${lonely.orgId}`,
      headers: lonely.headers,
    });
    expect(balanceOnly.json().message).toMatch(/balance of 2 ONS$/);
    await expectBalanceIsLedgerSum(svc, lonely.orgId);

    const crowded = await createMember(svc);
    await createMember(svc, { role: 'viewer', orgId: crowded.orgId });
    await createMember(svc, { role: 'viewer', orgId: crowded.orgId });
    const membersOnly = await svc.app.inject({
      method: 'DELETE',
      url: `/organizations/${crowded.orgId}`,
      headers: crowded.headers,
    });
    expect(membersOnly.json().message).toMatch(/2 other active members$/);
    expect(membersOnly.json().message).not.toContain('balance');
  });

  it('soft-deletes an empty organization: it disappears from reads and lists', async () => {
    const owner = await createMember(svc);
    const second = await createOrg(owner.headers, { name: 'to delete' });
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `/organizations/${second}`,
      headers: owner.headers,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    const get = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${second}`,
      headers: owner.headers,
    });
    expect(get.statusCode).toBe(404);
    const list = await svc.app.inject({
      method: 'GET',
      url: '/organizations',
      headers: owner.headers,
    });
    expect(list.json().organizations.map((o: { id: string }) => o.id)).toEqual([owner.orgId]);
    const { rows } = await svc.container.db.execute<{ deleted_at: Date | null }>(
      (await import('drizzle-orm')).sql`SELECT deleted_at FROM organizations WHERE id = ${second}`,
    );
    expect(rows[0]!.deleted_at).not.toBeNull();
    const again = await svc.app.inject({
      method: 'DELETE',
      url: `/organizations/${second}`,
      headers: owner.headers,
    });
    expect(again.statusCode).toBe(404);
  });
});

describe('POST /organizations/switch', () => {
  it("answers a token pair in the target organization's context", async () => {
    const a = await createMember(svc, { role: 'viewer' });
    const other = await createOrg(a.headers, { name: 'Switch target' });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      headers: a.headers,
      payload: { organization_id: other },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 900,
      wallet: { id: a.walletId, address: a.address, organization_id: other },
    });
    expect(body.refresh_token).toMatch(/^onsr_/);
    // The new token acts as owner of the target: it may invite members there.
    const headers = { authorization: `Bearer ${body.access_token}` };
    const invite = await svc.app.inject({
      method: 'POST',
      url: `/organizations/${other}/members`,
      headers,
      payload: { email: 'new@example.test', role: 'member' },
    });
    expect(invite.statusCode).toBe(200);
    const deposits = await svc.app.inject({ method: 'GET', url: '/payments/deposits', headers });
    expect(deposits.statusCode).toBe(200);
  });

  it('refuses an organization the caller is not a member of with 403 code 7', async () => {
    const a = await createMember(svc);
    const b = await createMember(svc);
    for (const organization_id of [b.orgId, 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ']) {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/organizations/switch',
        headers: a.headers,
        payload: { organization_id },
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe(7);
    }
  });

  it('refuses an API key with 403 code 7, no credential with 401, a bad body with 400', async () => {
    const a = await createMember(svc);
    const key = fakeApiKey(svc, { orgId: a.orgId, walletId: a.walletId, role: 'owner' });
    const byKey = await svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      headers: key,
      payload: { organization_id: a.orgId },
    });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().code).toBe(7);
    const anonymous = await svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      payload: { organization_id: a.orgId },
    });
    expect(anonymous.statusCode).toBe(401);
    const bad = await svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      headers: a.headers,
      payload: { organization: a.orgId },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(3);
  });
});
