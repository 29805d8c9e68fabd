import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { getTemplateForAction, validateCustom } from '../../src/modules/templates/service.js';
import { newId } from '../../src/lib/ids.js';
import { LINK_URL_REASON } from '../../src/lib/link-url.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { insertObject } from '../helpers/objects.js';
import { useTestService } from '../helpers/harness.js';

let owner: TestMember;

const face = {
  id: 'front',
  url: 'https://cdn.example/front.png',
  config: { scale: 2 },
  content: '',
};

async function create(m: TestMember, body: Record<string, unknown>) {
  return svc.app.inject({ method: 'POST', url: '/templates', headers: m.headers, payload: body });
}

const svc = useTestService();
beforeAll(async () => {
  owner = await createMember(svc, { role: 'owner' });
});

describe('POST /templates', () => {
  it('creates a template and answers its id; GET returns every field', async () => {
    const res = await create(owner, {
      name: 'Ticket',
      description: 'A concert ticket',
      category: 'tickets',
      faces: [face],
      actions: ['mint', 'transfer', 'redeem'],
      custom_schema: { type: 'object', properties: { seat: { type: 'string' } } },
      is_public: true,
    });
    expect(res.statusCode).toBe(200);
    const { id } = res.json();
    expect(id).toMatch(/^tpl_/);
    const got = await svc.app.inject({
      method: 'GET',
      url: `/templates/${id}`,
      headers: owner.headers,
    });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({
      id,
      name: 'Ticket',
      description: 'A concert ticket',
      category: 'tickets',
      faces: [face],
      actions: ['mint', 'transfer', 'redeem'],
      custom_schema: { type: 'object', properties: { seat: { type: 'string' } } },
      is_public: true,
      when_created: svc.clock.now().toISOString(),
      when_modified: svc.clock.now().toISOString(),
    });
  });

  it('fills defaults for the optional fields', async () => {
    const { id } = (await create(owner, { name: 'Bare' })).json();
    const got = (
      await svc.app.inject({ method: 'GET', url: `/templates/${id}`, headers: owner.headers })
    ).json();
    expect(got).toMatchObject({
      description: '',
      category: '',
      faces: [],
      actions: [],
      custom_schema: null,
      is_public: false,
    });
  });

  it('refuses a custom_schema that does not compile with 400 code 3', async () => {
    for (const custom_schema of [
      { type: 'nonsense' },
      { properties: { a: { minLength: 'x' } } },
      { tpye: 'object' },
    ]) {
      const res = await create(owner, { name: 'Bad', custom_schema });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(3);
      expect(res.json().details.fields[0].field).toBe('custom_schema');
    }
  });

  it('refuses missing, mistyped, oversize and unknown fields with 400 code 3', async () => {
    const bodies = [
      {},
      { name: ['a', 'b'] },
      { name: 'x'.repeat(201) },
      { name: 'x', actions: ['fly'] },
      { name: 'x', faces: [{ id: 'a' }] },
      { name: 'x', extra: true },
      { name: 'x', faces: Array.from({ length: 33 }, (_, i) => ({ ...face, id: `f${i}` })) },
    ];
    for (const body of bodies) {
      const res = await create(owner, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses a face link others could not render safely (400 code 3), on create and on replace', async () => {
    const { id } = (await create(owner, { name: 'Linked' })).json();
    for (const url of [
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      'java\tscript:alert(1)',
      'vbscript:msgbox(1)',
      'data:text/html,<script>alert(1)</script>',
      'data:image/svg+xml,<svg onload=alert(1)>',
      'file:///etc/passwd',
    ]) {
      const faces = [{ ...face, url }];
      for (const res of [
        await create(owner, { name: 'x', faces }),
        await svc.app.inject({
          method: 'PUT',
          url: `/templates/${id}`,
          headers: owner.headers,
          payload: { faces },
        }),
      ]) {
        expect(res.statusCode, url).toBe(400);
        expect(res.json().code).toBe(3);
        expect(res.json().details.fields[0]).toEqual({
          field: 'faces.0.url',
          reason: LINK_URL_REASON,
        });
      }
    }
    for (const url of ['https://cdn.example/a.png', 'ipfs://bafy/a.png', '/files/a.png', '']) {
      const res = await create(owner, { name: 'x', faces: [{ ...face, url }] });
      expect(res.statusCode, url).toBe(200);
    }
  });

  it('refuses a caller without credentials (401 code 16) or without templates.create (403 code 7)', async () => {
    const anon = await svc.app.inject({
      method: 'POST',
      url: '/templates',
      payload: { name: 'x' },
    });
    expect(anon.statusCode).toBe(401);
    expect(anon.json().code).toBe(16);
    const viewer = await createMember(svc, { role: 'viewer', orgId: owner.orgId });
    const res = await create(viewer, { name: 'x' });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
  });
});

describe('GET /templates', () => {
  it("lists only the organization's own templates, newest first, in pages", async () => {
    const m = await createMember(svc);
    const other = await createMember(svc);
    await create(other, { name: 'Not mine' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await create(m, { name: `T${i}` })).json().id);
      svc.clock.advance(1000);
    }
    const first = await svc.app.inject({
      method: 'GET',
      url: '/templates?limit=2',
      headers: m.headers,
    });
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.templates.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
    expect(page1.has_more).toBe(true);
    const second = (
      await svc.app.inject({
        method: 'GET',
        url: `/templates?limit=2&next=${page1.next}`,
        headers: m.headers,
      })
    ).json();
    expect(second.templates.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect(second).toMatchObject({ next: '', has_more: false });
  });

  it('refuses a limit over 100 and an unknown sortBy with 400 code 3', async () => {
    for (const q of ['limit=101', 'sortBy=name', 'next=%%%']) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/templates?${q}`,
        headers: owner.headers,
      });
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses an anonymous caller with 401 code 16', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/templates' });
    expect(res.statusCode).toBe(401);
  });
});

describe('GET /templates/{id}', () => {
  it("answers 404 for another organization's template and for a missing one", async () => {
    const other = await createMember(svc);
    const { id } = (await create(other, { name: 'Theirs' })).json();
    for (const url of [`/templates/${id}`, `/templates/${newId('template')}`]) {
      const res = await svc.app.inject({ method: 'GET', url, headers: owner.headers });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe(5);
    }
  });

  it('refuses a malformed id with 400 code 3 naming the parameter', async () => {
    for (const url of ['/templates/tpl_missing', '/templates/not-an-id', '/public/templates/x']) {
      const res = await svc.app.inject({ method: 'GET', url, headers: owner.headers });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code).toBe(3);
      expect(res.json().details.fields[0].field).toBe('id');
    }
  });
});

describe('PUT /templates/{id}', () => {
  it('replaces the fields given and moves when_modified', async () => {
    const { id } = (await create(owner, { name: 'Old', category: 'c' })).json();
    svc.clock.advance(5000);
    const res = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: owner.headers,
      payload: { name: 'New', actions: ['mint'] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, name: 'New', category: 'c', actions: ['mint'] });
    expect(res.json().when_modified).toBe(svc.clock.now().toISOString());
    expect(res.json().when_modified).not.toBe(res.json().when_created);
  });

  it("copies is_public to the template's objects so the public list follows it", async () => {
    const { id } = (await create(owner, { name: 'Flip', is_public: false })).json();
    const objectId = await insertObject(svc, { templateId: id });
    const isPublic = async () =>
      (
        await svc.container.db.execute<{ is_public: boolean }>(
          sql`SELECT is_public FROM objects WHERE id = ${objectId}`,
        )
      ).rows[0]!.is_public;
    expect(await isPublic()).toBe(false);
    await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: owner.headers,
      payload: { is_public: true },
    });
    expect(await isPublic()).toBe(true);
    const listed = (
      await svc.app.inject({ method: 'GET', url: `/public/objects?id=${objectId}` })
    ).json();
    expect(listed.objects).toHaveLength(1);
    await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: owner.headers,
      payload: { is_public: false },
    });
    expect(await isPublic()).toBe(false);
  });

  it('refuses an empty body, a bad schema (400 code 3), a member role (403) and another org (404)', async () => {
    const { id } = (await create(owner, { name: 'Guarded' })).json();
    const empty = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: owner.headers,
      payload: {},
    });
    expect(empty.statusCode).toBe(400);
    const bad = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: owner.headers,
      payload: { custom_schema: { type: 12 } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(3);
    const member = await createMember(svc, { role: 'member', orgId: owner.orgId });
    const forbidden = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: member.headers,
      payload: { name: 'x' },
    });
    expect(forbidden.statusCode).toBe(403);
    const other = await createMember(svc);
    const notFound = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: other.headers,
      payload: { name: 'x' },
    });
    expect(notFound.statusCode).toBe(404);
  });
});

describe('GET /public/templates/{id}', () => {
  it('answers a public template without credentials and 404 for a private one', async () => {
    const pub = (await create(owner, { name: 'Open', is_public: true })).json().id;
    const priv = (await create(owner, { name: 'Closed' })).json().id;
    const ok = await svc.app.inject({ method: 'GET', url: `/public/templates/${pub}` });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ id: pub, name: 'Open', is_public: true });
    const hidden = await svc.app.inject({ method: 'GET', url: `/public/templates/${priv}` });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().code).toBe(5);
  });
});

describe('the event bus interface', () => {
  it('getTemplateForAction returns what mint needs, null for a missing template', async () => {
    const { id } = (
      await create(owner, { name: 'For bus', actions: ['mint'], faces: [face], is_public: true })
    ).json();
    const t = await getTemplateForAction(svc.container.db, id);
    expect(t).toMatchObject({
      id,
      organization_id: owner.orgId,
      actions: ['mint'],
      faces: [face],
      custom_schema: null,
      is_public: true,
    });
    expect(await getTemplateForAction(svc.container.db, 'tpl_missing')).toBeNull();
  });

  it('validateCustom checks custom against the schema, and recompiles after an update', async () => {
    const { id } = (
      await create(owner, {
        name: 'Typed',
        custom_schema: {
          type: 'object',
          properties: { level: { type: 'integer' } },
          required: ['level'],
          additionalProperties: false,
        },
      })
    ).json();
    const t1 = (await getTemplateForAction(svc.container.db, id))!;
    expect(validateCustom(t1, { level: 3 })).toEqual({ ok: true });
    const bad = validateCustom(t1, { level: 'high' });
    expect(bad).toMatchObject({ ok: false, fields: [{ field: 'custom.level' }] });
    expect(validateCustom(t1, {})).toMatchObject({
      ok: false,
      fields: [{ field: 'custom.level', reason: expect.any(String) }],
    });
    // The clock does not move: the cache key must still change.
    await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: owner.headers,
      payload: { custom_schema: { type: 'object', properties: { level: { type: 'string' } } } },
    });
    const t2 = (await getTemplateForAction(svc.container.db, id))!;
    expect(validateCustom(t2, { level: 'high' })).toEqual({ ok: true });
    expect(validateCustom(t2, { level: 3 }).ok).toBe(false);
  });
});

describe('GET /templates/{id}/versions (issue 32)', () => {
  it('lists the versions newest first, pages with before, and refuses who may not read', async () => {
    const { id } = (await create(owner, { name: 'V1', faces: [face], is_public: false })).json();
    for (const name of ['V2', 'V3']) {
      svc.clock.advance(1000);
      const put = await svc.app.inject({
        method: 'PUT',
        url: `/templates/${id}`,
        headers: owner.headers,
        payload: { name },
      });
      expect(put.statusCode, put.body).toBe(200);
    }
    const get = (m: TestMember | null, qs = '', tpl = id as string) =>
      svc.app.inject({
        method: 'GET',
        url: `/templates/${tpl}/versions${qs}`,
        headers: m ? m.headers : {},
      });
    const all = await get(owner);
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json().versions.map((v: { name: string }) => v.name)).toEqual(['V3', 'V2', 'V1']);
    expect(all.json().versions[0]).toMatchObject({ template_id: id, version: 3, faces: [face] });
    const page = (await get(owner, '?limit=1&before=3')).json();
    expect([page.versions.map((v: { version: number }) => v.version), page.has_more]).toEqual([
      [2],
      true,
    ]);
    // A viewer reads them; another organization and no credential do not; bad input is 400.
    const viewer = await createMember(svc, { role: 'viewer', orgId: owner.orgId });
    expect((await get(viewer)).statusCode).toBe(200);
    const stranger = await createMember(svc, { role: 'owner' });
    expect([(await get(stranger)).statusCode, (await get(stranger)).json().code]).toEqual([404, 5]);
    expect((await get(null)).statusCode).toBe(401);
    expect((await get(owner, '?limit=0')).json().code).toBe(3);
    expect((await get(owner, '', 'nope')).json().code).toBe(3);
  });
});
