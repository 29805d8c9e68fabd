/**
 * Low balance (docs/policies.md, "Low balance"): an organization's threshold, `low` and
 * `actions_left` in its balance, and one email to each owner and admin per crossing and at
 * most one per 24 hours, sent by the notifier (off the request path). The test runs the
 * notifier's pass itself; the loop may also run meanwhile, and a claim is atomic either way.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import { ACTION_FEE, createSigner, createTemplate, fund, signEoa } from '../helpers/ebus.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const FEE = ACTION_FEE;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

async function notices(orgName: string) {
  const { rows } = await svc.container.db.execute<{ recipient: string; subject: string }>(sql`
    SELECT recipient, subject FROM outbox_messages
    WHERE kind = 'low-balance' AND subject LIKE ${`${orgName}:%`} ORDER BY recipient`);
  return rows;
}

async function world() {
  const owner = await createSigner(svc);
  const name = `Org ${owner.orgId}`;
  await svc.container.db.execute(
    sql`UPDATE organizations SET name = ${name} WHERE id = ${owner.orgId}`,
  );
  const admin = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
  const member = await createMember(svc, { orgId: owner.orgId, role: 'member' });
  await fund(svc, owner.orgId, FEE * 5n);
  const templateId = await createTemplate(svc, owner.orgId);
  let nonce = 0;
  const mint = async () => {
    const body = await signEoa(svc, owner, {
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
    expect(res.statusCode, res.body).toBe(200);
    nonce++;
  };
  const set = (wei: string | null, headers = owner.headers, orgId = owner.orgId) =>
    svc.app.inject({
      method: 'PUT',
      url: `/organizations/${orgId}/balance/low-threshold`,
      headers,
      payload: { low_balance_wei: wei },
    });
  const balance = async () =>
    (
      await svc.app.inject({
        method: 'GET',
        url: `/organizations/${owner.orgId}/balance`,
        headers: owner.headers,
      })
    ).json<{ low: boolean; low_balance_wei: string | null; actions_left: string }>();
  return { owner, admin, member, name, mint, set, balance };
}

describe('low balance', () => {
  it('one notice per crossing to owners and admins, at most one per 24 hours', async () => {
    const w = await world();
    const res = await w.set((FEE * 3n).toString());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      low_balance_wei: (FEE * 3n).toString(),
      low: false,
      actions_left: '5',
    });
    await w.mint(); // 4 fees left: not below
    await svc.container.lowBalance.pass();
    expect(await notices(w.name)).toEqual([]);
    await w.mint(); // 3 left: not below (below means less than)
    await w.mint(); // 2 left: below
    expect(await w.balance()).toMatchObject({ low: true, actions_left: '2' });
    await svc.container.lowBalance.pass();
    await svc.container.lowBalance.pass();
    const told = await notices(w.name);
    expect(told.map((n) => n.recipient).sort()).toEqual([w.admin.email, w.owner.email].sort());
    expect(told[0]!.subject).toContain('balance below');
    // Still below, more spent: no second notice for the same crossing.
    await w.mint();
    await svc.container.lowBalance.pass();
    expect(await notices(w.name)).toHaveLength(2);

    // Back above (a deposit), below again within the day: told only once 24 hours have passed.
    await fund(svc, w.owner.orgId, FEE * 5n);
    await svc.container.lowBalance.pass(); // re-arms
    expect((await w.balance()).low).toBe(false);
    for (let i = 0; i < 4; i++) await w.mint();
    expect((await w.balance()).low).toBe(true);
    await svc.container.lowBalance.pass();
    expect(await notices(w.name)).toHaveLength(2);
    svc.clock.advance(24 * 3_600_000 + 1_000);
    await svc.container.lowBalance.pass();
    expect(await notices(w.name)).toHaveLength(4);
    // The member was never told.
    expect((await notices(w.name)).some((n) => n.recipient === w.member.email)).toBe(false);
  });

  it('mails only confirmed addresses: an admin whose account only names one gets nothing', async () => {
    const w = await world();
    // The admin's account names an address it never proved (anyone's, for all we know).
    await svc.container.db.execute(sql`UPDATE wallets SET email_confirmed_at = NULL
      WHERE id = (SELECT wallet_id FROM members WHERE id = ${w.admin.memberId})`);
    expect((await w.set((FEE * 5n).toString())).statusCode).toBe(200);
    await w.mint(); // 4 fees left: below
    await svc.container.lowBalance.pass();
    expect((await notices(w.name)).map((n) => n.recipient)).toEqual([w.owner.email]);
  });

  it('no threshold: never low, never told; removing it stops the notices', async () => {
    const w = await world();
    expect(await w.balance()).toMatchObject({ low_balance_wei: null, low: false });
    for (let i = 0; i < 4; i++) await w.mint();
    await svc.container.lowBalance.pass();
    expect(await notices(w.name)).toEqual([]);
    await w.set((FEE * 3n).toString());
    await w.set(null);
    await svc.container.lowBalance.pass();
    expect(await notices(w.name)).toEqual([]);
  });

  it('who may set it, and bad input', async () => {
    const w = await world();
    const refusedMember = await w.set('1', w.member.headers);
    expect(refusedMember.statusCode).toBe(403);
    expect(refusedMember.json().code).toBe(7);
    const stranger = await createMember(svc, { role: 'owner' });
    const other = await w.set('1', stranger.headers);
    expect([403, 404]).toContain(other.statusCode);
    const none = await svc.app.inject({
      method: 'PUT',
      url: `/organizations/${w.owner.orgId}/balance/low-threshold`,
      payload: { low_balance_wei: '1' },
    });
    expect(none.statusCode).toBe(401);
    for (const bad of ['-1', '1.5', 'abc', '1'.repeat(80), 5]) {
      const res = await w.set(bad as string);
      expect(res.statusCode, String(bad)).toBe(400);
      expect(res.json().code).toBe(3);
    }
    expect((await w.balance()).low_balance_wei).toBeNull();
    // An admin may.
    expect((await w.set('1', w.admin.headers)).statusCode).toBe(200);
  });
});
