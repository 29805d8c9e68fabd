import { describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import {
  deposit,
  fakeApiKey,
  expectBalanceIsLedgerSum,
  postOrganization,
} from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

const createOrg = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  postOrganization(svc, headers, payload);

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
