import type { Executor } from '../../db/pool.js';
import { forbidden, notFound } from '../../lib/errors.js';
import type { Granter } from '../../lib/grants.js';
import {
  isRole,
  permissionsOfRole,
  type AuthContext,
  type Permission,
  type Role,
} from '../../lib/permissions.js';
import { activeRoleIn, liveOrganizationExists } from './repo.js';

/** What the caller may do in one organization named by a path (`/organizations/{id}/…`). */
export interface OrgAccess {
  orgId: string;
  /** The caller's role there (for an API key: its creator's role, when known). */
  role: Role | null;
  permissions: ReadonlySet<Permission>;
  isApiKey: boolean;
}

/**
 * Resolves the caller's standing in `orgId`. A person acts with their role in THAT
 * organization (they may be a member of several; the token's context does not matter);
 * an API key acts only in its own organization, with exactly its permissions. Anything
 * else, and a deleted organization, is 404 code 5 — never 403 — so ids of other
 * organizations reveal nothing.
 */
export async function resolveOrgAccess(
  exec: Executor,
  auth: AuthContext,
  orgId: string,
): Promise<OrgAccess> {
  if (auth.kind === 'api_key') {
    if (auth.orgId !== orgId) throw notFound('organization');
    if (!(await liveOrganizationExists(exec, orgId))) throw notFound('organization');
    return { orgId, role: auth.role, permissions: auth.permissions, isApiKey: true };
  }
  const role = await activeRoleIn(exec, orgId, auth.walletId);
  if (role === null || !isRole(role)) throw notFound('organization');
  return { orgId, role, permissions: permissionsOfRole(role), isApiKey: false };
}

/** 403 code 7 unless the caller holds `perm` in that organization. */
export function requireOrgPermission(access: OrgAccess, perm: Permission): void {
  if (!access.permissions.has(perm)) throw forbidden(`missing permission ${perm}`);
}

/**
 * Only owners grant, change or remove the owner role (docs/permissions.md). An API key is
 * never an owner, whoever created it.
 */
export function isOwner(access: OrgAccess): boolean {
  return !access.isApiKey && access.role === 'owner';
}

/** The caller as a granter in that organization (src/lib/grants.ts). */
export function granterIn(access: OrgAccess): Granter {
  return { permissions: access.permissions, owner: isOwner(access) };
}
