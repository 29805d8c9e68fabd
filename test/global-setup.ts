import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbedded, type EmbeddedServer } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../src/db/pool.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    pgRunId: string;
  }
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL's (or DATABASE_URL's) server when
 * set, else an embedded one in a temporary directory. The schema is migrated once into a
 * template database; each test file then clones it (test/helpers/db.ts).
 */
export default async function setup(project: TestProject) {
  const externalUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || null;
  let embedded: EmbeddedServer | null = null;
  let dir: string | null = null;
  if (!externalUrl) {
    dir = await mkdtemp(path.join(tmpdir(), 'ons-test-'));
    embedded = await startEmbedded(dir);
  }
  const adminUrl = externalUrl ?? embedded!.url;
  const runId = `ons_${Date.now().toString(36)}_${process.pid}`;
  const template = `${runId}_tpl`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const tplDb = createDatabase(withDatabase(adminUrl, template), 2);
  await migrate(tplDb.pool);
  await tplDb.close();
  await admin.query(`ALTER DATABASE ${template} WITH is_template = true`);
  await admin.end();

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgRunId', runId);

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const { rows } = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1`,
      [`${runId}%`],
    );
    for (const { datname } of rows) {
      await c.query(`ALTER DATABASE ${datname} WITH is_template = false`);
      await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
    await c.end();
    if (embedded) await embedded.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  };
}
