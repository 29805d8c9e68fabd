import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import ngeohash from 'ngeohash';
import { beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH } from '../../src/modules/objects/hashes.js';
import { newId } from '../../src/lib/ids.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { insertObject, insertTemplate } from '../helpers/objects.js';
import { useTestService } from '../helpers/harness.js';

let m: TestMember;
let publicTpl: string;
let privateTpl: string;
const faces = [
  { id: 'f1', url: 'https://cdn.example/1.png', config: { a: 1 }, content: '<b>hi</b>' },
];
const alice = '0x' + 'a'.repeat(40);
const bob = '0x' + 'b'.repeat(40);
const t0 = new Date('2026-03-01T00:00:00.000Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

// Independent of src/lib/hash.ts: RFC 8785 via the canonicalize package, SHA-256 via node.
const H = (v: unknown) => '0x' + createHash('sha256').update(canonicalize(v)!).digest('hex');

type Obj = { id: string };
const ids = (body: { objects: Obj[] }) => body.objects.map((o) => o.id);
const pub = async (q: string) => {
  const res = await svc.app.inject({ method: 'GET', url: `/public/objects${q}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

const o: Record<string, string> = {};

const svc = useTestService();
beforeAll(async () => {
  m = await createMember(svc, { role: 'viewer' });
  publicTpl = await insertTemplate(svc, m.orgId, {
    isPublic: true,
    faces,
    actions: ['mint', 'transfer'],
  });
  privateTpl = await insertTemplate(svc, m.orgId, { isPublic: false });
  o.paris = await insertObject(svc, {
    templateId: publicTpl,
    owner: alice,
    metadata: { name: 'Eiffel Badge', description: 'tower', category: 'badges' },
    custom: { color: 'red' },
    location: { latitude: 48.8584, longitude: 2.2945 },
    collectionId: 'col-1',
    createdAt: at(1),
    updatedAt: at(50),
  });
  o.london = await insertObject(svc, {
    templateId: publicTpl,
    owner: bob,
    metadata: { name: 'Big Ben Coin' },
    location: { latitude: 51.5007, longitude: -0.1246 },
    createdAt: at(2),
    updatedAt: at(2),
  });
  o.dropped = await insertObject(svc, {
    templateId: publicTpl,
    owner: alice,
    metadata: { name: 'Eiffel Dropped' },
    location: { latitude: 48.8584, longitude: 2.2946 },
    isDropped: true,
    createdAt: at(3),
    updatedAt: at(3),
  });
  o.redeemed = await insertObject(svc, {
    templateId: publicTpl,
    owner: bob,
    metadata: { name: 'big_ben%' },
    isRedeemed: true,
    collectionId: 'col-1',
    createdAt: at(4),
    updatedAt: at(4),
  });
  o.hidden = await insertObject(svc, { templateId: privateTpl, owner: alice, createdAt: at(5) });
});

describe('the object record', () => {
  it('has every field of the object record with the right types and hashes that recompute independently', async () => {
    const res = await svc.app.inject({
      method: 'GET',
      url: `/objects/${o.paris}`,
      headers: m.headers,
    });
    expect(res.statusCode).toBe(200);
    const r = res.json();
    expect(r).toEqual({
      id: o.paris,
      chain: { ownership_claimed: false },
      custom: { color: 'red' },
      custom_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      metadata: {
        name: 'Eiffel Badge',
        description: 'tower',
        category: 'badges',
        image: null,
        edition: 1,
      },
      owner: alice,
      template_id: publicTpl,
      location: {
        latitude: 48.8584,
        longitude: 2.2945,
        geo_hash: ngeohash.encode(48.8584, 2.2945, 9),
      },
      nonce: 0,
      version: 1,
      state_hash: expect.any(String),
      content_hash: expect.any(String),
      integrity_hash: expect.any(String),
      prev_integrity_hash: GENESIS_HASH,
      is_redeemed: false,
      is_dropped: false,
      collection_id: 'col-1',
      when_created: at(1).toISOString(),
      when_modified: at(50).toISOString(),
    });
    expect(r.location.geo_hash).toBe('u09tunquc');
    expect(r.custom_hash).toBe(H(r.custom));
    expect(r.content_hash).toBe(H({ metadata: r.metadata, faces }));
    expect(r.state_hash).toBe(
      H({
        owner: r.owner,
        location: r.location,
        custom_hash: r.custom_hash,
        is_redeemed: false,
        is_dropped: false,
      }),
    );
    const actionHash = H({ mint: o.paris });
    expect(r.integrity_hash).toBe(
      H({
        prev_integrity_hash: GENESIS_HASH,
        state_hash: r.state_hash,
        content_hash: r.content_hash,
        action_hash: actionHash,
      }),
    );
  });

  it('gives location null when the object has none', async () => {
    const r = (
      await svc.app.inject({ method: 'GET', url: `/objects/${o.redeemed}`, headers: m.headers })
    ).json();
    expect(r.location).toBeNull();
  });
});

describe('GET /objects and /objects/{id}', () => {
  it("lists the organization's objects (private templates included) newest first", async () => {
    const body = (
      await svc.app.inject({ method: 'GET', url: '/objects', headers: m.headers })
    ).json();
    expect(ids(body)).toEqual([o.hidden, o.redeemed, o.dropped, o.london, o.paris]);
    expect(body).toMatchObject({ next: '', has_more: false });
  });

  it('filters by owner, template, dropped, redeemed and dates', async () => {
    const q = async (s: string) =>
      ids(
        (await svc.app.inject({ method: 'GET', url: `/objects?${s}`, headers: m.headers })).json(),
      );
    expect(await q(`owner=${alice}`)).toEqual([o.hidden, o.dropped, o.paris]);
    expect(await q(`owner=${alice.toUpperCase().replace('0X', '0x')}`)).toEqual([
      o.hidden,
      o.dropped,
      o.paris,
    ]);
    expect(await q(`template_id=${privateTpl}`)).toEqual([o.hidden]);
    expect(await q('dropped=true')).toEqual([o.dropped]);
    expect(await q('redeemed=true')).toEqual([o.redeemed]);
    expect(await q('redeemed=false&dropped=false&order=asc')).toEqual([
      o.paris,
      o.london,
      o.hidden,
    ]);
    expect(
      await q(`when_created[$gte]=${at(2).toISOString()}&when_created[$lt]=${at(4).toISOString()}`),
    ).toEqual([o.dropped, o.london]);
    expect(await q(`when_modified[$gt]=${at(10).toISOString()}`)).toEqual([o.paris]);
  });

  it('pages with next and refuses bad list parameters with 400 code 3', async () => {
    const p1 = (
      await svc.app.inject({ method: 'GET', url: '/objects?limit=3', headers: m.headers })
    ).json();
    expect(p1.has_more).toBe(true);
    const p2 = (
      await svc.app.inject({
        method: 'GET',
        url: `/objects?limit=3&next=${p1.next}`,
        headers: m.headers,
      })
    ).json();
    expect([...ids(p1), ...ids(p2)]).toEqual([o.hidden, o.redeemed, o.dropped, o.london, o.paris]);
    for (const s of [
      'limit=101',
      'limit=0',
      'sortBy=owner',
      'dropped=maybe',
      'when_created[$gt]=yesterday',
    ]) {
      const res = await svc.app.inject({ method: 'GET', url: `/objects?${s}`, headers: m.headers });
      expect(res.statusCode, s).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it("answers 404 for another organization's object or a missing one, and 401 without credentials", async () => {
    const other = await createMember(svc);
    expect(
      (await svc.app.inject({ method: 'GET', url: `/objects/${o.paris}`, headers: other.headers }))
        .statusCode,
    ).toBe(404);
    expect(
      ids(
        (await svc.app.inject({ method: 'GET', url: '/objects', headers: other.headers })).json(),
      ),
    ).toEqual([]);
    const anon = await svc.app.inject({ method: 'GET', url: '/objects' });
    expect(anon.statusCode).toBe(401);
    expect(anon.json().code).toBe(16);
    // Every role reads objects; a 403 needs an API key without objects.read (API keys issue).
    const res = await svc.app.inject({
      method: 'GET',
      url: `/objects/${newId('object')}`,
      headers: m.headers,
    });
    expect(res.statusCode).toBe(404);
    // A malformed id is not a missing one (docs/api.md, "Identifiers").
    const malformed = await svc.app.inject({
      method: 'GET',
      url: '/objects/obj_missing',
      headers: m.headers,
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().details.fields[0].field).toBe('id');
  });
});

describe('GET /public/objects', () => {
  it('lists only objects of public templates, without dropped ones, with empty faces and actions', async () => {
    const body = await pub('');
    expect(ids(body)).toEqual([o.redeemed, o.london, o.paris]);
    expect(body).toMatchObject({ faces: [], actions: [], next: '', has_more: false });
  });

  it('includes dropped objects when asked', async () => {
    expect(ids(await pub('?include_dropped=true'))).toEqual([
      o.redeemed,
      o.dropped,
      o.london,
      o.paris,
    ]);
  });

  it("fills faces and actions for the returned objects' templates when asked", async () => {
    const body = await pub('?include_faces=true&include_actions=true&limit=1');
    expect(body.faces).toEqual([{ template_id: publicTpl, face: faces[0] }]);
    expect(body.actions).toEqual([{ template_id: publicTpl, actions: ['mint', 'transfer'] }]);
    expect((await pub('?include_actions=true')).faces).toEqual([]);
  });

  it('filters by id, owner, geohash prefix, collection and autocomplete', async () => {
    expect(ids(await pub(`?id=${o.london}`))).toEqual([o.london]);
    expect(ids(await pub(`?id=${o.hidden}`))).toEqual([]);
    expect(ids(await pub(`?owner=${bob}`))).toEqual([o.redeemed, o.london]);
    expect(ids(await pub('?geo_hash=u09'))).toEqual([o.paris]);
    expect(ids(await pub('?geo_hash=u09&include_dropped=true'))).toEqual([o.dropped, o.paris]);
    expect(ids(await pub(`?geo_hash=${ngeohash.encode(51.5007, -0.1246, 4)}`))).toEqual([o.london]);
    expect(ids(await pub('?collection_id=col-1'))).toEqual([o.redeemed, o.paris]);
    expect(ids(await pub('?autocomplete=eIFF'))).toEqual([o.paris]);
    expect(ids(await pub('?autocomplete=big'))).toEqual([o.redeemed, o.london]);
    // LIKE wildcards in the term are literal.
    expect(ids(await pub('?autocomplete=big_'))).toEqual([o.redeemed]);
    expect(ids(await pub('?autocomplete=%25'))).toEqual([]);
  });

  it('filters by the four date operators on creation and modification time', async () => {
    const t = (s: number) => encodeURIComponent(at(s).toISOString());
    expect(ids(await pub(`?when_created[$gt]=${t(2)}`))).toEqual([o.redeemed]);
    expect(ids(await pub(`?when_created[$gte]=${t(2)}`))).toEqual([o.redeemed, o.london]);
    expect(ids(await pub(`?when_created[$lt]=${t(2)}`))).toEqual([o.paris]);
    expect(ids(await pub(`?when_created[$lte]=${t(2)}`))).toEqual([o.london, o.paris]);
    expect(ids(await pub(`?when_modified[$gt]=${t(4)}`))).toEqual([o.paris]);
    expect(ids(await pub(`?when_modified[$gte]=${t(4)}`))).toEqual([o.redeemed, o.paris]);
    expect(ids(await pub(`?when_modified[$lt]=${t(4)}`))).toEqual([o.london]);
    expect(ids(await pub(`?when_modified[$lte]=${t(4)}`))).toEqual([o.redeemed, o.london]);
  });

  it('sorts by when_created or when_modified in either order and pages through with next', async () => {
    expect(ids(await pub('?order=asc'))).toEqual([o.paris, o.london, o.redeemed]);
    expect(ids(await pub('?sortBy=when_modified'))).toEqual([o.paris, o.redeemed, o.london]);
    const seen: string[] = [];
    let next = '';
    do {
      const body = await pub(
        `?limit=1&sortBy=when_modified&order=asc${next ? `&next=${next}` : ''}`,
      );
      seen.push(...ids(body));
      next = body.next;
      expect(body.has_more).toBe(next !== '');
    } while (next);
    expect(seen).toEqual([o.london, o.redeemed, o.paris]);
  });

  it('refuses a limit over 100, an unknown sortBy, a bad geohash and a foreign cursor with 400 code 3', async () => {
    const p1 = await pub('?limit=1');
    for (const s of [
      'limit=101',
      'sortBy=owner',
      'geo_hash=abc',
      'order=up',
      `next=${p1.next}&order=asc`,
      'next=!!',
    ]) {
      const res = await svc.app.inject({ method: 'GET', url: `/public/objects?${s}` });
      expect(res.statusCode, s).toBe(400);
      expect(res.json().code).toBe(3);
    }
    expect(
      (await svc.app.inject({ method: 'GET', url: '/public/objects?limit=100' })).statusCode,
    ).toBe(200);
  });

  it('needs no credentials and ignores an invalid one', async () => {
    const res = await svc.app.inject({
      method: 'GET',
      url: '/public/objects',
      headers: { authorization: 'Bearer x.y.z' },
    });
    expect(res.statusCode).toBe(200);
  });
});
