import { beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { deposit, fakeApiKey, lastMessageTo } from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';

/**
 * Acceptance 6: every route of the organizations feature, called by the owner of a
 * second organization (who holds every permission there, so only tenancy can stop them)
 * and by a viewer of the first. Another organization's records → 404 code 5 (or simply
 * absent from lists); a missing permission → 403 code 7.
 */
let owner: TestMember;
let outsider: TestMember;
let viewer: TestMember;
let memberId: string;
let depositId: string;
let messageId: string;
let invite: { id: string; token: string };

const svc = useTestService();
beforeAll(async () => {
  owner = await createMember(svc, { role: 'owner' });
  viewer = await createMember(svc, { role: 'viewer', orgId: owner.orgId });
  memberId = (await createMember(svc, { role: 'member', orgId: owner.orgId })).memberId;
  outsider = await createMember(svc, { role: 'owner' });
  depositId = (await deposit(svc, owner.orgId, '5')).deposit.id;
  await deposit(svc, outsider.orgId, '1');
  messageId = (
    await svc.app.inject({
      method: 'POST',
      url: '/support',
      headers: owner.headers,
      payload: { title: 'private', content: 'owner only' },
    })
  ).json().id;
  const res = await svc.app.inject({
    method: 'POST',
    url: `/organizations/${owner.orgId}/members`,
    headers: owner.headers,
    payload: { email: 'tenancy-invite@example.test', role: 'member' },
  });
  const mail = await lastMessageTo(svc, 'tenancy-invite@example.test');
  invite = { id: res.json().id, token: /Invitation token: (\S+)/.exec(mail!.body)![1]! };
});

type Call = {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: () => string;
  payload?: () => object;
};

const A = () => owner.orgId;
const orgScoped: Record<string, Call & { viewer: 200 | 403 }> = {
  'GET /organizations/{id}': { method: 'GET', url: () => `/organizations/${A()}`, viewer: 200 },
  'PATCH /organizations/{id}': {
    method: 'PATCH',
    url: () => `/organizations/${A()}`,
    payload: () => ({ name: 'taken over' }),
    viewer: 403,
  },
  'DELETE /organizations/{id}': {
    method: 'DELETE',
    url: () => `/organizations/${A()}`,
    viewer: 403,
  },
  'GET /organizations/{id}/members': {
    method: 'GET',
    url: () => `/organizations/${A()}/members`,
    viewer: 403,
  },
  'POST /organizations/{id}/members': {
    method: 'POST',
    url: () => `/organizations/${A()}/members`,
    payload: () => ({ email: 'intruder@example.test', role: 'owner' }),
    viewer: 403,
  },
  'PATCH /organizations/{id}/members/{memberId}': {
    method: 'PATCH',
    url: () => `/organizations/${A()}/members/${memberId}`,
    payload: () => ({ role: 'admin' }),
    viewer: 403,
  },
  'DELETE /organizations/{id}/members/{memberId}': {
    method: 'DELETE',
    url: () => `/organizations/${A()}/members/${memberId}`,
    viewer: 403,
  },
  'GET /organizations/{id}/balance': {
    method: 'GET',
    url: () => `/organizations/${A()}/balance`,
    viewer: 200,
  },
  'GET /organizations/{id}/balance/history': {
    method: 'GET',
    url: () => `/organizations/${A()}/balance/history?interval=day`,
    viewer: 200,
  },
  'GET /support/{messageId}': { method: 'GET', url: () => `/support/${messageId}`, viewer: 200 },
};

function call(c: Call, headers: Record<string, string>) {
  return svc.app.inject({
    method: c.method,
    url: c.url(),
    headers,
    ...(c.payload ? { payload: c.payload() } : {}),
  });
}

describe('tenancy: records of another organization', () => {
  for (const [name, c] of Object.entries(orgScoped)) {
    it(`${name} answers 404 code 5 to another organization's owner`, async () => {
      const res = await call(c, outsider.headers);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().code).toBe(5);
    });
  }

  it("PATCH and DELETE of a member through the caller's own organization path answer 404", async () => {
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await svc.app.inject({
        method,
        url: `/organizations/${outsider.orgId}/members/${memberId}`,
        headers: outsider.headers,
        ...(method === 'PATCH' ? { payload: { role: 'viewer' } } : {}),
      });
      expect(res.statusCode, method).toBe(404);
    }
  });

  it('GET /organizations leaves out organizations the caller does not belong to', async () => {
    for (const qs of ['', `id=${A()}`]) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/organizations?${qs}`,
        headers: outsider.headers,
      });
      expect(res.json().organizations.map((o: { id: string }) => o.id)).not.toContain(A());
    }
  });

  it('POST /organizations/switch into another organization answers 403 code 7', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      headers: outsider.headers,
      payload: { organization_id: A() },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
  });

  it("GET /payments/deposits never shows another organization's deposits, whatever the filters", async () => {
    for (const qs of ['', `org-id=${A()}`, `id=${depositId}`]) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/payments/deposits?${qs}`,
        headers: outsider.headers,
      });
      expect(res.statusCode).toBe(200);
      expect(
        res.json().deposits.map((d: { organization_id: string }) => d.organization_id),
      ).not.toContain(A());
    }
  });

  it("GET /support never shows another organization's messages, whatever the filters", async () => {
    for (const qs of ['', `org-id=${A()}`, `id=${messageId}`, `wallet_id=${owner.walletId}`]) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/support?${qs}`,
        headers: outsider.headers,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().messages).toEqual([]);
    }
  });

  it("POST /support refuses an API key naming another organization's wallet with 404", async () => {
    const key = fakeApiKey(svc, {
      orgId: outsider.orgId,
      walletId: outsider.walletId,
      role: 'owner',
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/support',
      headers: key,
      payload: { title: 't', content: 'c', wallet_id: owner.walletId },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe(5);
  });

  it("an API key reaches only its own organization's paths", async () => {
    const key = fakeApiKey(svc, {
      orgId: outsider.orgId,
      walletId: outsider.walletId,
      role: 'owner',
    });
    const res = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${A()}/balance`,
      headers: key,
    });
    expect(res.statusCode).toBe(404);
    const own = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${outsider.orgId}/balance`,
      headers: key,
    });
    expect(own.statusCode).toBe(200);
  });

  it("GET /organizations/{id}/invite with another organization's path answers 404", async () => {
    const res = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${outsider.orgId}/invite?token=${invite.token}&member_id=${invite.id}`,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe(5);
  });

  it('left the first organization untouched', async () => {
    const org = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${A()}`,
      headers: owner.headers,
    });
    expect(org.json().name).toBe('Test Org');
    const members = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${A()}/members`,
      headers: owner.headers,
    });
    expect(members.json().members.map((m: { email: string }) => m.email)).not.toContain(
      'intruder@example.test',
    );
    const balance = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${A()}/balance`,
      headers: owner.headers,
    });
    expect(balance.json().balance).toBe('5');
  });
});

describe('tenancy: a viewer of the organization', () => {
  for (const [name, c] of Object.entries(orgScoped)) {
    it(`${name} answers ${c.viewer === 200 ? '200' : '403 code 7'} to a viewer`, async () => {
      const res = await call(c, viewer.headers);
      expect(res.statusCode, res.body).toBe(c.viewer);
      if (c.viewer === 403) expect(res.json().code).toBe(7);
    });
  }

  it('GET /payments/deposits and POST /support answer 403 code 7; GET /support answers 200', async () => {
    const deposits = await svc.app.inject({
      method: 'GET',
      url: '/payments/deposits',
      headers: viewer.headers,
    });
    expect(deposits.statusCode).toBe(403);
    expect(deposits.json().code).toBe(7);
    const send = await svc.app.inject({
      method: 'POST',
      url: '/support',
      headers: viewer.headers,
      payload: { title: 't', content: 'c' },
    });
    expect(send.statusCode).toBe(403);
    expect(send.json().code).toBe(7);
    const list = await svc.app.inject({ method: 'GET', url: '/support', headers: viewer.headers });
    expect(list.statusCode).toBe(200);
    expect(list.json().messages.map((m: { id: string }) => m.id)).toEqual([messageId]);
  });

  it('GET /organizations, POST /organizations and POST /organizations/switch are open to a viewer', async () => {
    const list = await svc.app.inject({
      method: 'GET',
      url: '/organizations',
      headers: viewer.headers,
    });
    expect(list.json().organizations).toEqual([
      expect.objectContaining({ id: A(), role: 'viewer' }),
    ]);
    const created = await svc.app.inject({
      method: 'POST',
      url: '/organizations',
      headers: viewer.headers,
      payload: { name: "viewer's own" },
    });
    expect(created.statusCode).toBe(200);
    const sw = await svc.app.inject({
      method: 'POST',
      url: '/organizations/switch',
      headers: viewer.headers,
      payload: { organization_id: A() },
    });
    expect(sw.statusCode).toBe(200);
  });

  it('POST /request-access needs no credential at all', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/request-access',
      payload: { feature: 'tenancy', email: 'v@example.test' },
    });
    expect(res.statusCode).toBe(200);
  });
});
