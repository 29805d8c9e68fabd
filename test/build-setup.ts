import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMs } from './console/build-setup.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

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
