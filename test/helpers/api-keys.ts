import { expect } from 'vitest';
import { OPERATIONS, RESOURCES, type Permission } from '../../src/lib/permissions.js';
import type { TestMember } from './fixtures.js';
import type { TestService } from './service.js';

export interface TestApiKey {
  id: string;
  secret: string;
  /** `{'x-api-key': secret}` for app.inject. */
  headers: Record<string, string>;
}

/** Every permission name there is. */
export function allPermissions(): Permission[] {
  return RESOURCES.flatMap((r) => OPERATIONS.map((o) => `${r}.${o}` as const));
}

/** Flat names → the API's `[{resource, crud}]` (only resources with an operation). */
export function crudOf(perms: readonly Permission[]) {
  const byResource = new Map<string, Record<string, boolean>>();
  for (const p of perms) {
    const dot = p.lastIndexOf('.');
    const resource = p.slice(0, dot);
    const crud = byResource.get(resource) ?? {
      read: false,
      create: false,
      update: false,
      delete: false,
    };
    crud[p.slice(dot + 1)] = true;
    byResource.set(resource, crud);
  }
  return [...byResource].map(([resource, crud]) => ({ resource, crud }));
}

/**
 * An API key made through `POST /api-keys` by `creator` (who must hold api-keys.create and
 * every permission asked for), ready to send as `x-api-key`.
 */
export async function createApiKey(
  svc: TestService,
  creator: TestMember,
  permissions: readonly Permission[],
  opts: { name?: string; ttlHours?: number } = {},
): Promise<TestApiKey> {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/api-keys',
    headers: creator.headers,
    payload: {
      name: opts.name ?? 'test key',
      ...(opts.ttlHours !== undefined ? { ttl_hours: opts.ttlHours } : {}),
      permissions: crudOf(permissions),
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  const { id, secret } = res.json<{ id: string; secret: string }>();
  return { id, secret, headers: { 'x-api-key': secret } };
}
