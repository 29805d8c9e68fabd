import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { newId } from '../../src/lib/ids.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';

/**
 * A template's faces take at most 64 KiB of JSON, and an organization holds at most 1,000
 * templates (docs/objects.md, "Templates: limits").
 */
const MAX_FACES_BYTES = 65_536;
const MAX_TEMPLATES = 1_000;

const svc = useTestService();
let owner: TestMember;
beforeAll(async () => {
  owner = await createMember(svc, { role: 'owner' });
});

const face = (id: string, content: string) => ({
  id,
  url: `https://cdn.example/${id}.png`,
  config: {},
  content,
});
const bytesOf = (faces: unknown[]) => Buffer.byteLength(JSON.stringify(faces));

/** `count` faces whose JSON takes exactly `total` bytes (ASCII content, spread evenly). */
function facesOf(count: number, total: number, char = 'a'): ReturnType<typeof face>[] {
  const empty = Array.from({ length: count }, (_, i) => face(`f${i}`, ''));
  let left = (total - bytesOf(empty)) / Buffer.byteLength(char);
  return empty.map((f, i) => {
    const n = Math.floor(left / (count - i));
    left -= n;
    return { ...f, content: char.repeat(n) };
  });
}

const rows: { shape: string; faces: ReturnType<typeof face>[]; ok: boolean }[] = [
  { shape: 'one face at the limit', faces: facesOf(1, MAX_FACES_BYTES), ok: true },
  { shape: 'one face a byte past it', faces: facesOf(1, MAX_FACES_BYTES + 1), ok: false },
  { shape: 'one face at the content maximum', faces: [face('f0', 'a'.repeat(65_536))], ok: false },
  { shape: '32 faces at the limit together', faces: facesOf(32, MAX_FACES_BYTES), ok: true },
  { shape: '32 medium faces past it', faces: facesOf(32, 32 * 4_000), ok: false },
  { shape: '8 faces a byte past it', faces: facesOf(8, MAX_FACES_BYTES + 1), ok: false },
  // Counted in UTF-8 bytes, not characters: 33,000 characters, 66,000 bytes.
  { shape: 'two-byte characters past it', faces: facesOf(1, 66_080, 'é'), ok: false },
];

async function send(method: 'POST' | 'PUT', url: string, payload: Record<string, unknown>) {
  return svc.app.inject({ method, url, headers: owner.headers, payload });
}

describe('the size of a template’s faces', () => {
  it.each(rows)('$shape: accepted $ok on POST and on PUT', async ({ faces, ok }) => {
    const created = await send('POST', '/templates', { name: 'Big', faces });
    const made = await send('POST', '/templates', { name: 'Small' });
    const replaced = await send('PUT', `/templates/${made.json().id as string}`, { faces });
    for (const res of [created, replaced]) {
      if (ok) {
        expect(res.statusCode, res.body).toBe(200);
        continue;
      }
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({
        code: 3,
        message: `faces take ${bytesOf(faces)} bytes of JSON; a template's faces may take at most ${MAX_FACES_BYTES}`,
        details: {
          fields: [{ field: 'faces', reason: `more than ${MAX_FACES_BYTES} bytes of JSON` }],
          max_faces_bytes: MAX_FACES_BYTES,
        },
      });
    }
    if (!ok) {
      // Nothing saved: the replaced template keeps its faces.
      const got = await svc.app.inject({
        method: 'GET',
        url: `/templates/${made.json().id as string}`,
        headers: owner.headers,
      });
      expect(got.json().faces).toEqual([]);
    }
  });

  it('keeps a template stored larger readable and editable, but never saves it larger', async () => {
    const id = newId('template');
    const big = facesOf(4, 200_000);
    await svc.container.db.execute(sql`INSERT INTO templates
        (id, organization_id, name, description, category, faces, actions, is_public,
         created_at, updated_at)
      VALUES (${id}, ${owner.orgId}, 'Old', '', '', ${JSON.stringify(big)}::jsonb, '{mint}',
        false, now(), now())`);
    const got = await svc.app.inject({
      method: 'GET',
      url: `/templates/${id}`,
      headers: owner.headers,
    });
    expect(got.statusCode).toBe(200);
    expect(got.json().faces).toEqual(big);
    // A PUT without faces leaves them as they are; one carrying them is refused.
    expect((await send('PUT', `/templates/${id}`, { name: 'Renamed' })).statusCode).toBe(200);
    expect((await send('PUT', `/templates/${id}`, { faces: big })).statusCode).toBe(400);
    expect((await send('PUT', `/templates/${id}`, { faces: [] })).statusCode).toBe(200);
  });

  // Sent as text: JSON.stringify cannot write what the caller's JSON can say.
  const unencodable = [
    { value: '1e309', reason: 'Infinity is not allowed' },
    { value: '-1e400', reason: '-Infinity is not allowed' },
    { value: '[1, 2e308]', reason: 'Infinity is not allowed' },
  ];
  it.each(unencodable)(
    'refuses a face whose config holds $value on POST and on PUT, and stores nothing',
    async ({ value, reason }) => {
      const faces = `[{"id":"f0","url":"https://cdn.example/f0.png","config":{"a":${value}},"content":""}]`;
      const made = await send('POST', '/templates', { name: 'Small' });
      const id = made.json().id as string;
      const raw = (method: 'POST' | 'PUT', url: string, name: string) =>
        svc.app.inject({
          method,
          url,
          headers: { ...owner.headers, 'content-type': 'application/json' },
          payload: `{"name":"${name}","faces":${faces}}`,
        });
      const { rows: before } = await svc.container.db.execute<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM templates WHERE organization_id = ${owner.orgId}`,
      );
      for (const res of [
        await raw('POST', '/templates', 'Infinite'),
        await raw('PUT', `/templates/${id}`, 'Renamed'),
      ]) {
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toEqual({
          code: 3,
          message: `faces cannot be encoded: ${reason}`,
          details: { fields: [{ field: 'faces', reason }] },
        });
      }
      const { rows: after } = await svc.container.db.execute<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM templates WHERE organization_id = ${owner.orgId}`,
      );
      expect(after[0]!.n).toBe(before[0]!.n);
      const got = await svc.app.inject({
        method: 'GET',
        url: `/templates/${id}`,
        headers: owner.headers,
      });
      expect(got.json()).toMatchObject({ name: 'Small', faces: [] });
    },
  );

  it('refuses who must be refused before looking at the faces', async () => {
    const member = await createMember(svc, { orgId: owner.orgId, role: 'member' });
    const faces = facesOf(1, MAX_FACES_BYTES + 1);
    const anonymous = await svc.app.inject({
      method: 'POST',
      url: '/templates',
      payload: { name: 'x', faces },
    });
    expect(anonymous.statusCode).toBe(401);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/templates',
      headers: member.headers,
      payload: { name: 'x', faces },
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('templates per organization', () => {
  it(`answers RESOURCE_EXHAUSTED past ${MAX_TEMPLATES}, for that organization only`, async () => {
    const full = await createMember(svc, { role: 'owner' });
    await svc.container.db.execute(sql`INSERT INTO templates
        (id, organization_id, name, description, category, faces, actions, is_public,
         created_at, updated_at)
      SELECT 'tpl_fill' || g || ${full.orgId}, ${full.orgId}, 'Fill', '', '', '[]', '{}', false,
        now(), now()
      FROM generate_series(1, ${MAX_TEMPLATES - 1}) g`);
    const post = () =>
      svc.app.inject({
        method: 'POST',
        url: '/templates',
        headers: full.headers,
        payload: { name: 'One more' },
      });
    const last = await post();
    expect(last.statusCode, last.body).toBe(200);
    const refused = await post();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      code: 8,
      message: `an organization holds at most ${MAX_TEMPLATES} templates`,
      details: { max_templates: MAX_TEMPLATES },
    });
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM templates WHERE organization_id = ${full.orgId}`,
    );
    expect(rows[0]!.n).toBe(MAX_TEMPLATES);
    // Another organization is not concerned; editing a template of the full one still works.
    expect((await send('POST', '/templates', { name: 'Elsewhere' })).statusCode).toBe(200);
    const edit = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${last.json().id as string}`,
      headers: full.headers,
      payload: { name: 'Edited' },
    });
    expect(edit.statusCode, edit.body).toBe(200);
  });
});
