import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant works; it only has to be the same for every process of this service.
const MIGRATION_LOCK = 7_411_002_001;

export interface MigrationResult {
  applied: string[];
}

/** The versions of this release's migrations (file names without `.sql`), in order. */
export async function migrationVersions(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR))
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((f) => f.replace(/\.sql$/, ''));
}

/**
 * Applies the numbered SQL files in src/db/migrations that the database has not seen,
 * each in its own transaction, under an advisory lock so concurrent starts are safe.
 * `only`: just those versions (a restore rebuilds the schema a backup was taken at).
 */
export async function migrate(
  pool: pg.Pool,
  opts: { only?: ReadonlySet<string> } = {},
): Promise<MigrationResult> {
  const files = (await migrationVersions()).map((v) => `${v}.sql`);
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: string }>(
      'SELECT version FROM schema_migrations',
    );
    const done = new Set(rows.map((r) => r.version));
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version) || (opts.only && !opts.only.has(version))) continue;
      const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(text);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
  return { applied };
}
