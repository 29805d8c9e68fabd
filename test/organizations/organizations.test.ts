import { describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import { createStandaloneAccount, fakeApiKey, postOrganization } from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

const createOrg = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  postOrganization(svc, headers, payload);

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
