import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteEntry } from '../src/http/app.js';
import { startTestService, type TestService } from './helpers/service.js';

let svc: TestService;
let routes: RouteEntry[];

beforeAll(async () => {
  svc = await startTestService();
  routes = svc.routeTable();
});
afterAll(async () => {
  await svc.stop();
});

describe('the route table', () => {
  it('holds every registered route with its declared auth', () => {
    expect(routes).toContainEqual({
      method: 'POST',
      url: '/api-keys',
      auth: 'bearer',
      permission: 'api-keys.create',
      grants: 'api-key',
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
