import { execFile } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type PgTool = 'pg_dump' | 'pg_restore';

export interface FoundTool {
  path: string;
  /** PostgreSQL major version of the binary (15 for "pg_dump (PostgreSQL) 15.20"). */
  major: number;
}

/** The major version a `--version` line names, or null. */
export function majorOf(versionLine: string): number | null {
  const m = /\(PostgreSQL\)\s+(\d+)/.exec(versionLine);
  return m ? Number(m[1]) : null;
}

/**
 * Where a PostgreSQL client binary may be, in order: PG_BIN_DIR, the one PATH finds, then
 * Debian's and the PGDG packages' per-version directories (newest first). The embedded
 * PostgreSQL package ships only the server (initdb, pg_ctl, postgres), no pg_dump.
 */
async function candidates(tool: PgTool, binDir: string | null): Promise<string[]> {
  const files: string[] = [];
  if (binDir) files.push(path.join(binDir, tool));
  files.push(tool);
  for (const root of ['/usr/lib/postgresql', '/usr/pgsql']) {
    const versions = await readdir(root).catch(() => [] as string[]);
    versions
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .forEach((v) => files.push(path.join(root, v, 'bin', tool)));
  }
  return [...new Set(files)];
}

/** Every `tool` binary found, with its major version (those that do not answer are left out). */
export async function findTools(tool: PgTool, binDir: string | null): Promise<FoundTool[]> {
  const found: FoundTool[] = [];
  for (const file of await candidates(tool, binDir)) {
    try {
      const { stdout } = await run(file, ['--version'], { timeout: 10_000 });
      const major = majorOf(stdout);
      if (major !== null) found.push({ path: file, major });
    } catch {
      /* not there, or not runnable */
    }
  }
  return found;
}

/**
 * A `tool` able to work with a server (pg_dump) or an archive (pg_restore) of major version
 * `atLeast`: pg_dump refuses a server newer than itself, and pg_restore cannot read an archive
 * written by a newer pg_dump. The oldest such binary is taken (closest to the server).
 */
export async function findTool(
  tool: PgTool,
  atLeast: number,
  binDir: string | null,
): Promise<{ tool: FoundTool | null; seen: FoundTool[] }> {
  const seen = await findTools(tool, binDir);
  const fit = seen.filter((t) => t.major >= atLeast).sort((a, b) => a.major - b.major);
  return { tool: fit[0] ?? null, seen };
}

/**
 * A libpq connection string for `url` whose password is read from a password file written
 * here (mode 0600, in `dir`), so no password appears in a command line (`ps` shows those to
 * every user of the machine) and none has to go through the environment.
 */
export async function connectionFor(url: string, dir: string): Promise<string> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port || '5432';
  const user = decodeURIComponent(u.username);
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres';
  const quote = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const parts = [`host=${quote(host)}`, `port=${quote(port)}`, `dbname=${quote(database)}`];
  if (user) parts.push(`user=${quote(user)}`);
  const sslmode = u.searchParams.get('sslmode');
  if (sslmode) parts.push(`sslmode=${quote(sslmode)}`);
  if (u.password) {
    const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/:/g, '\\:');
    const file = path.join(dir, '.pgpass');
    const line = [host, port, database, user, decodeURIComponent(u.password)].map(esc).join(':');
    await writeFile(file, line + '\n', { mode: 0o600 });
    parts.push(`passfile=${quote(file)}`);
  }
  return parts.join(' ');
}
