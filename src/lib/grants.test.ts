import { describe, expect, it } from 'vitest';
import { AppError } from './errors.js';
import { mayGrant, requireGrant, type Granter } from './grants.js';
import { OPERATIONS, RESOURCES, ROLES, permissionsOfRole, type Permission } from './permissions.js';

const ALL: Permission[] = RESOURCES.flatMap((r) => OPERATIONS.map((o) => `${r}.${o}` as const));

/** Every granter the table yields: each role as a person and as a key, each single permission. */
const granters: [string, Granter][] = [
  ...ROLES.flatMap((role): [string, Granter][] => [
    [`person ${role}`, { permissions: permissionsOfRole(role), owner: role === 'owner' }],
    [`key of ${role}`, { permissions: permissionsOfRole(role), owner: false }],
  ]),
  ...ALL.map((p): [string, Granter] => [`key ${p}`, { permissions: new Set([p]), owner: false }]),
];

describe('requireGrant', () => {
  it('allows a role exactly when its permissions are the granter’s and owner only by an owner', () => {
    for (const [name, g] of granters) {
      for (const role of ROLES) {
        const within = [...permissionsOfRole(role)].every((p) => g.permissions.has(p));
        const want = within && (role !== 'owner' || g.owner);
        expect(mayGrant(g, { role }), `${name} → ${role}`).toBe(want);
        if (want) expect(requireGrant(g, { role }).role).toBe(role);
        else expect(() => requireGrant(g, { role }), `${name} → ${role}`).toThrow(AppError);
      }
    }
  });

  it('names what is missing, in the table’s order, and the owner rule', () => {
    const key: Granter = { permissions: new Set(['members.create']), owner: false };
    try {
      requireGrant(key, { role: 'viewer' });
      expect.unreachable();
    } catch (err) {
      const e = err as AppError;
      expect(e.code).toBe(7);
      expect(e.details).toEqual({
        role: 'viewer',
        missing_permissions: [...permissionsOfRole('viewer')].sort(
          (a, b) => ALL.indexOf(a) - ALL.indexOf(b),
        ),
      });
      for (const p of permissionsOfRole('viewer')) expect(e.message).toContain(p);
    }
    const everything: Granter = { permissions: new Set(ALL), owner: false };
    expect(() => requireGrant(everything, { role: 'owner' })).toThrow(
      /only an owner grants the owner role/,
    );
    expect(() => requireGrant(everything, { role: 'owner' })).toThrow(
      expect.objectContaining({
        details: { role: 'owner', missing_permissions: [], owner_only: true },
      }),
    );
  });

  it('bounds a key’s permissions the same way', () => {
    const admin: Granter = { permissions: permissionsOfRole('admin'), owner: true };
    expect(requireGrant(admin, { permissions: ['members.create'] }).permissions).toEqual([
      'members.create',
    ]);
    expect(() => requireGrant(admin, { permissions: ['organizations.delete'] })).toThrow(
      expect.objectContaining({ details: { missing_permissions: ['organizations.delete'] } }),
    );
  });
});
