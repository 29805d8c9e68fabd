/**
 * What the embedded PostgreSQL leaves readable on disk (docs/self-hosting.md, "The embedded
 * database"): the data directory is its owner's alone (when the service runs as root, others
 * may only traverse it, for the `postgres` user), the temporary directory `initdb` read the
 * password from is gone, and the process's umask and TMPDIR are as they were.
 */
import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedServer } from '../../src/db/embedded.js';

let dir: string;
let embedded: EmbeddedServer;
/** The process's umask (reading it alone is deprecated: set it and put it back). */
function currentUmask(): number {
  const mask = process.umask(0o022);
  process.umask(mask);
  return mask;
}
const umaskBefore = currentUmask();
const tmpdirBefore = process.env.TMPDIR;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ons-embedded-files-'));
  // As a self-hoster's fresh DATA_DIR often is: readable by everyone.
  await chmod(dir, 0o755);
  embedded = await startEmbedded(dir);
}, 120_000);
afterAll(async () => {
  await embedded?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('the data directory is not readable by others, and initdb left nothing behind', async () => {
  const mode = (await stat(dir)).mode & 0o777;
  const root = process.getuid?.() === 0;
  // Root: o+x only, so the postgres user reaches its directory; otherwise nothing for others.
  expect(mode & 0o077).toBe(root ? 0o001 : 0);
  expect(await readdir(dir)).not.toContain('initdb-tmp');
  expect(currentUmask()).toBe(umaskBefore);
  expect(process.env.TMPDIR).toBe(tmpdirBefore);
  expect(embedded.pid()).not.toBeNull();
});
