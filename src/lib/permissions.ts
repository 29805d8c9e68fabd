import { forbidden } from './errors.js';

/** Every resource a permission can name (docs/permissions.md lists them too; a test compares). */
export const RESOURCES = [
  'objects',
  'templates',
  'actions',
  'webhooks',
  'api-keys',
  'organizations',
  'members',
  'balance',
  'deposits',
  'support',
  'storage',
  'wallets',
  'policies',
] as const;
export type Resource = (typeof RESOURCES)[number];

export const OPERATIONS = ['read', 'create', 'update', 'delete'] as const;
export type Operation = (typeof OPERATIONS)[number];

export type Permission = `${Resource}.${Operation}`;

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** The API shape of a permission (docs/api.md, "API keys"). */
export interface CrudPermission {
  resource: string;
  crud: { read: boolean; create: boolean; update: boolean; delete: boolean };
}

function all(): Permission[] {
  return RESOURCES.flatMap((r) => OPERATIONS.map((o) => `${r}.${o}` as const));
}

const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(all()),
  // "Changing owners" is a rule of the members service, not a permission.
  admin: new Set(all().filter((p) => p !== 'organizations.delete')),
  member: new Set<Permission>([
    ...RESOURCES.filter((r) => r !== 'api-keys' && r !== 'members' && r !== 'webhooks').map(
      (r) => `${r}.read` as const,
    ),
    ...(['objects', 'actions', 'support', 'storage'] as const).flatMap(
      (r) => [`${r}.create`, `${r}.update`] as const,
    ),
  ]),
  viewer: new Set<Permission>([
    'objects.read',
    'templates.read',
    'organizations.read',
    'balance.read',
    'support.read',
  ]),
};

export function permissionsOfRole(role: Role): ReadonlySet<Permission> {
  return ROLE_PERMISSIONS[role];
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function isResource(value: string): value is Resource {
  return (RESOURCES as readonly string[]).includes(value);
}

/** `[{resource, crud}]` → the flat set; unknown resources must be refused before this. */
export function fromCrud(perms: readonly CrudPermission[]): Set<Permission> {
  const out = new Set<Permission>();
  for (const p of perms) {
    if (!isResource(p.resource)) continue;
    for (const op of OPERATIONS) if (p.crud[op]) out.add(`${p.resource}.${op}`);
  }
  return out;
}

/** The flat set → `[{resource, crud}]`, one entry per resource that has any operation. */
export function toCrud(perms: ReadonlySet<Permission>): CrudPermission[] {
  const out: CrudPermission[] = [];
  for (const resource of RESOURCES) {
    const crud = {
      read: perms.has(`${resource}.read`),
      create: perms.has(`${resource}.create`),
      update: perms.has(`${resource}.update`),
      delete: perms.has(`${resource}.delete`),
    };
    if (crud.read || crud.create || crud.update || crud.delete) out.push({ resource, crud });
  }
  return out;
}

/**
 * Who is calling. Services receive this and never see HTTP. A person acts through a
 * session; a server acts through an API key, for the organization that owns the key, with
 * exactly the key's permissions.
 */
export interface AuthContext {
  kind: 'user' | 'api_key';
  /** The signed-in wallet, or for an API key the wallet that created it. */
  walletId: string;
  /** The organization the caller acts in; null for a standalone account with none yet. */
  orgId: string | null;
  role: Role | null;
  permissions: ReadonlySet<Permission>;
  sessionId: string | null;
  apiKeyId: string | null;
}

/** What a credential verifier answers: the caller, or why the credential does not verify. */
export type VerifyResult = { ok: true; auth: AuthContext } | { ok: false; reason: string };

export function hasPermission(auth: AuthContext, perm: Permission): boolean {
  return auth.permissions.has(perm);
}

export function requirePermission(auth: AuthContext, perm: Permission): void {
  if (!auth.permissions.has(perm)) throw forbidden(`missing permission ${perm}`);
}

/** The organization the caller acts in, or a clear refusal when it has none yet. */
export function requireOrg(auth: AuthContext): string {
  if (!auth.orgId) throw forbidden('this call needs an organization context');
  return auth.orgId;
}
