import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CONSOLE_DIST = path.join(ROOT, 'console', 'dist');
export const CHROMIUM = '/usr/bin/chromium';

/** The newest modification time under these paths (files and folders, recursively). */
export function newestMs(paths: string[]): number {
  let newest = 0;
  const walk = (p: string) => {
    if (!existsSync(p)) return;
    const st = statSync(p);
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(path.join(p, e));
  };
  paths.forEach(walk);
  return newest;
}

/**
 * Builds the console once per test run, and only when the browser tests can run (Debian's
 * Chromium is there) and the build is missing or older than its sources.
 */
export default function setup() {
  if (!existsSync(CHROMIUM)) return;
  const built = path.join(CONSOLE_DIST, 'index.html');
  const sources = ['console/src', 'console/index.html', 'console/vite.config.ts', 'sdk/src'].map(
    (p) => path.join(ROOT, p),
  );
  if (existsSync(built) && statSync(built).mtimeMs >= newestMs(sources)) return;
  execFileSync('npm', ['run', 'build', '--silent', '-w', 'console'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
