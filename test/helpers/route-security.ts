import { expect } from 'vitest';
import type { Permission, Role } from '../../src/lib/permissions.js';
import { allPermissions, createApiKey } from './api-keys.js';
import { createMember, type TestMember } from './fixtures.js';
import type { TestService } from './service.js';

export interface RouteCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  payload?: unknown;
}

export interface RefusalChecks {
  /**
   * The call names a record of some organization: a member of another organization (a
   * new owner when `true`) must get 404 code 5, as if the record did not exist.
   */
  otherOrgMember?: boolean | TestMember;
  /** A role that lacks the route's permission: its member must get 403 code 7. */
  roleWithout?: Role;
  /**
   * The permission the route needs: an API key holding every other permission must get
   * 403 code 7. Only for routes that accept API keys.
   */
  keyWithout?: Permission;
  /** The route takes a bearer token only: a valid API key must get 401 code 16. */
  bearerOnly?: boolean;
}

function expectError(res: { statusCode: number; body: string }, status: number, code: number) {
  expect(res.statusCode, res.body).toBe(status);
  expect((JSON.parse(res.body) as { code: number }).code).toBe(code);
}

/**
 * The refusals every protected route must give (the "common route tests"): no credential
 * → 401 code 16, plus whichever of `checks` apply to the route.
 */
export async function expectRefusals(
  svc: TestService,
  call: RouteCall,
  checks: RefusalChecks = {},
): Promise<void> {
  const send = (headers: Record<string, string>) =>
    svc.app.inject({
      method: call.method,
      url: call.url,
      headers,
      ...(call.payload !== undefined ? { payload: call.payload as object } : {}),
    });

  const anonymous = await send({});
  expectError(anonymous, 401, 16);
  expect(anonymous.json()).toEqual({ code: 16, message: 'no auth provided' });

  if (checks.roleWithout) {
    const m = await createMember(svc, { role: checks.roleWithout });
    expectError(await send(m.headers), 403, 7);
  }
  if (checks.otherOrgMember) {
    const m =
      checks.otherOrgMember === true
        ? await createMember(svc, { role: 'owner' })
        : checks.otherOrgMember;
    expectError(await send(m.headers), 404, 5);
  }
  if (checks.keyWithout || checks.bearerOnly) {
    const owner = await createMember(svc, { role: 'owner' });
    const perms = allPermissions().filter((p) => p !== checks.keyWithout);
    const key = await createApiKey(svc, owner, perms, { name: 'route-security' });
    expectError(await send(key.headers), checks.bearerOnly ? 401 : 403, checks.bearerOnly ? 16 : 7);
  }
}
