import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealStoredSecrets } from '../../src/db/sealed-columns.js';
import { SecretSealer } from '../../src/lib/sealed-secret.js';
import { SECRET_TABLES } from '../../src/stored-secrets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { call, createWebhook, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * The start-up pass never lets a driver's error carry a secret (src/db/sealed-columns.ts): for
 * every column of every table in the stored-secrets list (src/stored-secrets.ts), a write that
 * fails with the rows' clear values in PostgreSQL's message (and drizzle's, which lists the
 * parameters) is rethrown naming the column and the SQLSTATE only. Generated from the list,
 * so a table added to it is checked, and must have a row here.
 */
const sealer = new SecretSealer({ key: randomBytes(32), previous: [] });
const CASES = SECRET_TABLES.flatMap((table) => table.columns.map((column) => ({ table, column })));

let svc: TestService;
beforeAll(async () => {
  // Every secret clear (no SECRETS_KEY), a webhook with both keys.
  svc = await startTestService({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const { signer, templateId } = await signerWithTemplate(svc);
  const hook = await createWebhook(svc, signer, 'https://127.0.0.1:9/hook', [
    { template_id: templateId },
  ]);
  await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
  await svc.container.db.execute(sql`
    CREATE FUNCTION test_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'refused: % -> %', row_to_json(OLD), row_to_json(NEW);
    END $$`);
});
afterAll(async () => {
  await svc?.stop();
});

/** The longest run of a value's characters that any text quoting it keeps as it is. */
function marker(value: string | Buffer): string {
  const text = typeof value === 'string' ? value : value.toString('hex');
  return text.split(/[\s"{},:\\]+/).reduce((a, b) => (b.length > a.length ? b : a), '');
}

/** Everything an error carries: its own properties, its stack, its causes. */
function everything(err: unknown): string {
  const out: string[] = [];
  for (let e = err as Error | undefined; e; e = e.cause as Error | undefined) {
    out.push(JSON.stringify(e, Object.getOwnPropertyNames(e)), String(e.stack));
  }
  return out.join('\n');
}

describe('the start-up pass, when a write of a stored secret fails', () => {
  it.each(CASES.map((c) => [c.column.name, c]))(
    'drops the driver error of %s',
    async (name, { table, column }) => {
      const db = svc.container.db;
      const rows = await column.read(db, '', true);
      expect(rows.length, `${name} has no row in this test`).toBeGreaterThan(0);
      const markers = rows.map((r) => marker(r.value));
      for (const m of markers) expect(m.length).toBeGreaterThanOrEqual(32);
      const [tableName, columnName] = name.split('.') as [string, string];
      expect(tableName).toBe(table.table);
      expect(columnName).toMatch(/^[a-z_]+$/);
      await db.execute(
        sql.raw(`CREATE TRIGGER test_refuse BEFORE UPDATE OF ${columnName} ON ${tableName}
          FOR EACH ROW EXECUTE FUNCTION test_refuse_update()`),
      );
      let err: unknown;
      try {
        await sealStoredSecrets(db, sealer, [table]);
      } catch (e) {
        err = e;
      } finally {
        await db.execute(sql.raw(`DROP TRIGGER test_refuse ON ${tableName}`));
      }
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toBe(`sealing ${name} failed (SQLSTATE P0001)`);
      expect((err as Error).cause).toBeUndefined();
      const carried = everything(err);
      for (const m of markers) expect(carried).not.toContain(m);
      // The table's transaction rolled back: its values are as they were.
      expect((await column.read(db, '', true)).map((r) => marker(r.value))).toEqual(markers);
    },
  );
});
