/**
 * `npm run build:service`: compiles src/ to JavaScript in dist/ (tsconfig.build.json; the
 * tree mirrors src/, with source maps so `node --enable-source-maps` reports .ts lines), and
 * copies beside it the files the service reads at run time that are not TypeScript (the SQL
 * migrations, the signature-recovery thread). The built tree runs with plain `node`: nothing
 * in it needs a TypeScript loader (docs/self-hosting.md, "Building and running").
 *
 * It builds into a fresh directory and puts it in place at the end, so a failed build leaves
 * the previous dist/ as it was, and a process started from dist/ never sees half a tree.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
const NEXT = path.join(ROOT, 'dist.next');
const OLD = path.join(ROOT, 'dist.old');

/**
 * Source files never copied: tests, and the batch header thread's entry for running from
 * the sources (it registers tsx; a built header-pool.js starts header-thread.js directly).
 */
const NOT_COPIED = [/\.test\.ts$/, /^modules\/batches\/header-thread\.mjs$/];

/** Every file under src/ that is not TypeScript and is read at run time, relative to src/. */
function assets(dir = SRC): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const rel = path.relative(SRC, full).split(path.sep).join('/');
    if (entry.isDirectory()) out.push(...assets(full));
    else if (!rel.endsWith('.ts') && !NOT_COPIED.some((re) => re.test(rel))) out.push(rel);
  }
  return out;
}

rmSync(NEXT, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [
    path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    'tsconfig.build.json',
    '--outDir',
    NEXT,
  ],
  { cwd: ROOT, stdio: 'inherit' },
);
const copied = assets();
for (const rel of copied) cpSync(path.join(SRC, rel), path.join(NEXT, rel));
// Node reads dist/*.js as ES modules from the root package.json's "type"; this keeps it so
// should dist/ be copied somewhere without it (an image's last stage, say).
writeFileSync(path.join(NEXT, 'package.json'), '{ "type": "module" }\n');

rmSync(OLD, { recursive: true, force: true });
if (existsSync(DIST)) renameSync(DIST, OLD);
renameSync(NEXT, DIST);
rmSync(OLD, { recursive: true, force: true });
console.log(`built the service into dist/ (${copied.length} files copied beside the JavaScript)`);
