/**
 * One ceiling for every grant (docs/permissions.md, "Grants"): generated from the permission
 * table (ROLES, RESOURCES, OPERATIONS, permissionsOfRole) and the table of granting places
 * (GRANT_SITES, which every granting route names in `config.grants`). Every granting route ×
 * every caller (each role; an API key with each single permission; for each role, a key with
 * all of its creator's permissions) × every role it can give is sent once, and the answer
 * must be allowed exactly when the route's own permission is held, everything the role would
 * hold is within the caller's permissions, and (for `owner`) the caller is an owner person.
 * The expectation below is computed here from the table, not by src/lib/grants.ts.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteEntry } from '../../src/http/app.js';
import { newId } from '../../src/lib/ids.js';
import { GRANT_SITES, SELF_SIGNUP_ROLE, type GrantSite } from '../../src/lib/grants.js';
import {
  OPERATIONS,
  RESOURCES,
  ROLES,
  permissionsOfRole,
  type Permission,
  type Role,
} from '../../src/lib/permissions.js';
import { hashSecret, newSecret } from '../../src/modules/api-keys/secret.js';
import { crudOf } from '../helpers/api-keys.js';
import { createMember, createOrganization, type TestMember } from '../helpers/fixtures.js';
import { memberSteps } from '../helpers/members.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let routes: RouteEntry[];
const steps = memberSteps(() => svc);

const ALL: Permission[] = RESOURCES.flatMap((r) => OPERATIONS.map((o) => `${r}.${o}` as const));

/** Someone who calls a granting route, acting in an organization of its own. */
interface Caller {
  name: string;
  orgId: string;
  headers: Record<string, string>;
  perms: ReadonlySet<Permission>;
  /** A person whose role there is owner (a key is never one). */
  ownerPerson: boolean;
  isKey: boolean;
  /** A member of `orgId` to change the role of (an accepted invitation, role viewer). */
  targetMemberId: string;
}

/** A key straight into the table, created by `creator` (the live-key cap is not the subject). */
async function insertKey(creator: TestMember, perms: readonly Permission[]) {
  const id = newId('apiKey');
  const secret = newSecret();
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO api_keys
    (id, organization_id, created_by, name, secret_hash, permissions, expires_at, created_at,
     updated_at)
    VALUES (${id}, ${creator.orgId}, ${creator.walletId}, 'matrix', ${hashSecret(secret)},
      ${`{${perms.join(',')}}`}::text[], ${new Date(now.getTime() + 3_600_000)}, ${now}, ${now})`);
  return { id, headers: { 'x-api-key': secret } };
}

async function insertTargetMember(orgId: string): Promise<string> {
  const id = newId('member');
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO members
    (id, organization_id, email, role, status, created_at, updated_at)
    VALUES (${id}, ${orgId}, ${`${id.toLowerCase()}@target.test`}, 'viewer', 'active', ${now},
      ${now})`);
  return id;
}

/** Each role as a person; a key with each single permission; a key with all its creator's. */
async function makeCallers(): Promise<Caller[]> {
  const callers: Caller[] = [];
  const org = async () => {
    const orgId = await createOrganization(svc);
    const owner = await createMember(svc, { orgId, role: 'owner' });
    return { orgId, owner, targetMemberId: await insertTargetMember(orgId) };
  };
  for (const role of ROLES) {
    const o = await org();
    const person = role === 'owner' ? o.owner : await createMember(svc, { orgId: o.orgId, role });
    callers.push({
      name: `person ${role}`,
      orgId: o.orgId,
      headers: person.headers,
      perms: permissionsOfRole(role),
      ownerPerson: role === 'owner',
      isKey: false,
      targetMemberId: o.targetMemberId,
    });
    const all = [...permissionsOfRole(role)];
    const key = await insertKey(person, all);
    callers.push({
      name: `key with all of its ${role} creator's`,
      orgId: o.orgId,
      headers: key.headers,
      perms: new Set(all),
      ownerPerson: false,
      isKey: true,
      targetMemberId: o.targetMemberId,
    });
  }
  for (const perm of ALL) {
    const o = await org();
    const key = await insertKey(o.owner, [perm]);
    callers.push({
      name: `key ${perm}`,
      orgId: o.orgId,
      headers: key.headers,
      perms: new Set([perm]),
      ownerPerson: false,
      isKey: true,
      targetMemberId: o.targetMemberId,
    });
  }
  return callers;
}

type Answer = { statusCode: number; body: string };

/** What a route gives: a role, or (an API key) a single permission. */
type Target = Role | Permission;
const isRoleTarget = (t: Target): t is Role => (ROLES as readonly string[]).includes(t);
const permsOf = (t: Target): ReadonlySet<Permission> =>
  isRoleTarget(t) ? permissionsOfRole(t) : new Set([t]);

interface RouteCase {
  /** The roles the route can give: every role, or the one self sign-up gives. */
  targets: readonly Target[];
  send(c: Caller, target: Target): Promise<Answer>;
  /** Puts the caller's organization back after an allowed call. */
  reset?(c: Caller): Promise<void>;
}

let seq = 0;
const email = () => `grant-${++seq}@matrix.test`;

/**
 * A member wallet of `orgId` with `role`, straight into the tables, for the length of one
 * call (a policy's target); removed after it, so the organizations' members stay as the
 * attacks below expect.
 */
async function withWalletOfRole<T>(orgId: string, role: Role, f: (id: string) => Promise<T>) {
  const id = newId('wallet');
  const member = newId('member');
  const now = svc.clock.now();
  const db = svc.container.db;
  await db.execute(sql`INSERT INTO wallets (id, address, created_at, updated_at)
    VALUES (${id}, ${`0x${id.slice(4).toLowerCase().padStart(40, '0')}`}, ${now}, ${now})`);
  await db.execute(sql`INSERT INTO members
    (id, organization_id, wallet_id, email, role, status, created_at, updated_at)
    VALUES (${member}, ${orgId}, ${id}, ${`${id.toLowerCase()}@target.test`}, ${role},
      'active', ${now}, ${now})`);
  try {
    return await f(id);
  } finally {
    await db.execute(sql`DELETE FROM members WHERE id = ${member}`);
    await db.execute(sql`DELETE FROM wallets WHERE id = ${id}`);
  }
}

/** The routes where a caller grants; the other places are tested by name below. */
const MATRIX: Record<Exclude<GrantSite, 'self-signup' | 'confirm-invite'>, RouteCase> = {
  'api-key': {
    // A key's permissions need not be a role's: each single permission too.
    targets: [...ROLES, ...ALL],
    send: (c, target) =>
      svc.app.inject({
        method: 'POST',
        url: '/api-keys',
        headers: c.headers,
        payload: { name: 'granted', permissions: crudOf([...permsOf(target)]) },
      }),
    reset: async (c) => {
      await svc.container.db.execute(sql`UPDATE api_keys SET deleted_at = now()
        WHERE organization_id = ${c.orgId} AND name = 'granted'`);
    },
  },
  invite: {
    targets: ROLES,
    send: (c, target) =>
      svc.app.inject({
        method: 'POST',
        url: `/organizations/${c.orgId}/members`,
        headers: c.headers,
        payload: { email: email(), role: target },
      }),
  },
  'change-role': {
    targets: ROLES,
    send: (c, target) =>
      svc.app.inject({
        method: 'PATCH',
        url: `/organizations/${c.orgId}/members/${c.targetMemberId}`,
        headers: c.headers,
        payload: { role: target },
      }),
    reset: async (c) => {
      await svc.container.db.execute(
        sql`UPDATE members SET role = 'viewer' WHERE id = ${c.targetMemberId}`,
      );
    },
  },
  'add-wallet': {
    targets: [SELF_SIGNUP_ROLE],
    send: (c) =>
      svc.app.inject({
        method: 'POST',
        url: '/wallets',
        headers: c.headers,
        payload: { organization_id: c.orgId, email: email(), password: 'correct horse 1' },
      }),
  },
  'self-signup-setting': {
    targets: [SELF_SIGNUP_ROLE],
    send: (c) =>
      svc.app.inject({
        method: 'PATCH',
        url: `/organizations/${c.orgId}`,
        headers: c.headers,
        payload: { settings: { allow_self_signup: true } },
      }),
    reset: async (c) => {
      await svc.container.db.execute(sql`UPDATE organizations
        SET settings = settings || '{"allow_self_signup": false}'::jsonb WHERE id = ${c.orgId}`);
    },
  },
  // A spend policy on a member wallet of each role: bounded by that role (docs/policies.md).
  policy: {
    targets: ROLES,
    send: (c, target) =>
      withWalletOfRole(c.orgId, target as Role, (walletId) =>
        svc.app.inject({
          method: 'POST',
          url: '/policies',
          headers: c.headers,
          payload: {
            name: 'granted',
            target_type: 'wallet',
            target_id: walletId,
            period: 'hour',
            max_actions: 5,
          },
        }),
      ),
    reset: async (c) => {
      await svc.container.db.execute(sql`DELETE FROM policies WHERE organization_id = ${c.orgId}`);
    },
  },
};

/** What the table says the answer must be. */
function expected(site: keyof typeof MATRIX, c: Caller, target: Target) {
  const [method, url] = GRANT_SITES[site].routes[0].split(' ') as [string, string];
  const route = routes.find((r) => r.method === method && r.url === url);
  if (!route) throw new Error(`${method} ${url} is not a route`);
  if (c.isKey && route.auth === 'bearer') return { status: 401, code: 16 };
  const needs = GRANT_SITES[site].needs;
  if (!c.perms.has(needs)) return { status: 403, code: 7, missing: null };
  const missing = ALL.filter((p) => permsOf(target).has(p) && !c.perms.has(p));
  if (missing.length > 0 || (target === 'owner' && !c.ownerPerson)) {
    return { status: 403, code: 7, missing };
  }
  return { status: 200 };
}

interface Row {
  site: string;
  caller: string;
  target: Target;
  status: number;
  body: string;
}
const results = new Map<string, Row>();
const mismatches = new Map<string, string[]>();
const rowKey = (site: string, caller: string, target: Target) => `${site} | ${caller} | ${target}`;
let matrixMs = 0;
const callerNamed = new Map<string, Caller>();

beforeAll(async () => {
  svc = await startTestService();
  routes = svc.routeTable();
  const callers = await makeCallers();
  for (const c of callers) callerNamed.set(c.name, c);
  const started = performance.now();
  for (const [site, rc] of Object.entries(MATRIX) as [keyof typeof MATRIX, RouteCase][]) {
    const wrong: string[] = [];
    for (const c of callers) {
      for (const target of rc.targets) {
        // A key is refused by POST /api-keys before its body is read (401): the role
        // targets show that; the single permissions are for the people who may call it.
        if (site === 'api-key' && c.isKey && !isRoleTarget(target)) continue;
        const res = await rc.send(c, target);
        const key = rowKey(site, c.name, target);
        results.set(key, { site, caller: c.name, target, status: res.statusCode, body: res.body });
        const want = expected(site, c, target);
        const got = JSON.parse(res.body) as {
          code?: number;
          message?: string;
          details?: { missing_permissions?: string[] };
        };
        if (res.statusCode !== want.status || (want.code !== undefined && got.code !== want.code)) {
          wrong.push(`${key}: want ${want.status}, got ${res.statusCode} ${res.body}`);
        } else if (want.missing && want.missing.length > 0) {
          // The refusal names exactly what the caller lacks.
          const named = got.details?.missing_permissions ?? [];
          if (JSON.stringify(named) !== JSON.stringify(want.missing)) {
            wrong.push(`${key}: names ${JSON.stringify(named)}, lacks ${want.missing.join(',')}`);
          }
          for (const p of want.missing) {
            if (!got.message?.includes(p)) wrong.push(`${key}: message misses ${p}`);
          }
        }
        if (res.statusCode === 200) await rc.reset?.(c);
      }
    }
    mismatches.set(site, wrong);
  }
  matrixMs = performance.now() - started;
}, 240_000);
afterAll(async () => {
  await svc?.stop();
});

describe('the grant matrix (every granting route × caller × role)', () => {
  for (const site of Object.keys(MATRIX)) {
    it(`${site}: allowed exactly when the role is within the caller's permissions`, () => {
      expect(mismatches.get(site)).toEqual([]);
    });
  }

  it('covered every caller and role of the table, allowed and refused', () => {
    const callers = new Set([...results.values()].map((r) => r.caller));
    expect(callers.size).toBe(ROLES.length * 2 + ALL.length);
    for (const site of Object.keys(MATRIX)) {
      const rows = [...results.values()].filter((r) => r.site === site);
      expect(
        rows.some((r) => r.status === 200),
        `${site} allows someone`,
      ).toBe(true);
      expect(
        rows.some((r) => r.status === 403),
        `${site} refuses someone`,
      ).toBe(true);
    }
    console.info(`grant matrix: ${results.size} calls in ${Math.round(matrixMs)} ms`);
  });

  it('attack 1: a key holding only members.create cannot invite an admin', () => {
    const row = results.get(rowKey('invite', 'key members.create', 'admin'))!;
    expect(row.status, row.body).toBe(403);
    expect(JSON.parse(row.body)).toMatchObject({ code: 7 });
    expect(JSON.parse(row.body).details.missing_permissions).toContain('api-keys.create');
    // …nor any role: each would hold something the key lacks.
    for (const target of ROLES) {
      expect(results.get(rowKey('invite', 'key members.create', target))!.status).toBe(403);
    }
  });

  it('attack 2: a key holding only members.create cannot make a member wallet', async () => {
    const row = results.get(rowKey('add-wallet', 'key members.create', SELF_SIGNUP_ROLE))!;
    expect(row.status, row.body).toBe(403);
    const body = JSON.parse(row.body);
    expect(body.code).toBe(7);
    expect(body.details.missing_permissions).toEqual(
      expect.arrayContaining(['deposits.read', 'actions.create']),
    );
    // Nothing was made: the key's organization still has its owner and target only.
    const { orgId } = callerNamed.get('key members.create')!;
    const { rows } = await svc.container.db.execute<{ role: string }>(
      sql`SELECT role FROM members WHERE organization_id = ${orgId} ORDER BY role`,
    );
    expect(rows.map((r) => r.role)).toEqual(['owner', 'viewer']);
  });

  it('attack 3: a key holding only organizations.update cannot open self sign-up', async () => {
    const row = results.get(
      rowKey('self-signup-setting', 'key organizations.update', SELF_SIGNUP_ROLE),
    )!;
    expect(row.status, row.body).toBe(403);
    expect(JSON.parse(row.body).code).toBe(7);
    const { orgId } = callerNamed.get('key organizations.update')!;
    const { rows } = await svc.container.db.execute<{ id: string; open: boolean }>(sql`
      SELECT o.id, (o.settings->>'allow_self_signup')::boolean AS open FROM organizations o
      WHERE o.id = ${orgId}`);
    expect(rows[0]!.open).toBe(false);
    // So nobody joins it by signing up.
    const join = await svc.app.inject({
      method: 'POST',
      url: '/organizations/wallets',
      payload: { email: email(), password: 'correct horse 1', organization_id: rows[0]!.id },
    });
    expect(join.statusCode, join.body).toBe(403);
  });
});

describe('the table of granting places', () => {
  const declared = () =>
    routes.filter((r) => r.grants !== undefined).map((r) => `${r.grants} ${r.method} ${r.url}`);

  it('every route in GRANT_SITES declares that place, and no other route declares one', () => {
    const listed = Object.entries(GRANT_SITES).flatMap(([site, g]) =>
      g.routes.map((r) => `${site} ${r}`),
    );
    expect(declared().sort()).toEqual(listed.sort());
  });

  it('every granting place is tested: the matrix or a test of its own below', () => {
    const own: GrantSite[] = ['self-signup', 'confirm-invite'];
    expect([...Object.keys(MATRIX), ...own].sort()).toEqual(Object.keys(GRANT_SITES).sort());
  });

  it('a route whose body can name a role, permissions, self sign-up or an organization to join declares a grant', async () => {
    // Routes that take such a field and give nothing, each with its reason.
    const givesNothing: Record<string, string> = {
      'POST /organizations': 'the founder becomes the owner of a new, empty organization',
      'POST /organizations/switch': 'switches among the memberships the caller already has',
    };
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<
        string,
        Record<string, { requestBody?: { content?: Record<string, { schema?: unknown }> } }>
      >;
    }>();
    const granting = /"(role|permissions|allow_self_signup|organization_id)"/;
    const undeclared: string[] = [];
    const matched = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const name = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
        const schema = JSON.stringify(op.requestBody?.content?.['application/json']?.schema ?? {});
        if (!granting.test(schema)) continue;
        matched.add(name);
        if (givesNothing[name]) continue;
        const route = routes.find((r) => `${r.method} ${r.url}` === name);
        if (route?.grants === undefined) undeclared.push(name);
      }
    }
    expect(undeclared, 'declare config.grants (src/lib/grants.ts, GRANT_SITES)').toEqual([]);
    // The exceptions are real routes that take such a field (no stale entry hides one).
    for (const name of Object.keys(givesNothing)) expect(matched.has(name), name).toBe(true);
    expect(matched.size).toBeGreaterThan(Object.keys(givesNothing).length);
  });
});

/** Whether a person of role `granter` may give `target` (the table's rule, computed here). */
function personMayGrant(granter: Role, target: Role): boolean {
  const has = permissionsOfRole(granter);
  return (
    [...permissionsOfRole(target)].every((p) => has.has(p)) &&
    (target !== 'owner' || granter === 'owner')
  );
}

describe('confirming an invitation re-checks its inviter as it is then', () => {
  async function activeRole(memberId: string) {
    const { rows } = await svc.container.db.execute<{ role: string; status: string }>(
      sql`SELECT role, status FROM members WHERE id = ${memberId}`,
    );
    return rows[0]!;
  }

  it('an owner invites each role, is then given each role: confirmed exactly when it could still grant it', async () => {
    const wrong: string[] = [];
    for (const target of ROLES) {
      for (const now of ROLES) {
        const inviter = await createMember(svc, { role: 'owner' });
        const inv = await steps.invite(inviter, email(), target);
        await svc.container.db.execute(
          sql`UPDATE members SET role = ${now} WHERE id = ${inviter.memberId}`,
        );
        const res = await steps.confirm(inviter.orgId, inv.token, inv.id);
        const want = personMayGrant(now, target) ? 200 : 403;
        if (res.statusCode !== want) {
          wrong.push(`${target} invited by an owner now ${now}: ${res.statusCode} ${res.body}`);
        } else if (want === 403) {
          expect(res.json().code).toBe(7);
          expect((await activeRole(inv.id)).status).toBe('invited');
        } else {
          expect(await activeRole(inv.id)).toEqual({ role: target, status: 'active' });
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('an inviter removed since grants nothing; the invitation stays until it expires', async () => {
    const owner = await createMember(svc, { role: 'owner' });
    const admin = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
    const inv = await steps.invite(admin, email(), 'viewer');
    await svc.container.db.execute(
      sql`UPDATE members SET status = 'removed' WHERE id = ${admin.memberId}`,
    );
    const res = await steps.confirm(owner.orgId, inv.token, inv.id);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().details.missing_permissions).toContain('objects.read');
    expect((await activeRole(inv.id)).status).toBe('invited');
  });

  it('an invitation by an API key holds while the key does, and not once it is deleted', async () => {
    const owner = await createMember(svc, { role: 'owner' });
    const perms = ['members.create', ...permissionsOfRole('viewer')] as Permission[];
    const key = await insertKey(owner, perms);
    const keyAsInviter = { ...owner, headers: key.headers };
    const kept = await steps.invite(keyAsInviter, email(), 'viewer');
    const dropped = await steps.invite(keyAsInviter, email(), 'viewer');
    expect((await steps.confirm(owner.orgId, kept.token, kept.id)).statusCode).toBe(200);
    await svc.container.db.execute(
      sql`UPDATE api_keys SET deleted_at = now() WHERE id = ${key.id}`,
    );
    const res = await steps.confirm(owner.orgId, dropped.token, dropped.id);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toBe(7);
  });

  // A pending invitation's role changed (PATCH …/members/{id}) answers to whoever changed it:
  // before, the original inviter stayed recorded, so an admin's raise outlived the admin's
  // removal, and an owner's raise to owner of an admin's invitation could never be confirmed.
  const CHANGED: {
    inviter: 'owner' | 'admin';
    setter: 'owner' | 'admin';
    to: Role;
    removed: 'setter' | 'inviter' | 'nobody';
    confirmed: boolean;
  }[] = [
    { inviter: 'owner', setter: 'admin', to: 'admin', removed: 'setter', confirmed: false },
    { inviter: 'owner', setter: 'admin', to: 'member', removed: 'setter', confirmed: false },
    { inviter: 'owner', setter: 'admin', to: 'admin', removed: 'nobody', confirmed: true },
    { inviter: 'admin', setter: 'owner', to: 'owner', removed: 'nobody', confirmed: true },
    { inviter: 'admin', setter: 'owner', to: 'admin', removed: 'inviter', confirmed: true },
  ];
  for (const c of CHANGED) {
    it(`${c.inviter} invites a viewer, ${c.setter} makes it ${c.to}, ${c.removed} removed: ${c.confirmed ? 'confirmed' : '403'}`, async () => {
      const owner = await createMember(svc, { role: 'owner' });
      const admin = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
      const as = { owner, admin };
      const inv = await steps.invite(as[c.inviter], email(), 'viewer');
      const changed = await svc.app.inject({
        method: 'PATCH',
        url: `/organizations/${owner.orgId}/members/${inv.id}`,
        headers: as[c.setter].headers,
        payload: { role: c.to },
      });
      expect(changed.statusCode, changed.body).toBe(200);
      const gone = c.removed === 'nobody' ? null : as[c[c.removed]];
      if (gone) {
        await svc.container.db.execute(
          sql`UPDATE members SET status = 'removed' WHERE id = ${gone.memberId}`,
        );
      }
      const res = await steps.confirm(owner.orgId, inv.token, inv.id);
      expect(res.statusCode, res.body).toBe(c.confirmed ? 200 : 403);
      expect(await activeRole(inv.id)).toEqual(
        c.confirmed ? { role: c.to, status: 'active' } : { role: c.to, status: 'invited' },
      );
    });
  }

  it('an invitation that names no inviter (made before they were recorded) is refused', async () => {
    const owner = await createMember(svc, { role: 'owner' });
    const inv = await steps.invite(owner, email(), 'viewer');
    await svc.container.db.execute(sql`UPDATE members
      SET invited_by_wallet_id = NULL, invited_by_api_key_id = NULL WHERE id = ${inv.id}`);
    const res = await steps.confirm(owner.orgId, inv.token, inv.id);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().message).toMatch(/ask for a new one/);
  });
});

describe('self sign-up gives exactly its role, only where it is on', () => {
  for (const open of [false, true]) {
    it(`POST /organizations/wallets with organization_id, self sign-up ${open ? 'on' : 'off'}`, async () => {
      const orgId = await createOrganization(svc, { allowSelfSignup: open });
      const res = await svc.app.inject({
        method: 'POST',
        url: '/organizations/wallets',
        payload: { email: email(), password: 'correct horse 1', organization_id: orgId },
      });
      expect(res.statusCode, res.body).toBe(open ? 200 : 403);
      const { rows } = await svc.container.db.execute<{ role: string }>(
        sql`SELECT role FROM members WHERE organization_id = ${orgId}`,
      );
      expect(rows.map((r) => r.role)).toEqual(open ? [SELF_SIGNUP_ROLE] : []);
    });
  }
});
