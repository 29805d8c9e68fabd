import { sql } from 'drizzle-orm';
import { addressForWalletId } from '../../src/lib/address.js';
import { newId } from '../../src/lib/ids.js';
import type { Role } from '../../src/lib/permissions.js';
import type { TestService } from './service.js';

export interface TestMember {
  orgId: string;
  walletId: string;
  memberId: string;
  address: string;
  email: string;
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  /** `{authorization: 'Bearer …'}` for app.inject. */
  headers: Record<string, string>;
}

export async function createOrganization(
  svc: TestService,
  opts: { name?: string; allowSelfSignup?: boolean; balanceWei?: bigint } = {},
): Promise<string> {
  const id = newId('organization');
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO organizations
    (id, name, settings, balance_wei, created_at, updated_at)
    VALUES (${id}, ${opts.name ?? 'Test Org'},
      ${JSON.stringify({ allow_self_signup: opts.allowSelfSignup ?? false })}::jsonb,
      0, ${now}, ${now})`);
  return id;
}

/**
 * A wallet that is an active member of an organization (a new one unless `orgId` is
 * given), signed in: straight to the database, so feature tests do not depend on the
 * sign-in routes. Sign-in itself is tested through its routes.
 */
export async function createMember(
  svc: TestService,
  opts: { orgId?: string; role?: Role; email?: string; address?: string } = {},
): Promise<TestMember> {
  const orgId = opts.orgId ?? (await createOrganization(svc));
  const walletId = newId('wallet');
  const memberId = newId('member');
  const address = (opts.address ?? addressForWalletId(walletId)).toLowerCase();
  const email = opts.email ?? `${walletId.toLowerCase()}@example.test`;
  const now = svc.clock.now();
  const db = svc.container.db;
  await db.execute(sql`INSERT INTO wallets (id, address, email, email_confirmed_at, default_org_id, created_at, updated_at)
    VALUES (${walletId}, ${address}, ${email}, ${now}, ${orgId}, ${now}, ${now})`);
  await db.execute(sql`INSERT INTO members (id, organization_id, wallet_id, email, role, status, created_at, updated_at)
    VALUES (${memberId}, ${orgId}, ${walletId}, ${email}, ${opts.role ?? 'owner'}, 'active', ${now}, ${now})`);
  const tokens = await svc.container.sessions.issue(db, { walletId, orgId, device: 'test' });
  const { rows } = await db.execute<{ id: string }>(
    sql`SELECT id FROM sessions WHERE wallet_id = ${walletId} ORDER BY created_at DESC LIMIT 1`,
  );
  return {
    orgId,
    walletId,
    memberId,
    address,
    email,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    sessionId: rows[0]!.id,
    headers: { authorization: `Bearer ${tokens.access_token}` },
  };
}

/** Makes `m`'s wallet an active member of another organization too (a second membership). */
export async function joinOrganization(
  svc: TestService,
  m: TestMember,
  orgId: string,
  role: Role = 'viewer',
): Promise<void> {
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO members (id, organization_id, wallet_id,
      email, role, status, created_at, updated_at)
    VALUES (${newId('member')}, ${orgId}, ${m.walletId}, ${m.email}, ${role}, 'active', ${now},
      ${now})`);
}
