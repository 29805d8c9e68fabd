import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export function databaseUrl(name: string): string {
  const u = new URL(inject('pgAdminUrl'));
  u.pathname = `/${name}`;
  return u.toString();
}

/** A new database cloned from the migrated template: one per test file (or per call). */
export async function freshDatabaseUrl(): Promise<string> {
  const name = `${inject('pgRunId')}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  try {
    // CREATE DATABASE … TEMPLATE fails while another clone is being made; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
        break;
      } catch (err) {
        if (attempt >= 20 || !/being accessed by other users/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  return databaseUrl(name);
}
