import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { dumpTables, loadTables, type LogicalDump } from './logical-dump.js';
import { migrate } from './migrate.js';
import { createDatabase } from './pool.js';
import { connectionFor, findTool } from './pg-tools.js';

/**
 * The database half of `ons backup` / `ons restore` (src/cli/backup.ts holds the archive and
 * the files; docs/self-hosting.md, "Backup and restore"): one snapshot, dumped by pg_dump
 * when one can read the server, else by the built-in dump; and the restore into an empty
 * database, checked against the snapshot's row counts.
 */
const run = promisify(execFile);

export type BackupMethod = 'auto' | 'pg_dump' | 'builtin';

/** A failure the operator can act on: printed as it is, exit status 1. */
export class BackupError extends Error {}

export type DumpedDatabase =
  | { method: 'pg_dump'; file: 'database.pgdump'; pg_dump_major: number }
  | ({ method: 'builtin'; dir: 'database' } & LogicalDump);

export interface DatabaseDump {
  server_version: string;
  migrations: string[];
  row_counts: Record<string, number>;
  database: DumpedDatabase;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function tableCounts(client: pg.ClientBase): Promise<Record<string, number>> {
  const { rows } = await client.query<{ name: string }>(`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`);
  const counts: Record<string, number> = {};
  for (const { name } of rows) {
    const { rows: n } = await client.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${ident(name)}`,
    );
    counts[name] = Number(n[0]!.n);
  }
  return counts;
}

const listed = (seen: { path: string; major: number }[]) =>
  seen.map((t) => `${t.path} (${t.major})`).join(', ') || 'none';

async function pickPgDump(method: BackupMethod, serverMajor: number, binDir: string | null) {
  if (method === 'builtin') return null;
  const { tool, seen } = await findTool('pg_dump', serverMajor, binDir);
  if (!tool && method === 'pg_dump') {
    throw new BackupError(
      `no pg_dump can read this PostgreSQL ${serverMajor} server (pg_dump refuses a server ` +
        `newer than itself); found: ${listed(seen)}. Install PostgreSQL ${serverMajor}'s ` +
        'client and set PG_BIN_DIR, or use --method builtin',
    );
  }
  return tool;
}

async function runTool(file: string, args: string[], what: string) {
  try {
    await run(file, args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new BackupError(`${what} failed: ${stderr || String(err)}`);
  }
}

/**
 * Dumps the database at `url` into `staging` (`database.pgdump`, or `database/` for the
 * built-in dump), with the row count of every table, all from one REPEATABLE READ snapshot:
 * pg_dump is handed the snapshot this transaction exports.
 */
export async function dumpDatabase(
  url: string,
  staging: string,
  method: BackupMethod,
  binDir: string | null,
): Promise<DatabaseDump> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await client.query<{ v: string; n: string; snapshot: string }>(
      `SELECT current_setting('server_version') AS v,
         current_setting('server_version_num') AS n, pg_export_snapshot() AS snapshot`,
    );
    const server = rows[0]!;
    const serverMajor = Math.floor(Number(server.n) / 10_000);
    const migrations = (
      await client.query<{ version: string }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      )
    ).rows.map((r) => r.version);
    const counts = await tableCounts(client);
    const pgDump = await pickPgDump(method, serverMajor, binDir);
    let database: DumpedDatabase;
    if (pgDump) {
      const secrets = await mkdtemp(path.join(os.tmpdir(), 'ons-pg-'));
      try {
        await runTool(
          pgDump.path,
          [
            '--format=custom',
            '--no-owner',
            '--no-privileges',
            `--snapshot=${server.snapshot}`,
            `--file=${path.join(staging, 'database.pgdump')}`,
            `--dbname=${await connectionFor(url, secrets)}`,
          ],
          'pg_dump',
        );
      } finally {
        await rm(secrets, { recursive: true, force: true });
      }
      database = { method: 'pg_dump', file: 'database.pgdump', pg_dump_major: pgDump.major };
    } else {
      await mkdir(path.join(staging, 'database'));
      const dump = await dumpTables(client, path.join(staging, 'database'));
      database = { method: 'builtin', dir: 'database', ...dump };
    }
    await client.query('COMMIT');
    return { server_version: server.v, migrations, row_counts: counts, database };
  } finally {
    await client.end();
  }
}

/** The target must hold no table yet: a restore never merges into a database in use. */
async function assertEmpty(client: pg.ClientBase) {
  const { rows } = await client.query<{ n: number }>(`
    SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')`);
  if (rows[0]!.n > 0) {
    throw new BackupError(
      `the target database already holds ${rows[0]!.n} tables: restore into an empty ` +
        'database (a new DATA_DIR, or a new database named in DATABASE_URL)',
    );
  }
}

/**
 * A pool for `fn` alone, ended after it: the service's kind (pool.ts), whose idle clients'
 * errors are ignored. pg-pool's `end()` answers before its clients have closed, and a restore
 * stops the embedded server it started right after, which may cut a connection still closing.
 */
export async function withPool<T>(url: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const database = createDatabase(url, 1);
  try {
    return await fn(database.pool);
  } finally {
    await database.close();
  }
}

/**
 * Restores a dump unpacked in `dir` into the empty database at `url`, checks every table's
 * row count against the snapshot's, then applies this release's later migrations (answered).
 */
export async function restoreDatabase(
  url: string,
  dir: string,
  dump: DatabaseDump,
  binDir: string | null,
): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await assertEmpty(client);
    if (dump.database.method === 'pg_dump') {
      const major = dump.database.pg_dump_major;
      const { tool, seen } = await findTool('pg_restore', major, binDir);
      if (!tool) {
        throw new BackupError(
          `the backup was written by pg_dump ${major}; no pg_restore of that version or newer ` +
            `was found (found: ${listed(seen)}). Install PostgreSQL ${major}'s client and set PG_BIN_DIR`,
        );
      }
      await runTool(
        tool.path,
        [
          '--no-owner',
          '--no-privileges',
          '--exit-on-error',
          '--single-transaction',
          `--dbname=${await connectionFor(url, dir)}`,
          path.join(dir, 'database.pgdump'),
        ],
        'pg_restore',
      );
    } else {
      // The schema the backup was taken at, then its rows, then the rest of this release's.
      await withPool(url, (pool) => migrate(pool, { only: new Set(dump.migrations) }));
      await client.query('BEGIN');
      try {
        await loadTables(client, path.join(dir, 'database'), dump.database);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
    const counts = await tableCounts(client);
    for (const [table, n] of Object.entries(dump.row_counts)) {
      if (counts[table] !== n) {
        throw new BackupError(
          `restored ${table} holds ${counts[table] ?? 'no table'} rows, the backup ${n}`,
        );
      }
    }
    return (await withPool(url, (pool) => migrate(pool))).applied;
  } finally {
    await client.end();
  }
}
