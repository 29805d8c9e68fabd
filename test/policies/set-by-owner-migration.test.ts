/**
 * Migration 0038 marks the policies written before it (docs/decisions.md, "An owner's policy
 * is lifted by an owner only"): an owner's, unless nothing says an owner touched it — created
 * by a wallet that is not an owner today, or by an API key, and never changed since.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { createMember } from '../helpers/fixtures.js';
import { freshDatabaseUrl } from '../helpers/db.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ databaseUrl: await freshDatabaseUrl() });
});
afterAll(async () => {
  await svc?.stop();
});

describe('migration 0038 on policies written before it', () => {
  it("marks as an owner's what an owner created, and what anyone changed since", async () => {
    const db = svc.container.db;
    const owner = await createMember(svc, { role: 'owner' });
    const orgId = owner.orgId;
    const admin = await createMember(svc, { orgId, role: 'admin' });
    const demoted = await createMember(svc, { orgId, role: 'admin' });
    // The schema before the migration.
    await db.execute(sql`ALTER TABLE policies DROP COLUMN set_by_owner`);
    await db.execute(sql`DELETE FROM schema_migrations WHERE version = '0038_policy_set_by_owner'`);
    const t0 = new Date('2026-11-01T00:00:00Z');
    const t1 = new Date('2026-11-02T00:00:00Z');
    const rows: [string, string, string | null, Date, boolean][] = [
      // name, created by wallet, by key, updated at, expected set_by_owner
      ['owner, unchanged', owner.walletId, null, t0, true],
      ['owner, changed', owner.walletId, null, t1, true],
      ['admin, unchanged', admin.walletId, null, t0, false],
      ['admin, changed since', admin.walletId, null, t1, true],
      ["owner's key, unchanged", owner.walletId, newId('apiKey'), t0, false],
      ["owner's key, changed since", owner.walletId, newId('apiKey'), t1, true],
      ['an admin now, unchanged', demoted.walletId, null, t0, false],
    ];
    for (const [name, byWallet, byKey, updatedAt] of rows) {
      await db.execute(sql`INSERT INTO policies (id, organization_id, name, target_type,
          target_id, max_fee_wei, created_by_wallet_id, created_by_api_key_id, created_at,
          updated_at)
        VALUES (${newId('policy')}, ${orgId}, ${name}, 'organization', NULL, 1, ${byWallet},
          ${byKey}, ${t0}, ${updatedAt})`);
    }
    expect((await migrate(svc.database.pool)).applied).toEqual(['0038_policy_set_by_owner']);
    const { rows: after } = await db.execute<{ name: string; set_by_owner: boolean }>(
      sql`SELECT name, set_by_owner FROM policies WHERE organization_id = ${orgId}`,
    );
    expect(Object.fromEntries(after.map((r) => [r.name, r.set_by_owner]))).toEqual(
      Object.fromEntries(rows.map(([name, , , , expected]) => [name, expected])),
    );
  });
});
