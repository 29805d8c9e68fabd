import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../config.js';
import {
  BackupError,
  dumpDatabase,
  restoreDatabase,
  type BackupMethod,
  type DatabaseDump,
} from '../db/backup-database.js';
import { migrationVersions } from '../db/migrate.js';
import { createDatabase } from '../db/pool.js';
import { SealedSecretError } from '../lib/sealed-secret.js';
import { checkStoredSecrets } from '../stored-secrets.js';
import { withRawDatabaseUrl } from './raw-database.js';

export { BackupError, type BackupMethod };

/**
 * `npm run ons -- backup FILE` and `restore FILE` (docs/self-hosting.md, "Backup and
 * restore"). One archive (tar + gzip, mode 0600: it holds every secret the database holds)
 * with `manifest.json`, the database (pg_dump's custom format when a pg_dump able to read
 * the server is found, else the built-in dump of src/db/logical-dump.ts) and the stored files
 * (DATA_DIR/files or STORAGE_DIR; an S3 store's files are only noted). The database is read
 * in one snapshot, whose row counts the manifest keeps and a restore checks; the files are
 * copied after it, so every file a row names is there (files are named by their content and
 * never deleted). Stored secrets sealed under SECRETS_KEY travel as they are: a restore checks
 * that the keys it is given open them (docs/self-hosting.md, "Backup and restore").
 */
const run = promisify(execFile);

type Manifest = {
  format: 'ons-backup';
  version: 1;
  created_at: string;
  files: { store: 'disk'; count: number; bytes: number } | { store: 's3'; note: string };
} & DatabaseDump;

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
    const dumped = await withRawDatabaseUrl(config, (url) =>
      dumpDatabase(url, staging, method, config.pgBinDir),
    );
    const manifest: Manifest = {
      format: 'ons-backup',
      version: 1,
      created_at: new Date().toISOString(),
      ...dumped,
      files: config.storage.s3
        ? { store: 's3', note: s3Note(config) }
        : { store: 'disk', count: 0, bytes: 0 },
    };
    if (manifest.files.store === 'disk') {
      const copied = await copyFiles(config.storage.dir, path.join(staging, 'files'));
      manifest.files = { store: 'disk', ...copied };
    }
    await writeFile(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const partial = `${target}.partial`;
    // Made 0600 before tar writes into it (tar keeps an existing file's mode): no one else
    // can open it while the secrets are being written.
    await rm(partial, { force: true });
    await writeFile(partial, '', { mode: 0o600, flag: 'wx' });
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
    const { migrated, unopened } = await withRawDatabaseUrl(config, async (url) => ({
      migrated: await restoreDatabase(url, dir, manifest, config.pgBinDir),
      unopened: await secretsUnopened(url, config),
    }));
    let files = 0;
    if (manifest.files.store === 'disk') {
      files = (await copyFiles(path.join(dir, 'files'), config.storage.dir)).count;
    }
    if (unopened !== null) {
      throw new BackupError(
        `${source} was restored, but the service will not start on it until SECRETS_KEY ` +
          `(or SECRETS_KEY_PREVIOUS) holds the key its secrets are sealed under: ${unopened}`,
      );
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

/**
 * Why the restored database's stored secrets do not open with SECRETS_KEY and
 * SECRETS_KEY_PREVIOUS as this command was given them (the first start would stop on it);
 * null when they do. Nothing is written.
 */
async function secretsUnopened(url: string, config: Config): Promise<string | null> {
  const database = createDatabase(url, 1);
  try {
    await checkStoredSecrets(database.db, config);
    return null;
  } catch (err) {
    if (err instanceof SealedSecretError) return err.message;
    throw err;
  } finally {
    await database.close();
  }
}
