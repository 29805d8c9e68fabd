import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { authOf } from '../../src/http/auth.js';
import type { App } from '../../src/http/app.js';
import { newId } from '../../src/lib/ids.js';
import { allPermissions, createApiKey, crudOf } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { expectRefusals } from '../helpers/route-security.js';
import { useTestService } from '../helpers/harness.js';

const HOUR_MS = 3_600_000;
/** A key's least permissions (a key must grant something). */
const READ = crudOf(['objects.read']);

function probeRoutes(app: App) {
  const whoami = async (req: FastifyRequest) => {
    const a = authOf(req);
    return {
      kind: a.kind,
      walletId: a.walletId,
      orgId: a.orgId,
      apiKeyId: a.apiKeyId,
      permissions: [...a.permissions].sort(),
    };
  };
  app.get('/test/objects', { config: { permission: 'objects.read' } }, whoami);
  app.get('/test/templates-create', { config: { permission: 'templates.create' } }, whoami);
}

const svc = useTestService({ extraRoutes: probeRoutes });

const create = (m: TestMember, payload: unknown) =>
  svc.app.inject({
    method: 'POST',
    url: '/api-keys',
    headers: m.headers,
    payload: payload as object,
  });
const list = (m: TestMember, query = '') =>
  svc.app.inject({ method: 'GET', url: `/api-keys${query}`, headers: m.headers });
const remove = (m: TestMember, id: string) =>
  svc.app.inject({ method: 'DELETE', url: `/api-keys/${id}`, headers: m.headers });
const probe = (secret: string, url = '/test/objects') =>
  svc.app.inject({ method: 'GET', url, headers: { 'x-api-key': secret } });

describe('POST /api-keys', () => {
  it('answers an id and an onsk_ secret that works at once', async () => {
    const owner = await createMember(svc);
    const res = await create(owner, {
      name: 'server',
      permissions: [{ resource: 'objects', crud: { read: true } }],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['id', 'secret']);
    expect(body.id).toMatch(/^key_[0-9A-Z]{26}$/);
    expect(body.secret).toMatch(/^onsk_[0-9A-Za-z]{49}$/);
    const used = await probe(body.secret);
    expect(used.statusCode).toBe(200);
    expect(used.json()).toEqual({
      kind: 'api_key',
      walletId: owner.walletId,
      orgId: owner.orgId,
      apiKeyId: body.id,
      permissions: ['objects.read'],
    });
  });

  it('stores only the SHA-256 of the secret', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read']);
    const { rows } = await svc.container.db.execute<Record<string, unknown>>(
      sql`SELECT * FROM api_keys WHERE id = ${key.id}`,
    );
    expect(rows[0]!.secret_hash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(key.secret.slice(5, 30));
  });

  it('gives a key one year by default and the ttl_hours asked for otherwise', async () => {
    const owner = await createMember(svc);
    const now = svc.clock.now().getTime();
    await createApiKey(svc, owner, ['objects.read'], { name: 'default' });
    await createApiKey(svc, owner, ['objects.read'], { name: 'short', ttlHours: 2 });
    const keys = list(owner).then((r) => r.json().keys as { name: string; expires_at: string }[]);
    const byName = Object.fromEntries((await keys).map((k) => [k.name, k.expires_at]));
    expect(byName.default).toBe(new Date(now + 8760 * HOUR_MS).toISOString());
    expect(byName.short).toBe(new Date(now + 2 * HOUR_MS).toISOString());
  });

  it('refuses a ttl_hours of 0, negative, over a year or not whole with 400 code 3', async () => {
    const owner = await createMember(svc);
    for (const ttl of [0, -1, 8761, 1.5, 'ten']) {
      const res = await create(owner, {
        name: 'k',
        ttl_hours: ttl,
        permissions: READ,
      });
      expect(res.statusCode, `ttl_hours ${ttl}`).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses a missing, empty or oversize name and unknown fields with 400 code 3', async () => {
    const owner = await createMember(svc);
    const perms = crudOf(['objects.read']);
    for (const payload of [
      { permissions: perms },
      { name: '', permissions: perms },
      { name: 'x'.repeat(101), permissions: perms },
      { name: 'k' },
      { name: 'k', permissions: perms, secret: 'mine' },
      { name: 'k', permissions: [{ resource: 'objects', crud: { read: 'yes' } }] },
      { name: 'k', permissions: [{ resource: 'objects', crud: { list: true } }] },
    ]) {
      const res = await create(owner, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses a key that grants nothing with 400 code 3, and makes none', async () => {
    const owner = await createMember(svc);
    for (const permissions of [
      [],
      [{ resource: 'objects', crud: {} }],
      [{ resource: 'objects', crud: { read: false, create: false } }],
    ]) {
      const res = await create(owner, { name: 'nothing', permissions });
      expect(res.statusCode, JSON.stringify(permissions)).toBe(400);
      expect(res.json()).toEqual({
        code: 3,
        message: 'an API key needs at least one permission',
        details: { fields: [{ field: 'permissions', reason: 'grants nothing' }] },
      });
    }
    expect((await list(owner)).json().keys).toEqual([]);
  });

  it('refuses an unknown resource with 400 code 3', async () => {
    const owner = await createMember(svc);
    const res = await create(owner, {
      name: 'k',
      permissions: [{ resource: 'spaceships', crud: { read: true } }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 3,
      details: { fields: [{ field: 'permissions.0.resource' }] },
    });
  });

  it('refuses permissions beyond the creator’s own with 403 code 7', async () => {
    const admin = await createMember(svc, { role: 'admin' });
    const res = await create(admin, {
      name: 'k',
      permissions: crudOf(['objects.read', 'organizations.delete']),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
    expect(res.json().message).toContain('organizations.delete');
    const within = await create(admin, {
      name: 'k',
      permissions: crudOf(['objects.read', 'api-keys.delete']),
    });
    expect(within.statusCode).toBe(200);
  });

  it('refuses callers without a person’s token or without api-keys.create', async () => {
    await expectRefusals(
      svc,
      {
        method: 'POST',
        url: '/api-keys',
        payload: { name: 'k', permissions: READ },
      },
      { roleWithout: 'member', bearerOnly: true },
    );
  });
});

describe('the limit of ten live keys', () => {
  it('refuses an eleventh live key with 400 code 3 and counts neither deleted nor expired ones', async () => {
    const owner = await createMember(svc);
    const first = await createApiKey(svc, owner, ['objects.read'], { ttlHours: 1 });
    for (let i = 1; i < 10; i++)
      await createApiKey(svc, owner, ['objects.read'], { name: `k${i}` });
    const eleventh = await create(owner, { name: 'k10', permissions: READ });
    expect(eleventh.statusCode).toBe(400);
    expect(eleventh.json().code).toBe(3);

    svc.clock.advance(HOUR_MS); // the first key expires (and so does the owner's access token)
    const admin = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
    const afterExpiry = await createApiKey(svc, admin, ['objects.read'], { name: 'after expiry' });
    expect((await create(admin, { name: 'x', permissions: READ })).statusCode).toBe(400);
    expect((await probe(first.secret)).statusCode).toBe(401);

    expect((await remove(admin, afterExpiry.id)).statusCode).toBe(200);
    expect((await create(admin, { name: 'after delete', permissions: READ })).statusCode).toBe(200);
  });

  it('lets exactly one of two parallel creates at nine keys succeed', async () => {
    const owner = await createMember(svc);
    for (let i = 0; i < 9; i++) await createApiKey(svc, owner, ['objects.read'], { name: `k${i}` });
    const results = await Promise.all([
      create(owner, { name: 'a', permissions: READ }),
      create(owner, { name: 'b', permissions: READ }),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = ${owner.orgId}`,
    );
    expect(rows[0]!.n).toBe(10);
  });

  it('counts per organization', async () => {
    const a = await createMember(svc);
    for (let i = 0; i < 10; i++) await createApiKey(svc, a, ['objects.read'], { name: `k${i}` });
    const b = await createMember(svc);
    expect((await create(b, { name: 'k', permissions: READ })).statusCode).toBe(200);
  });
});

describe('GET /api-keys', () => {
  it('lists exactly the fields of a key and never a secret', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read', 'objects.create', 'balance.read'], {
      name: 'reader',
    });
    const res = await list(owner);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(key.secret);
    expect(res.body).not.toContain('secret');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['has_more', 'keys', 'next']);
    expect(body.next).toBe('');
    expect(body.has_more).toBe(false);
    const now = svc.clock.now();
    expect(body.keys).toEqual([
      {
        id: key.id,
        name: 'reader',
        permissions: [
          { resource: 'objects', crud: { read: true, create: true, update: false, delete: false } },
          {
            resource: 'balance',
            crud: { read: true, create: false, update: false, delete: false },
          },
        ],
        expires_at: new Date(now.getTime() + 8760 * HOUR_MS).toISOString(),
        last_used_at: null,
        when_created: now.toISOString(),
        when_modified: now.toISOString(),
      },
    ]);
  });

  it('pages with a cursor, newest first, without repeats', async () => {
    const owner = await createMember(svc);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await createApiKey(svc, owner, ['objects.read'], { name: `k${i}` })).id);
      svc.clock.advance(1);
    }
    const seen: string[] = [];
    let next = '';
    let pages = 0;
    do {
      const res = await list(owner, `?limit=2${next ? `&next=${next}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      seen.push(...body.keys.map((k: { id: string }) => k.id));
      expect(body.has_more).toBe(body.next !== '');
      next = body.next;
      pages++;
    } while (next && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
  });

  it('defaults to ten, treats larger limits as ten and lists expired keys', async () => {
    const first = await createMember(svc);
    for (let i = 0; i < 10; i++)
      await createApiKey(svc, first, ['objects.read'], { name: `old${i}`, ttlHours: 1 });
    svc.clock.advance(2 * HOUR_MS);
    const owner = await createMember(svc, { orgId: first.orgId });
    for (let i = 0; i < 2; i++)
      await createApiKey(svc, owner, ['objects.read'], { name: `new${i}` });
    for (const query of ['', '?limit=50', '?limit=10']) {
      const body = (await list(owner, query)).json();
      expect(body.keys, query).toHaveLength(10);
      expect(body.has_more).toBe(true);
    }
    const rest = (await list(owner, `?next=${(await list(owner)).json().next}`)).json();
    expect(rest.keys).toHaveLength(2);
  });

  it('refuses a limit of 0, a negative or a non-number, and a malformed cursor with 400 code 3', async () => {
    const owner = await createMember(svc);
    for (const query of [
      '?limit=0',
      '?limit=-3',
      '?limit=ten',
      '?next=%%%',
      '?next=bm90LWEtY3Vyc29y',
    ]) {
      const res = await list(owner, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('filters by exact name', async () => {
    const owner = await createMember(svc);
    await createApiKey(svc, owner, ['objects.read'], { name: 'alpha' });
    await createApiKey(svc, owner, ['objects.read'], { name: 'alpha2' });
    await createApiKey(svc, owner, ['objects.read'], { name: 'ALPHA' });
    const body = (await list(owner, '?name=alpha')).json();
    expect(body.keys.map((k: { name: string }) => k.name)).toEqual(['alpha']);
  });

  it('shows only the caller’s organization’s keys', async () => {
    const a = await createMember(svc);
    const b = await createMember(svc);
    await createApiKey(svc, a, ['objects.read'], { name: 'of a' });
    const body = (await list(b)).json();
    expect(body.keys).toEqual([]);
  });

  it('refuses callers without a person’s token or without api-keys.read', async () => {
    await expectRefusals(
      svc,
      { method: 'GET', url: '/api-keys' },
      { roleWithout: 'member', bearerOnly: true },
    );
  });
});

describe('DELETE /api-keys/{id}', () => {
  it('revokes a key at once, even one this instance has cached', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read']);
    expect((await probe(key.secret)).statusCode).toBe(200); // now cached
    const res = await remove(owner, key.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    const after = await probe(key.secret);
    expect(after.statusCode).toBe(401);
    expect(after.json().code).toBe(16);
    expect((await list(owner)).json().keys).toEqual([]);
    expect((await remove(owner, key.id)).statusCode).toBe(404);
  });

  it('answers 404 for another organization’s key and for an unknown one, 400 for a malformed id', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read']);
    await expectRefusals(
      svc,
      { method: 'DELETE', url: `/api-keys/${key.id}` },
      { otherOrgMember: true, roleWithout: 'member', bearerOnly: true },
    );
    expect((await probe(key.secret)).statusCode).toBe(200);
    const unknown = await remove(owner, newId('apiKey'));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe(5);
    const malformed = await remove(owner, 'not-a-key');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe(3);
  });
});

describe('using a key', () => {
  it('acts with exactly the key’s permissions, not its creator’s', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read']);
    expect((await probe(key.secret)).statusCode).toBe(200);
    const res = await probe(key.secret, '/test/templates-create');
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
    const other = await createApiKey(svc, owner, ['templates.create']);
    expect((await probe(other.secret, '/test/templates-create')).statusCode).toBe(200);
    expect((await probe(other.secret)).statusCode).toBe(403);
  });

  it('refuses malformed, mistyped and unknown keys with 401 code 16', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read']);
    const last = key.secret.at(-1) === 'a' ? 'b' : 'a';
    const mistyped = key.secret.slice(0, -1) + last;
    const forged = 'onsk_' + 'A'.repeat(49);
    for (const secret of ['nope', 'onsk_', mistyped, forged, key.secret + 'x']) {
      const res = await probe(secret);
      expect(res.statusCode, secret).toBe(401);
      expect(res.json().code).toBe(16);
    }
  });

  it('stops working when expires_at passes, even while cached', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read'], { ttlHours: 1 });
    expect((await probe(key.secret)).statusCode).toBe(200);
    svc.clock.advance(HOUR_MS - 1);
    expect((await probe(key.secret)).statusCode).toBe(200);
    svc.clock.advance(1);
    const res = await probe(key.secret);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 16, message: 'API key has expired' });
  });

  it('stops working when its creator is no longer an active member', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read']);
    expect((await probe(key.secret)).statusCode).toBe(200);
    await svc.container.db.execute(
      sql`UPDATE members SET status = 'removed' WHERE id = ${owner.memberId}`,
    );
    svc.container.apiKeyVerifier.forgetAll(); // what the members feature does on removal
    const res = await probe(key.secret);
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe(16);
  });

  it('never does more than its creator can do now: a demotion narrows the key', async () => {
    const admin = await createMember(svc, { role: 'admin' });
    const key = await createApiKey(svc, admin, ['objects.read', 'templates.create']);
    expect((await probe(key.secret, '/test/templates-create')).statusCode).toBe(200);
    await svc.container.db.execute(
      sql`UPDATE members SET role = 'viewer' WHERE id = ${admin.memberId}`,
    );
    svc.container.apiKeyVerifier.forgetAll(); // what the members feature does on a role change
    const narrowed = await probe(key.secret, '/test/templates-create');
    expect(narrowed.statusCode).toBe(403);
    expect(narrowed.json().code).toBe(7);
    expect((await probe(key.secret)).json().permissions).toEqual(['objects.read']);
  });

  it('is refused on bearer-only routes with 401 code 16', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, allPermissions());
    const res = await svc.app.inject({ method: 'GET', url: '/api-keys', headers: key.headers });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe(16);
  });
});

describe('last_used_at', () => {
  const lastUsed = async (m: TestMember, id: string) =>
    ((await list(m)).json().keys as { id: string; last_used_at: string | null }[]).find(
      (k) => k.id === id,
    )!.last_used_at;

  it('is written by the periodic flush, not by the request, and never moves backwards', async () => {
    const owner = await createMember(svc);
    const key = await createApiKey(svc, owner, ['objects.read']);
    const firstUse = svc.clock.now().toISOString();
    expect((await probe(key.secret)).statusCode).toBe(200);
    expect(await lastUsed(owner, key.id)).toBeNull();

    await svc.container.apiKeyLastUsed.flush();
    expect(await lastUsed(owner, key.id)).toBe(firstUse);

    svc.clock.advance(60_000);
    const later = svc.clock.now();
    expect((await probe(key.secret)).statusCode).toBe(200);
    await svc.container.apiKeyLastUsed.flush();
    expect(await lastUsed(owner, key.id)).toBe(later.toISOString());

    // an older batch (say, from a slower instance) arrives late
    svc.container.apiKeyLastUsed.touch(key.id, new Date(later.getTime() - 30_000));
    await svc.container.apiKeyLastUsed.flush();
    expect(await lastUsed(owner, key.id)).toBe(later.toISOString());
    expect(svc.container.apiKeyLastUsed.pendingCount).toBe(0);
  });
});
