import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../helpers/api-keys.js';
import { createMember, createOrganization, type TestMember } from '../helpers/fixtures.js';
import { bearer, lastCode, signUp, type Tokens } from '../helpers/identity.js';
import { memberSteps } from '../helpers/members.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

const { membersUrl, invite, confirm, listMembers } = memberSteps(() => svc);

describe('roles and the owner rules', () => {
  it('changes a role, and the change applies to the next request at once', async () => {
    const owner = await createMember(svc);
    const admin = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
    expect((await listMembers(admin)).members.length).toBe(2);
    const res = await svc.app.inject({
      method: 'PATCH',
      url: `${membersUrl(owner.orgId)}/${admin.memberId}`,
      headers: owner.headers,
      payload: { role: 'viewer' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    const after = await svc.app.inject({
      method: 'GET',
      url: membersUrl(owner.orgId),
      headers: admin.headers,
    });
    expect(after.statusCode).toBe(403);
    const me = (await listMembers(owner, `id=${admin.memberId}`)).members[0]!;
    expect(me.role).toBe('viewer');
  });

  it('lets only an owner promote to owner or change an owner', async () => {
    const owner = await createMember(svc);
    const second = await createMember(svc, { orgId: owner.orgId, role: 'owner' });
    const admin = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
    const member = await createMember(svc, { orgId: owner.orgId, role: 'member' });
    const patch = (by: TestMember, target: string, role: string) =>
      svc.app.inject({
        method: 'PATCH',
        url: `${membersUrl(owner.orgId)}/${target}`,
        headers: by.headers,
        payload: { role },
      });
    expect((await patch(admin, member.memberId, 'owner')).statusCode).toBe(403);
    expect((await patch(admin, second.memberId, 'admin')).statusCode).toBe(403);
    const removeOwner = await svc.app.inject({
      method: 'DELETE',
      url: `${membersUrl(owner.orgId)}/${second.memberId}`,
      headers: admin.headers,
    });
    expect(removeOwner.statusCode).toBe(403);
    expect((await patch(admin, member.memberId, 'admin')).statusCode).toBe(200);
    expect((await patch(owner, member.memberId, 'owner')).statusCode).toBe(200);
    expect((await patch(owner, second.memberId, 'member')).statusCode).toBe(200);
  });

  it('refuses to demote or remove the last owner with 400 code 9', async () => {
    const owner = await createMember(svc);
    const demote = await svc.app.inject({
      method: 'PATCH',
      url: `${membersUrl(owner.orgId)}/${owner.memberId}`,
      headers: owner.headers,
      payload: { role: 'admin' },
    });
    expect(demote.statusCode).toBe(400);
    expect(demote.json().code).toBe(9);
    expect(demote.json().message).toContain('last owner');
    const remove = await svc.app.inject({
      method: 'DELETE',
      url: `${membersUrl(owner.orgId)}/${owner.memberId}`,
      headers: owner.headers,
    });
    expect(remove.statusCode).toBe(400);
    expect(remove.json().code).toBe(9);
  });

  it('does not count an accepted owner invitation with no wallet yet as an owner', async () => {
    const owner = await createMember(svc);
    const pending = await invite(owner, `no-account-${Date.now()}@example.test`, 'owner');
    expect((await confirm(owner.orgId, pending.token, pending.id)).statusCode).toBe(200);
    /** The owner's attempts to demote (PATCH) and to remove (DELETE) a member. */
    const demoteAndRemove = async (memberId: string) => {
      const url = `${membersUrl(owner.orgId)}/${memberId}`;
      const headers = owner.headers;
      const demote = await svc.app.inject({
        method: 'PATCH',
        url,
        headers,
        payload: { role: 'admin' },
      });
      return [demote, await svc.app.inject({ method: 'DELETE', url, headers })];
    };
    // The only owner anyone can act as may still neither step down nor leave …
    for (const res of await demoteAndRemove(owner.memberId)) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().message).toContain('last owner');
    }
    // … while the unbound one can be demoted and withdrawn, as it leaves the owner in place.
    for (const res of await demoteAndRemove(pending.id)) expect(res.statusCode, res.body).toBe(200);
  });

  it('an owner demoted while its own request waits for the owners acts as what it is then', async () => {
    const a = await createMember(svc);
    const b = await createMember(svc, { orgId: a.orgId, role: 'owner' });
    await createMember(svc, { orgId: a.orgId, role: 'owner' }); // a third: B is not the last
    // Another transaction demotes A and holds the owners' rows, as a concurrent PATCH does.
    const other = await svc.database.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE members SET role = 'admin' WHERE id = $1`, [a.memberId]);
      // A, still an owner when its request starts, tries to demote B; it waits for the lock.
      const pending = svc.app.inject({
        method: 'PATCH',
        url: `${membersUrl(a.orgId)}/${b.memberId}`,
        headers: a.headers,
        payload: { role: 'viewer' },
      });
      await new Promise((r) => setTimeout(r, 200));
      await other.query('COMMIT');
      const res = await pending;
      // Read again once the lock is its own: A is an admin now, and may not touch an owner.
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().message).toContain('only an owner');
    } finally {
      other.release();
    }
    const { rows } = await svc.container.db.execute<{ role: string }>(
      sql`SELECT role FROM members WHERE id = ${b.memberId}`,
    );
    expect(rows[0]!.role).toBe('owner');
  });

  it('keeps one owner when two owners demote each other at the same time', async () => {
    const a = await createMember(svc);
    const b = await createMember(svc, { orgId: a.orgId, role: 'owner' });
    const [ra, rb] = await Promise.all([
      svc.app.inject({
        method: 'PATCH',
        url: `${membersUrl(a.orgId)}/${b.memberId}`,
        headers: a.headers,
        payload: { role: 'admin' },
      }),
      svc.app.inject({
        method: 'PATCH',
        url: `${membersUrl(a.orgId)}/${a.memberId}`,
        headers: b.headers,
        payload: { role: 'admin' },
      }),
    ]);
    const codes = [ra.statusCode, rb.statusCode].sort();
    // The second either finds no owner left to act as (403) or the last owner (400).
    expect(codes[0]).toBe(200);
    expect([400, 403]).toContain(codes[1]);
    const { rows } = await svc.container.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n
      FROM members WHERE organization_id = ${a.orgId} AND role = 'owner' AND status = 'active'`);
    expect(rows[0]!.n).toBe(1);
  });

  it('refuses a bad role with 400 code 3 and an unknown member with 404 code 5', async () => {
    const owner = await createMember(svc);
    const bad = await svc.app.inject({
      method: 'PATCH',
      url: `${membersUrl(owner.orgId)}/${owner.memberId}`,
      headers: owner.headers,
      payload: { role: 'emperor' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(3);
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await svc.app.inject({
        method,
        url: `${membersUrl(owner.orgId)}/mem_01HZZZZZZZZZZZZZZZZZZZZZZZ`,
        headers: owner.headers,
        ...(method === 'PATCH' ? { payload: { role: 'viewer' } } : {}),
      });
      expect(res.statusCode, method).toBe(404);
      expect(res.json().code).toBe(5);
    }
  });
});

describe('removing members', () => {
  it('removes a member: its tokens for that organization stop working at once', async () => {
    const owner = await createMember(svc);
    const m = await createMember(svc, { orgId: owner.orgId, role: 'member' });
    const before = await svc.app.inject({ method: 'GET', url: '/support', headers: m.headers });
    expect(before.statusCode).toBe(200);
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `${membersUrl(owner.orgId)}/${m.memberId}`,
      headers: owner.headers,
    });
    expect(res.statusCode).toBe(200);
    const after = await svc.app.inject({ method: 'GET', url: '/support', headers: m.headers });
    expect(after.statusCode).toBe(401);
    const again = await svc.app.inject({
      method: 'DELETE',
      url: `${membersUrl(owner.orgId)}/${m.memberId}`,
      headers: owner.headers,
    });
    expect(again.statusCode).toBe(404);
  });

  it('withdraws an invitation: its token no longer confirms', async () => {
    const owner = await createMember(svc);
    const { id, token } = await invite(owner, 'withdrawn@example.test');
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `${membersUrl(owner.orgId)}/${id}`,
      headers: owner.headers,
    });
    expect(res.statusCode).toBe(200);
    expect((await confirm(owner.orgId, token, id)).statusCode).toBe(404);
  });

  it('lets an owner leave when another owner remains', async () => {
    const a = await createMember(svc);
    await createMember(svc, { orgId: a.orgId, role: 'owner' });
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `${membersUrl(a.orgId)}/${a.memberId}`,
      headers: a.headers,
    });
    expect(res.statusCode).toBe(200);
  });
});

/**
 * A removed member's API keys stop for good (docs/permissions.md): the removal revokes them,
 * as a delete does, so the member's return (each way a wallet comes back) brings none back.
 */
describe("a removed member's API keys", () => {
  const WAYS_BACK = ['invited again', 'joins again by self sign-up'] as const;

  const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
    svc.app.inject({ method: 'POST', url, payload, headers });

  for (const way of WAYS_BACK) {
    it(`are revoked at the removal and stay so when the member ${way}`, async () => {
      const orgId = await createOrganization(svc, { allowSelfSignup: true });
      const owner = await createMember(svc, { orgId });
      // A person who holds their email, joins, and is made admin.
      const person = await signUp(svc);
      expect((await post('/auth/verification-code', {}, bearer(person))).statusCode).toBe(200);
      const code = await lastCode(svc, person.email);
      expect((await post('/auth/verify', { code }, bearer(person))).statusCode).toBe(200);
      const login = { email: person.email, password: person.password, organization_id: orgId };
      const joined = await post('/auth/login', login);
      expect(joined.statusCode, joined.body).toBe(200);
      const tokens = joined.json<Tokens>();
      const { rows } = await svc.container.db.execute<{ id: string }>(sql`SELECT id FROM members
        WHERE organization_id = ${orgId} AND wallet_id = ${tokens.wallet.id}`);
      const memberId = rows[0]!.id;
      const promoted = await svc.app.inject({
        method: 'PATCH',
        url: `${membersUrl(orgId)}/${memberId}`,
        headers: owner.headers,
        payload: { role: 'admin' },
      });
      expect(promoted.statusCode, promoted.body).toBe(200);
      const asPerson = { ...owner, walletId: tokens.wallet.id, headers: bearer(tokens) };
      const key = await createApiKey(svc, asPerson, ['organizations.read']);
      const read = () =>
        svc.app.inject({ method: 'GET', url: `/organizations/${orgId}`, headers: key.headers });
      expect((await read()).statusCode).toBe(200);

      const removed = await svc.app.inject({
        method: 'DELETE',
        url: `${membersUrl(orgId)}/${memberId}`,
        headers: owner.headers,
      });
      expect(removed.statusCode, removed.body).toBe(200);
      const { rows: keys } = await svc.container.db.execute<{ deleted_at: unknown }>(
        sql`SELECT deleted_at FROM api_keys WHERE id = ${key.id}`,
      );
      expect(keys[0]!.deleted_at).not.toBeNull();
      expect((await read()).statusCode).toBe(401);

      if (way === 'invited again') {
        const again = await invite(owner, person.email, 'admin');
        expect((await confirm(orgId, again.token, again.id)).statusCode).toBe(200);
      } else {
        expect((await post('/auth/login', login)).statusCode).toBe(200);
      }
      const { rows: back } = await svc.container.db.execute<{ status: string }>(sql`SELECT status
        FROM members WHERE organization_id = ${orgId} AND wallet_id = ${tokens.wallet.id}
          AND status = 'active'`);
      expect(back).toHaveLength(1);
      // Read afresh, as another instance (or this one 30 s later) would: a self sign-up does
      // not empty this instance's cache of the key's refusal.
      svc.container.apiKeyVerifier.forgetAll();
      const res = await read();
      expect([res.statusCode, res.json<{ code: number }>().code]).toEqual([401, 16]);
    });
  }
});
