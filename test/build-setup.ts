import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The newest modification time under these paths (files and folders, recursively). */
function newestMs(paths: string[]): number {
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
 * The tests that start the service as a process of its own run the built files
 * (dist/main.js, as `npm start` does), so the build is made here, once per test run, when it
 * is missing or older than its sources: a test never runs yesterday's build.
 */
export default function setup() {
  const built = path.join(ROOT, 'dist', 'main.js');
  const sources = ['src', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build-service.ts'].map(
    (p) => path.join(ROOT, p),
  );
  if (existsSync(built) && statSync(built).mtimeMs >= newestMs(sources)) return;
  execFileSync('npm', ['run', 'build:service', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
