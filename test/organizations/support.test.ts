import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { fakeApiKey } from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

async function send(headers: Record<string, string>, payload: Record<string, unknown>) {
  return svc.app.inject({ method: 'POST', url: '/support', headers, payload });
}

describe('POST /support', () => {
  it("stores a message as the caller's wallet and reads it back", async () => {
    const m = await createMember(svc, { role: 'member' });
    const res = await send(m.headers, { title: 'Help', content: 'It broke.' });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id as string;
    expect(id).toMatch(/^msg_/);
    const got = await svc.app.inject({ method: 'GET', url: `/support/${id}`, headers: m.headers });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({
      id,
      organization_id: m.orgId,
      wallet_id: m.walletId,
      title: 'Help',
      content: 'It broke.',
      when_created: svc.clock.now().toISOString(),
    });
    const own = await send(m.headers, { title: 'Again', content: 'x', wallet_id: m.walletId });
    expect(own.statusCode).toBe(200);
  });

  it("refuses a person writing as someone else's wallet with 403 code 7", async () => {
    const m = await createMember(svc);
    const colleague = await createMember(svc, { orgId: m.orgId, role: 'member' });
    const res = await send(m.headers, { title: 't', content: 'c', wallet_id: colleague.walletId });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
  });

  it('needs wallet_id from an API key, and a wallet that is an active member', async () => {
    const owner = await createMember(svc);
    const colleague = await createMember(svc, { orgId: owner.orgId, role: 'viewer' });
    const stranger = await createMember(svc);
    const key = fakeApiKey(svc, { orgId: owner.orgId, walletId: owner.walletId, role: 'admin' });
    const missing = await send(key, { title: 't', content: 'c' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 3 });
    expect(missing.json().details.fields[0].field).toBe('wallet_id');
    const foreign = await send(key, { title: 't', content: 'c', wallet_id: stranger.walletId });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe(5);
    const ok = await send(key, { title: 't', content: 'c', wallet_id: colleague.walletId });
    expect(ok.statusCode).toBe(200);
    const { rows } = await svc.container.db.execute<{ wallet_id: string; api_key_id: string }>(
      sql`SELECT wallet_id, api_key_id FROM support_messages WHERE id = ${ok.json().id as string}`,
    );
    expect(rows[0]).toMatchObject({
      wallet_id: colleague.walletId,
      api_key_id: expect.stringMatching(/^key_/),
    });
  });

  it('refuses missing, oversize or unknown fields with 400 code 3', async () => {
    const m = await createMember(svc);
    for (const payload of [
      { title: 't' },
      { content: 'c' },
      { title: '', content: 'c' },
      { title: 'x'.repeat(201), content: 'c' },
      { title: 't', content: 'x'.repeat(20_001) },
      { title: 't', content: 'c', urgent: true },
      { title: 't', content: { text: 'c' } },
    ]) {
      const res = await send(m.headers, payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 60)).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses a viewer (no support.create) with 403 code 7 and no credential with 401 code 16', async () => {
    const v = await createMember(svc, { role: 'viewer' });
    const res = await send(v.headers, { title: 't', content: 'c' });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
    const anonymous = await send({}, { title: 't', content: 'c' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe(16);
  });
});

describe('GET /support and /support/{id}', () => {
  let a: TestMember;
  let b: TestMember;
  let other: TestMember;
  const ids: string[] = [];
  beforeAll(async () => {
    a = await createMember(svc);
    b = await createMember(svc, { orgId: a.orgId, role: 'member' });
    other = await createMember(svc);
    for (const who of [a, b, a]) {
      svc.clock.advance(1000);
      ids.push((await send(who.headers, { title: 'q', content: 'c' })).json().id as string);
    }
    await send(other.headers, { title: 'elsewhere', content: 'c' });
  });

  async function list(qs = '', who = a) {
    const res = await svc.app.inject({
      method: 'GET',
      url: `/support?${qs}`,
      headers: who.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ messages: { id: string }[]; next: string; has_more: boolean }>();
  }

  it("lists the organization's messages only, newest first, with filters and pages", async () => {
    expect((await list()).messages.map((m) => m.id)).toEqual([...ids].reverse());
    expect((await list(`wallet_id=${b.walletId}`)).messages.map((m) => m.id)).toEqual([ids[1]]);
    expect((await list(`id=${ids[0]}`)).messages.map((m) => m.id)).toEqual([ids[0]]);
    expect((await list(`org-id=${other.orgId}`)).messages).toEqual([]);
    const page = await list('limit=2&order=asc');
    expect(page.messages.map((m) => m.id)).toEqual(ids.slice(0, 2));
    expect((await list(`limit=2&order=asc&next=${page.next}`)).messages.map((m) => m.id)).toEqual([
      ids[2],
    ]);
    const viewer = await createMember(svc, { orgId: a.orgId, role: 'viewer' });
    expect((await list('', viewer)).messages).toHaveLength(3);
  });

  it('filters by date', async () => {
    const all = await svc.app.inject({
      method: 'GET',
      url: `/support/${ids[1]}`,
      headers: a.headers,
    });
    const t = all.json().when_created as string;
    expect((await list(`when_created[$gte]=${t}`)).messages).toHaveLength(2);
    expect((await list(`when_created[$gt]=${t}`)).messages).toHaveLength(1);
    expect((await list(`when_created[$lte]=${t}`)).messages).toHaveLength(2);
  });

  it("answers 404 code 5 for another organization's message or a missing one", async () => {
    for (const id of [ids[0]!, 'msg_01HZZZZZZZZZZZZZZZZZZZZZZZ']) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/support/${id}`,
        headers: other.headers,
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe(5);
    }
  });

  it('refuses a bad limit or date with 400 code 3 and no credential with 401', async () => {
    for (const qs of ['limit=500', 'when_created[$lt]=tomorrow']) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/support?${qs}`,
        headers: a.headers,
      });
      expect(res.statusCode, qs).toBe(400);
    }
    expect((await svc.app.inject({ method: 'GET', url: '/support' })).statusCode).toBe(401);
    expect((await svc.app.inject({ method: 'GET', url: `/support/${ids[0]}` })).statusCode).toBe(
      401,
    );
  });
});

describe('POST /request-access', () => {
  const ask = (payload: Record<string, unknown>, remoteAddress = '203.0.113.7') =>
    svc.app.inject({ method: 'POST', url: '/request-access', payload, remoteAddress });

  it('stores a request without credentials and answers {}', async () => {
    const res = await ask(
      { feature: 'batches', email: 'Curious@Example.test', details: 'please' },
      '198.51.100.1',
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    const { rows } = await svc.container.db.execute<{
      feature: string;
      email: string;
      client_ip: string;
    }>(sql`SELECT feature, email, client_ip FROM access_requests WHERE client_ip = '198.51.100.1'`);
    expect(rows).toEqual([
      { feature: 'batches', email: 'curious@example.test', client_ip: '198.51.100.1' },
    ]);
  });

  it('limits each client address to 5 an hour with 429 code 8 and Retry-After', async () => {
    for (let i = 0; i < 5; i++) {
      svc.clock.advance(60_000);
      expect((await ask({ feature: 'f', email: 'a@example.test' })).statusCode).toBe(200);
    }
    const refused = await ask({ feature: 'f', email: 'a@example.test' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe(8);
    // The oldest of the five was 4 minutes before the last: it leaves the window in 56 minutes.
    expect(refused.headers['retry-after']).toBe(String(56 * 60));
    expect((await ask({ feature: 'f', email: 'a@example.test' }, '203.0.113.8')).statusCode).toBe(
      200,
    );
    svc.clock.advance(56 * 60_000);
    expect((await ask({ feature: 'f', email: 'a@example.test' })).statusCode).toBe(200);
  });

  it('counts an IPv6 client by its /64: hopping addresses within it gains nothing', async () => {
    const from = (n: number) => `2001:db8:1:2::${n.toString(16)}`;
    for (let i = 1; i <= 5; i++) {
      expect((await ask({ feature: 'f', email: 'b@example.test' }, from(i))).statusCode).toBe(200);
    }
    const refused = await ask({ feature: 'f', email: 'b@example.test' }, from(6));
    expect(refused.statusCode).toBe(429);
    // Another /64 is another client.
    const other = await ask({ feature: 'f', email: 'b@example.test' }, '2001:db8:1:3::1');
    expect(other.statusCode).toBe(200);
    const { rows } = await svc.container.db.execute<{ client_ip: string }>(
      sql`SELECT DISTINCT client_ip FROM access_requests WHERE email = 'b@example.test'`,
    );
    expect(rows.map((r) => r.client_ip).sort()).toEqual(['2001:db8:1:2::/64', '2001:db8:1:3::/64']);
  });

  it('refuses a missing feature, a bad email or unknown fields with 400 code 3', async () => {
    for (const payload of [
      { email: 'a@example.test' },
      { feature: 'f', email: 'nope' },
      { feature: 'f', email: 'a@example.test', details: 'x'.repeat(5001) },
      { feature: 'f', email: 'a@example.test', plan: 'gold' },
    ]) {
      const res = await ask(payload, '192.0.2.99');
      expect(res.statusCode, JSON.stringify(payload).slice(0, 60)).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });
});
