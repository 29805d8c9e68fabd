import { beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { insertActionLog, insertObject, insertTemplate } from '../helpers/objects.js';
import { useTestService } from '../helpers/harness.js';

let m: TestMember;
let other: TestMember;
let tpl: string;
let dragons: string;
const o: Record<string, string> = {};
type Obj = { id: string };
const ids = (body: { objects: Obj[] }) => body.objects.map((x) => x.id);
const t0 = new Date('2026-05-01T00:00:00.000Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

async function get(url: string, member: TestMember = m) {
  return svc.app.inject({ method: 'GET', url, headers: member.headers });
}

const svc = useTestService();
beforeAll(async () => {
  m = await createMember(svc, { role: 'member' });
  other = await createMember(svc);
  tpl = await insertTemplate(svc, m.orgId, { name: 'Plain things' });
  dragons = await insertTemplate(svc, m.orgId, { name: 'Dragon collection' });
  o.sword = await insertObject(svc, {
    templateId: tpl,
    metadata: { name: 'Flaming Sword', description: 'hot steel', category: 'weapons' },
    custom: { color: 'red', level: 3, size: { width: 2 } },
    owner: '0x' + 'a'.repeat(40),
    createdAt: at(1),
  });
  o.shield = await insertObject(svc, {
    templateId: tpl,
    metadata: { name: 'Oak Shield', description: 'wooden', category: 'armour' },
    custom: { color: 'brown', level: '3' },
    owner: '0x' + 'b'.repeat(40),
    createdAt: at(2),
  });
  o.egg = await insertObject(svc, {
    templateId: dragons,
    metadata: { name: 'Egg', description: 'speckled' },
    custom: { color: 'red' },
    owner: '0x' + 'b'.repeat(40),
    createdAt: at(3),
  });
  const foreignTpl = await insertTemplate(svc, other.orgId, { name: 'Sword of another org' });
  await insertObject(svc, {
    templateId: foreignTpl,
    metadata: { name: 'Flaming Sword' },
    custom: { color: 'red' },
  });
});

describe('GET /indexer/search', () => {
  it('finds objects by words of name, description and category, only in the organization', async () => {
    expect(ids((await get('/indexer/search?q=sword')).json())).toEqual([o.sword]);
    expect(ids((await get('/indexer/search?q=wooden')).json())).toEqual([o.shield]);
    expect(ids((await get('/indexer/search?q=weapons')).json())).toEqual([o.sword]);
    expect(ids((await get('/indexer/search?q=flaming%20steel')).json())).toEqual([o.sword]);
    expect(ids((await get('/indexer/search?q=flaming%20wooden')).json())).toEqual([]);
  });

  it("finds objects by their template's name", async () => {
    expect(ids((await get('/indexer/search?q=dragon')).json())).toEqual([o.egg]);
  });

  it('pages with the list conventions', async () => {
    const p1 = (await get('/indexer/search?q=things&limit=1')).json();
    expect(ids(p1)).toEqual([o.shield]);
    expect(p1.has_more).toBe(true);
    const p2 = (await get(`/indexer/search?q=things&limit=1&next=${p1.next}`)).json();
    expect(ids(p2)).toEqual([o.sword]);
    expect(p2.has_more).toBe(false);
  });

  it('refuses a missing or oversize q with 400 code 3, no credentials with 401', async () => {
    for (const url of [
      '/indexer/search',
      `/indexer/search?q=${'x'.repeat(201)}`,
      '/indexer/search?q=',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code).toBe(3);
    }
    expect((await svc.app.inject({ method: 'GET', url: '/indexer/search?q=x' })).statusCode).toBe(
      401,
    );
  });
});

describe('GET /indexer/query', () => {
  it('matches custom field equality, typed or as text, nested and combined', async () => {
    expect(ids((await get('/indexer/query?custom.color=red')).json())).toEqual([o.egg, o.sword]);
    expect(ids((await get('/indexer/query?custom.level=3')).json())).toEqual([o.shield, o.sword]);
    expect(ids((await get('/indexer/query?custom.color=red&custom.level=3')).json())).toEqual([
      o.sword,
    ]);
    expect(ids((await get('/indexer/query?custom.size.width=2')).json())).toEqual([o.sword]);
    expect(ids((await get('/indexer/query?custom.color=blue')).json())).toEqual([]);
  });

  it('filters by template and owner', async () => {
    expect(ids((await get(`/indexer/query?template_id=${dragons}`)).json())).toEqual([o.egg]);
    expect(
      ids((await get(`/indexer/query?owner=0x${'b'.repeat(40)}&custom.color=red`)).json()),
    ).toEqual([o.egg]);
  });

  it('refuses too many, repeated or badly named custom filters with 400 code 3', async () => {
    const many = Array.from({ length: 9 }, (_, i) => `custom.f${i}=1`).join('&');
    for (const q of [
      many,
      'custom.color=red&custom.color=blue',
      'custom.a%20b=1',
      'custom.=1',
      'limit=500',
    ]) {
      const res = await get(`/indexer/query?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses no credentials with 401 code 16', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/indexer/query?custom.color=red' });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe(16);
  });
});

describe('GET /indexer/objects/{id}/history', () => {
  it("lists the object's action logs newest first as action log records", async () => {
    const mint = await insertActionLog(svc, {
      orgId: m.orgId,
      walletId: m.walletId,
      objectId: o.sword!,
      templateId: tpl,
      name: 'mint',
      nonce: 0,
      createdAt: at(10),
    });
    const transfer = await insertActionLog(svc, {
      orgId: m.orgId,
      walletId: m.walletId,
      objectId: o.sword!,
      templateId: tpl,
      name: 'transfer',
      nonce: 1,
      createdAt: at(20),
    });
    await insertActionLog(svc, {
      orgId: m.orgId,
      walletId: m.walletId,
      objectId: o.shield!,
      templateId: tpl,
      name: 'mint',
      nonce: 2,
    });
    const res = await get(`/indexer/objects/${o.sword}/history`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.action_logs.map((a: { id: string }) => a.id)).toEqual([transfer, mint]);
    expect(body.action_logs[1]).toEqual({
      id: mint,
      hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      name: 'mint',
      wallet: '0x' + '2'.repeat(40),
      organization_id: m.orgId,
      signature_type: 'eoa',
      signature: '0x00',
      nonce: 0,
      params: { object_id: o.sword },
      expires: null,
      object_id: o.sword,
      template_id: tpl,
      template_version: null, // a row written without one, as before versions were kept
      fee_wei: '1000',
      batch_id: null,
      log_index: null,
      when_created: at(10).toISOString(),
    });
    expect(body).toMatchObject({ next: '', has_more: false });
    const page = (await get(`/indexer/objects/${o.sword}/history?limit=1`)).json();
    expect(page.has_more).toBe(true);
  });

  it("answers 404 for another organization's object and 403 for a viewer (no actions.read)", async () => {
    expect((await get(`/indexer/objects/${o.sword}/history`, other)).statusCode).toBe(404);
    const viewer = await createMember(svc, { role: 'viewer', orgId: m.orgId });
    const res = await get(`/indexer/objects/${o.sword}/history`, viewer);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
    expect(
      (await svc.app.inject({ method: 'GET', url: `/indexer/objects/${o.sword}/history` }))
        .statusCode,
    ).toBe(401);
  });
});
