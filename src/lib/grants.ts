import { AppError, Code } from './errors.js';
import {
  OPERATIONS,
  RESOURCES,
  permissionsOfRole,
  type AuthContext,
  type Permission,
  type Role,
} from './permissions.js';

/**
 * One ceiling for every grant (docs/permissions.md, "Grants"): whatever a caller hands to a
 * wallet or a key — a role, a key's permissions, the `member` role that self sign-up gives
 * anyone — must be within the caller's own effective permissions, and only an owner (a
 * person, never a key) grants the owner role. Every place that gives power calls
 * `requireGrant` here and nowhere else decides; the writes that give a role or a key's
 * permissions take the `RoleGrant`/`PermissionsGrant` it answers, so a path that skipped
 * the check does not compile. (Turning self sign-up on writes a setting, not a role: its
 * one writer, OrganizationService.update, calls `requireGrant` before it.)
 */

/** The role a wallet joins an organization with by self sign-up. */
export const SELF_SIGNUP_ROLE: Role = 'member';

/**
 * The roles a person grants (an invitation, a role change) only with a recent sign-in
 * (docs/auth.md, "Changing credentials"), as for creating an API key: their holders mint keys
 * and make others admin, power that outlives the token of whoever granted it. Any change,
 * even to a holder of the role already, or down from owner.
 */
export const RECENT_SIGN_IN_ROLES: readonly Role[] = ['owner', 'admin'];

/** Whether `to` lets its holder do something `from` does not (viewer → member, say). */
export function raisesRole(from: Role, to: Role): boolean {
  if (to === 'owner' && from !== 'owner') return true;
  const held = permissionsOfRole(from);
  return [...permissionsOfRole(to)].some((p) => !held.has(p));
}

/**
 * Whether giving `role` needs a recent sign-in of a person (docs/auth.md, "Changing
 * credentials"): always for RECENT_SIGN_IN_ROLES; for a lower role, when it lets someone in
 * (an invitation: `from` null) or raises what they may do (`raisesRole`), as a `member` mints
 * and acts, paying from the organization's balance, long after the token that let them in is
 * gone. A demotion, or a role given again, narrows nothing and needs none. Who is asked is the
 * members service's (an API key passes: `requireRecentSignInOrKey`).
 */
export function grantNeedsRecentSignIn(role: Role, from: Role | null): boolean {
  return RECENT_SIGN_IN_ROLES.includes(role) || from === null || raisesRole(from, role);
}

/** Who grants, as far as the ceiling is concerned. */
export interface Granter {
  /** For a person: its role's permissions there; for an API key: exactly the key's. */
  permissions: ReadonlySet<Permission>;
  /** A person whose role there is owner. A key is never an owner, whoever created it. */
  owner: boolean;
}

/** What a grant hands out: a role, or (an API key) a list of permissions. */
export type Granted = { role: Role } | { permissions: readonly Permission[] };

declare const checked: unique symbol;

/** Proof that `requireGrant` passed for this role: the writes that give a role take it. */
export interface RoleGrant {
  readonly role: Role;
  readonly [checked]: true;
}

/** Proof that `requireGrant` passed for these permissions (an API key's). */
export interface PermissionsGrant {
  readonly permissions: readonly Permission[];
  readonly [checked]: true;
}

/**
 * Every place that gives a wallet or a key power, the routes that reach it and the
 * permission the place itself needs besides the ceiling. Each route listed declares
 * `config.grants` with the place's name, and the grant-matrix test drives every one
 * (test/permissions/grant-matrix.test.ts fails when a route declares a place not listed here, or the
 * other way round).
 */
export const GRANT_SITES = {
  'api-key': {
    routes: ['POST /api-keys'],
    needs: 'api-keys.create',
    grants: 'the permissions listed',
  },
  invite: {
    routes: ['POST /organizations/:organizationId/members'],
    needs: 'members.create',
    grants: 'the role invited',
  },
  'change-role': {
    routes: ['PATCH /organizations/:organizationId/members/:memberId'],
    needs: 'members.update',
    grants: 'the new role',
  },
  'add-wallet': {
    routes: ['POST /wallets'],
    needs: 'members.create',
    grants: `\`${SELF_SIGNUP_ROLE}\` to the wallet made`,
  },
  'self-signup-setting': {
    routes: ['PATCH /organizations/:organizationId'],
    needs: 'organizations.update',
    grants: `\`${SELF_SIGNUP_ROLE}\` to anyone (\`allow_self_signup: true\`)`,
  },
  'self-signup': {
    routes: [
      'POST /organizations/wallets',
      'POST /auth/login',
      'POST /auth/otp/verify',
      'POST /auth/provider/google',
      'POST /wallets/connect/passkey/register/verify',
      'POST /wallets/connect/passkey/login/verify',
      'POST /wallets/connect/eoa',
    ],
    needs: null,
    grants: `\`${SELF_SIGNUP_ROLE}\` with \`organization_id\`, where the organization allows self sign-up`,
  },
  policy: {
    routes: ['POST /policies'],
    needs: 'policies.create',
    grants:
      'a limit on a wallet, key, template or the organization (changing or removing it gives back what it limited; PUT and DELETE are bounded the same way)',
  },
  'confirm-invite': {
    routes: [
      'GET /organizations/:organizationId/invite',
      'POST /organizations/:organizationId/invite',
    ],
    needs: null,
    grants: 'the role invited, re-checked against the inviter as it is now',
  },
} as const satisfies Record<
  string,
  { routes: readonly string[]; needs: Permission | null; grants: string }
>;
export type GrantSite = keyof typeof GRANT_SITES;

export function isGrantSite(value: string): value is GrantSite {
  return Object.hasOwn(GRANT_SITES, value);
}

/** What the granted thing would let its holder do. */
export function permissionsGranted(granted: Granted): Permission[] {
  return 'role' in granted ? [...permissionsOfRole(granted.role)] : [...granted.permissions];
}

/** In the table's order, so messages and details read the same every time. */
function ordered(perms: Iterable<Permission>): Permission[] {
  const set = new Set(perms);
  return RESOURCES.flatMap((r) => OPERATIONS.map((o) => `${r}.${o}` as const)).filter((p) =>
    set.has(p),
  );
}

/** The permissions in `granted` that `granter` lacks (empty when the grant fits). */
export function missingForGrant(granter: Granter, granted: Granted): Permission[] {
  return ordered(permissionsGranted(granted).filter((p) => !granter.permissions.has(p)));
}

/** Whether `granter` may grant `granted` (the rule without the error). */
export function mayGrant(granter: Granter, granted: Granted): boolean {
  if ('role' in granted && granted.role === 'owner' && !granter.owner) return false;
  return missingForGrant(granter, granted).length === 0;
}

/**
 * The ceiling: 403 code 7 unless everything in `granted` is within `granter`'s own
 * permissions (details name what is missing) and, for the owner role, the granter is an
 * owner. `who` words the message ("you", "the inviter").
 */
export function requireGrant(granter: Granter, granted: { role: Role }, who?: string): RoleGrant;
export function requireGrant(
  granter: Granter,
  granted: { permissions: readonly Permission[] },
  who?: string,
): PermissionsGrant;
export function requireGrant(
  granter: Granter,
  granted: Granted,
  who = 'you',
): RoleGrant | PermissionsGrant {
  const missing = missingForGrant(granter, granted);
  const what = 'role' in granted ? `the ${granted.role} role` : 'these permissions';
  const ownerOnly = 'role' in granted && granted.role === 'owner' && !granter.owner;
  if (missing.length > 0 || ownerOnly) {
    const reasons = [
      ...(ownerOnly ? ['only an owner grants the owner role'] : []),
      ...(missing.length > 0 ? [`${who} lack ${missing.join(', ')}`] : []),
    ];
    throw new AppError(Code.PERMISSION_DENIED, `cannot grant ${what}: ${reasons.join('; ')}`, {
      ...('role' in granted ? { role: granted.role } : {}),
      missing_permissions: missing,
      ...(ownerOnly ? { owner_only: true } : {}),
    });
  }
  return granted as RoleGrant | PermissionsGrant;
}

/** The granter a caller is, acting in its own organization (the token's or the key's). */
export function granterOf(auth: AuthContext): Granter {
  return { permissions: auth.permissions, owner: auth.kind === 'user' && auth.role === 'owner' };
}

/**
 * Grants that need no granter, each for one reason written here: the creator of a new
 * organization becomes its owner (a person may always start one, and it holds nothing yet),
 * and an organization that allows self sign-up admits anyone as SELF_SIGNUP_ROLE (the
 * setting itself passed `requireGrant` when it was turned on).
 */
export function founderGrant(): RoleGrant {
  return { role: 'owner' } as RoleGrant;
}

export function selfSignupGrant(): RoleGrant {
  return { role: SELF_SIGNUP_ROLE } as RoleGrant;
}
