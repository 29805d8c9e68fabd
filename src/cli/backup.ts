import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Config } from '../config.js';
import { dumpTables, loadTables, type LogicalDump } from '../db/logical-dump.js';
import { migrate, migrationVersions } from '../db/migrate.js';
import { connectionFor, findTool, type FoundTool } from '../db/pg-tools.js';
import { withRawDatabaseUrl } from './raw-database.js';

/**
 * `npm run ons -- backup FILE` and `restore FILE` (docs/self-hosting.md, "Backup and
 * restore"). One archive (tar + gzip, mode 0600: it holds every secret the database holds)
 * with `manifest.json`, the database (pg_dump's custom format when a pg_dump able to read
 * the server is found, else the built-in dump of src/db/logical-dump.ts) and the stored files
 * (DATA_DIR/files or STORAGE_DIR; an S3 store's files are only noted). The database is read
 * in one snapshot, whose row counts the manifest keeps and a restore checks; the files are
 * copied after it, so every file a row names is there (files are named by their content and
 * never deleted).
 */
const run = promisify(execFile);

export type BackupMethod = 'auto' | 'pg_dump' | 'builtin';

export class BackupError extends Error {}

interface Manifest {
  format: 'ons-backup';
  version: 1;
  created_at: string;
  server_version: string;
  migrations: string[];
  row_counts: Record<string, number>;
  database:
    | { method: 'pg_dump'; file: 'database.pgdump'; pg_dump_major: number }
    | ({ method: 'builtin'; dir: 'database' } & LogicalDump);
  files: { store: 'disk'; count: number; bytes: number } | { store: 's3'; note: string };
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

function s3Note(config: Config): string {
  const s3 = config.storage.s3!;
  return (
    `stored files are in the S3 bucket "${s3.bucket}" at ${s3.endpoint} and are not in this ` +
    `archive: back the bucket up with the object store's own tools (versioning, replication)`
  );
}

/** Copies the stored files (not half-written `.tmp` ones); answers how many and their size. */
async function copyFiles(from: string, to: string): Promise<{ count: number; bytes: number }> {
  let count = 0;
  let bytes = 0;
  const exists = await stat(from).then(
    (s) => s.isDirectory(),
    () => false,
  );
  await mkdir(to, { recursive: true });
  if (!exists) return { count, bytes };
  await cp(from, to, {
    recursive: true,
    force: false,
    errorOnExist: false,
    filter: async (src) => {
      if (src.endsWith('.tmp')) return false;
      const s = await stat(src);
      if (s.isFile()) {
        count++;
        bytes += s.size;
      }
      return true;
    },
  });
  return { count, bytes };
}

async function pickPgDump(
  method: BackupMethod,
  serverMajor: number,
  config: Config,
): Promise<FoundTool | null> {
  if (method === 'builtin') return null;
  const { tool, seen } = await findTool('pg_dump', serverMajor, config.pgBinDir);
  if (!tool && method === 'pg_dump') {
    const list = seen.map((t) => `${t.path} (${t.major})`).join(', ') || 'none';
    throw new BackupError(
      `no pg_dump can read this PostgreSQL ${serverMajor} server (pg_dump refuses a server ` +
        `newer than itself); found: ${list}. Install PostgreSQL ${serverMajor}'s client and ` +
        `set PG_BIN_DIR, or use --method builtin`,
    );
  }
  return tool;
}

export interface BackupResult {
  file: string;
  method: 'pg_dump' | 'builtin';
  tables: number;
  rows: number;
  files: number;
  note?: string;
}

export async function backup(
  config: Config,
  file: string,
  method: BackupMethod,
): Promise<BackupResult> {
  const target = path.resolve(file);
  await mkdir(path.dirname(target), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(target), '.ons-backup-'));
  try {
    const manifest = await withRawDatabaseUrl(config, async (url) => {
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
        const pgDump = await pickPgDump(method, serverMajor, config);
        let database: Manifest['database'];
        if (pgDump) {
          // pg_dump reads the snapshot this transaction exported, so it sees what was counted.
          const secrets = await mkdtemp(path.join(os.tmpdir(), 'ons-pg-'));
          try {
            await run(
              pgDump.path,
              [
                '--format=custom',
                '--no-owner',
                '--no-privileges',
                `--snapshot=${server.snapshot}`,
                `--file=${path.join(staging, 'database.pgdump')}`,
                `--dbname=${await connectionFor(url, secrets)}`,
              ],
              { maxBuffer: 16 * 1024 * 1024 },
            );
          } catch (err) {
            const stderr = (err as { stderr?: string }).stderr?.trim();
            throw new BackupError(`pg_dump failed: ${stderr || String(err)}`);
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
        return {
          format: 'ons-backup' as const,
          version: 1 as const,
          created_at: new Date().toISOString(),
          server_version: server.v,
          migrations,
          row_counts: counts,
          database,
          files: config.storage.s3
            ? { store: 's3' as const, note: s3Note(config) }
            : { store: 'disk' as const, count: 0, bytes: 0 },
        } satisfies Manifest;
      } finally {
        await client.end();
      }
    });
    if (manifest.files.store === 'disk') {
      const copied = await copyFiles(config.storage.dir, path.join(staging, 'files'));
      manifest.files = { store: 'disk', ...copied };
    }
    await writeFile(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const partial = `${target}.partial`;
    await run('tar', ['-czf', partial, '-C', staging, '.']);
    await chmod(partial, 0o600);
    await rename(partial, target);
    return {
      file: target,
      method: manifest.database.method,
      tables: Object.keys(manifest.row_counts).length,
      rows: Object.values(manifest.row_counts).reduce((a, b) => a + b, 0),
      files: manifest.files.store === 'disk' ? manifest.files.count : 0,
      ...(manifest.files.store === 's3' ? { note: manifest.files.note } : {}),
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function readManifest(dir: string): Promise<Manifest> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    throw new BackupError('not a backup made by `ons backup` (no readable manifest.json)');
  }
  if (manifest.format !== 'ons-backup' || manifest.version !== 1) {
    throw new BackupError(`unsupported backup format ${manifest.format} ${manifest.version}`);
  }
  return manifest;
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

export interface RestoreResult {
  file: string;
  method: 'pg_dump' | 'builtin';
  rows: number;
  files: number;
  /** Migrations of this release applied after the restore (the backup was older). */
  migrated: string[];
  note?: string;
}

export async function restore(config: Config, file: string): Promise<RestoreResult> {
  const source = path.resolve(file);
  await stat(source).catch(() => {
    throw new BackupError(`${source}: no such file`);
  });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ons-restore-'));
  try {
    await run('tar', ['-xzf', source, '-C', dir]).catch(() => {
      throw new BackupError(`${source} is not a backup archive (tar -xzf could not read it)`);
    });
    const manifest = await readManifest(dir);
    const known = new Set(await migrationVersions());
    const unknown = manifest.migrations.filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new BackupError(
        `the backup is from a newer release (migrations ${unknown.join(', ')} are unknown ` +
          'here): restore it with that release or a later one',
      );
    }
    const migrated = await withRawDatabaseUrl(config, async (url) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await assertEmpty(client);
        if (manifest.database.method === 'pg_dump') {
          await pgRestore(config, url, manifest.database.pg_dump_major, dir);
        } else {
          // The schema the backup was taken at, then its rows, then the rest of this release's.
          const pool = new pg.Pool({ connectionString: url, max: 1 });
          try {
            await migrate(pool, { only: new Set(manifest.migrations) });
          } finally {
            await pool.end();
          }
          await client.query('BEGIN');
          try {
            await loadTables(client, path.join(dir, 'database'), manifest.database);
            await client.query('COMMIT');
          } catch (err) {
            await client.query('ROLLBACK');
            throw err;
          }
        }
        const counts = await tableCounts(client);
        for (const [table, n] of Object.entries(manifest.row_counts)) {
          if (counts[table] !== n) {
            throw new BackupError(
              `restored ${table} holds ${counts[table] ?? 'no table'} rows, the backup ${n}`,
            );
          }
        }
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        try {
          return (await migrate(pool)).applied;
        } finally {
          await pool.end();
        }
      } finally {
        await client.end();
      }
    });
    let files = 0;
    if (manifest.files.store === 'disk') {
      files = (await copyFiles(path.join(dir, 'files'), config.storage.dir)).count;
    }
    return {
      file: source,
      method: manifest.database.method,
      rows: Object.values(manifest.row_counts).reduce((a, b) => a + b, 0),
      files,
      migrated,
      ...(manifest.files.store === 's3' ? { note: manifest.files.note } : {}),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function pgRestore(config: Config, url: string, dumpMajor: number, dir: string) {
  const { tool, seen } = await findTool('pg_restore', dumpMajor, config.pgBinDir);
  if (!tool) {
    const list = seen.map((t) => `${t.path} (${t.major})`).join(', ') || 'none';
    throw new BackupError(
      `the backup was written by pg_dump ${dumpMajor}; no pg_restore of that version or newer ` +
        `was found (found: ${list}). Install PostgreSQL ${dumpMajor}'s client and set PG_BIN_DIR`,
    );
  }
  try {
    await run(
      tool.path,
      [
        '--no-owner',
        '--no-privileges',
        '--exit-on-error',
        '--single-transaction',
        `--dbname=${await connectionFor(url, dir)}`,
        path.join(dir, 'database.pgdump'),
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new BackupError(`pg_restore failed: ${stderr || String(err)}`);
  }
}
