/**
 * The resources and operations an API key's permissions name, and each role's permissions
 * (docs/permissions.md), as the service's own table lists them (src/lib/console-permissions.test.ts
 * compares the two). The console uses them to offer only what a person may do; the service's
 * refusal stays the authority.
 */
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

const ALL: Permission[] = RESOURCES.flatMap((r) => OPERATIONS.map((o) => `${r}.${o}` as const));

export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(ALL),
  admin: new Set(ALL.filter((p) => p !== 'organizations.delete')),
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

/** What the roles of a session allow together (none for an unknown role). */
export function permissionsOf(roles: readonly string[]): ReadonlySet<Permission> {
  const out = new Set<Permission>();
  for (const role of roles) {
    for (const p of ROLE_PERMISSIONS[role as Role] ?? []) out.add(p);
  }
  return out;
}

/** The resources a minting backend works with: it reads templates, mints and acts on objects. */
const MINTING_RESOURCES: readonly Resource[] = ['objects', 'actions', 'templates'];

/**
 * The API-key presets, each within what its creator holds (`held`): every read, what a member
 * may do with templates, objects and actions (minting and acting on objects), everything.
 */
export function presetsOf(held: ReadonlySet<Permission>): Record<Preset, Set<Permission>> {
  const within = (ps: Iterable<Permission>) => new Set([...ps].filter((p) => held.has(p)));
  return {
    'Read-only': within(ALL.filter((p) => p.endsWith('.read'))),
    'Minting backend': within(
      [...ROLE_PERMISSIONS.member].filter((p) =>
        MINTING_RESOURCES.some((r) => p.startsWith(`${r}.`)),
      ),
    ),
    Full: within(ALL),
  };
}
export const PRESETS = ['Read-only', 'Minting backend', 'Full'] as const;
export type Preset = (typeof PRESETS)[number];
