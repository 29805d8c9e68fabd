import { beforeAll, describe, expect, it } from 'vitest';
import type { RouteEntry } from '../../src/http/app.js';
import { ROLES, permissionsOfRole } from '../../src/lib/permissions.js';
import { allPermissions, createApiKey } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';

let routes: RouteEntry[];

const svc = useTestService();
beforeAll(async () => {
  routes = svc.routeTable();
});

describe('the route table', () => {
  it('holds every registered route with its declared auth', () => {
    expect(routes).toContainEqual({
      method: 'POST',
      url: '/api-keys',
      auth: 'bearer',
      permission: 'api-keys.create',
      grants: 'api-key',
      idempotent: true,
    });
    expect(routes).toContainEqual({
      method: 'GET',
      url: '/healthz',
      auth: 'none',
      permission: null,
    });
    expect(routes.some((r) => r.method === 'HEAD')).toBe(false);
  });

  it('has no protected route without a declared permission', () => {
    const undeclared = routes
      .filter((r) => r.auth !== 'none' && r.permission === null)
      .map((r) => `${r.method} ${r.url} (auth ${r.auth})`);
    expect(
      undeclared,
      'declare config.permission (a Permission or "authenticated") next to each of these routes',
    ).toEqual([]);
  });

  it('refuses an anonymous call to every protected route with 401 code 16', async () => {
    const protectedRoutes = routes.filter((r) => r.auth !== 'none' && r.auth !== 'optional');
    expect(protectedRoutes.length).toBeGreaterThan(0);
    for (const r of protectedRoutes) {
      const url = r.url.replace(/:(\w+)/g, 'x').replace(/\*$/, 'x');
      const res = await svc.app.inject({ method: r.method as 'GET', url });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
      expect(res.json().code).toBe(16);
    }
  });
});

/**
 * `GET /storage/files/:id` is open (public files need no credential), so its route table entry
 * says `authenticated` and the service checks `storage.read` for a private file. Generated
 * from the permission table: every role, a key with each single permission, and callers of
 * another organization.
 */
describe('a private file (GET /storage/files/:id)', () => {
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  let owner: TestMember;
  let url: string;

  async function uploadAs(m: TestMember, isPublic: boolean): Promise<string> {
    const boundary = 'routepermissionsboundary';
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.png"\r\n\r\n`,
      ),
      PNG,
      Buffer.from(
        `\r\n--${boundary}\r\nContent-Disposition: form-data; name="is_public"\r\n\r\n${isPublic}\r\n--${boundary}--\r\n`,
      ),
    ]);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/storage/upload',
      headers: { ...m.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    });
    expect(res.statusCode, res.body).toBe(200);
    return `/storage/files/${res.json<{ id: string }>().id}`;
  }

  const fetchAs = (headers: Record<string, string>, at = url) =>
    svc.app.inject({ method: 'GET', url: at, headers });

  function expectServed(res: { statusCode: number; body: string; rawPayload: Buffer }) {
    expect(res.statusCode, res.body).toBe(200);
    expect(res.rawPayload.equals(PNG)).toBe(true);
  }
  function expectRefused(res: { statusCode: number; body: string }, status: number) {
    expect(res.statusCode, res.body).toBe(status);
    expect(JSON.parse(res.body)).toMatchObject({ code: status === 403 ? 7 : 5 });
  }

  beforeAll(async () => {
    owner = await createMember(svc, { role: 'owner' });
    url = await uploadAs(owner, false);
  });

  it('is served to a member of its organization exactly when the role holds storage.read', async () => {
    for (const role of ROLES) {
      const m = await createMember(svc, { role, orgId: owner.orgId });
      const res = await fetchAs(m.headers);
      if (permissionsOfRole(role).has('storage.read')) expectServed(res);
      else expectRefused(res, 403);
    }
  });

  it('is served to a key of its organization exactly when the key holds storage.read', async () => {
    for (const perm of allPermissions()) {
      const key = await createApiKey(svc, owner, [perm], { name: `only ${perm}` });
      const res = await fetchAs(key.headers);
      if (perm === 'storage.read') expectServed(res);
      else expectRefused(res, 403);
      // An organization holds at most 10 live keys.
      const revoked = await svc.app.inject({
        method: 'DELETE',
        url: `/api-keys/${key.id}`,
        headers: owner.headers,
      });
      expect(revoked.statusCode, revoked.body).toBe(200);
    }
  });

  it('is 404 to no credential and to every caller of another organization', async () => {
    expectRefused(await fetchAs({}), 404);
    const stranger = await createMember(svc, { role: 'owner' });
    expectRefused(await fetchAs(stranger.headers), 404);
    const strangerKey = await createApiKey(svc, stranger, allPermissions());
    expectRefused(await fetchAs(strangerKey.headers), 404);
    for (const role of ROLES) {
      const m = await createMember(svc, { role, orgId: stranger.orgId });
      expectRefused(await fetchAs(m.headers), 404);
    }
  });

  it('leaves a public file to anyone, whatever the credential holds', async () => {
    const publicUrl = await uploadAs(owner, true);
    expectServed(await fetchAs({}, publicUrl));
    for (const role of ROLES) {
      const m = await createMember(svc, { role, orgId: owner.orgId });
      expectServed(await fetchAs(m.headers, publicUrl));
    }
    const stranger = await createMember(svc, { role: 'viewer' });
    expectServed(await fetchAs(stranger.headers, publicUrl));
  });
});
