import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { builtEntry } from '../helpers/processes.js';
import { freshDatabaseUrl } from '../helpers/db.js';

/**
 * Issue 31 item 1: the service is built to JavaScript in dist/ (test/build-setup.ts makes it
 * before the tests, as `npm ci` does through `prepare`), and the built tree runs with plain
 * node: no TypeScript loader, the run-time files beside it, stack traces on .ts lines.
 */
const exec = promisify(execFile);
const DIST = path.resolve('dist');

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(full)));
    else out.push(full);
  }
  return out;
}

/** Runs `node <args>` (no loader) and answers its exit code and output. */
async function node(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await exec(process.execPath, args, {
      env: { ...process.env, ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the built service (dist/)', () => {
  it('mirrors src/: the entry points, every module, and the SQL migrations', async () => {
    const built = (await filesUnder(DIST)).map((f) => path.relative(DIST, f));
    for (const f of ['main.js', 'worker.js', 'cli/ons.js', 'main.js.map']) {
      expect(built).toContain(f);
    }
    const sources = (await filesUnder(path.resolve('src')))
      .map((f) => path.relative('src', f))
      .filter((f) => !f.endsWith('.test.ts'));
    for (const f of sources) {
      if (f.endsWith('.ts')) expect(built).toContain(f.replace(/\.ts$/, '.js'));
      else if (f !== 'modules/batches/header-thread.mjs') expect(built).toContain(f);
    }
    expect(sources.filter((f) => f.endsWith('.sql')).length).toBeGreaterThan(10);
  });

  it('imports no TypeScript loader and no .ts file', async () => {
    for (const f of await filesUnder(DIST)) {
      if (!/\.(m?js)$/.test(f)) continue;
      const text = await readFile(f, 'utf8');
      expect(text, f).not.toMatch(/(from|import\(|require\()\s*['"]tsx/);
      expect(text, f).not.toMatch(/(from|import\()\s*['"][^'"]+\.ts['"]/);
    }
  });

  it('maps stack traces to the .ts lines', async () => {
    // A refused setting fails at start: the error's stack names src/config.ts.
    const r = await node(builtEntry('main.js'), { WORKERS: '2', REDIS_URL: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('REDIS_URL');
    expect(r.stderr).toMatch(/at loadConfig \(.*src\/config\.ts:\d+:\d+\)/);
  });

  it('runs the operator command, and both worker threads, with plain node', async () => {
    const usage = await node(builtEntry('cli/ons.js'));
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: npm run ons');
    const outbox = await node(builtEntry('cli/ons.js').concat('outbox', '--to', 'a@b.test'), {
      DATABASE_URL: await freshDatabaseUrl(),
      LOG_LEVEL: 'error',
    });
    expect(outbox).toMatchObject({ code: 0, stdout: '' });
    // The batch header thread and the signature-recovery thread start from the built tree.
    const threads = `
      import { Worker } from 'node:worker_threads';
      const header = new Worker(${JSON.stringify(path.join(DIST, 'modules/batches/header-thread.js'))},
        { workerData: { databaseUrl: null, priority: 'normal' } });
      const started = await new Promise((ok, fail) => { header.once('message', ok); header.once('error', fail); });
      await header.terminate();
      const recover = new Worker(${JSON.stringify(path.join(DIST, 'lib/crypto/recover-worker.mjs'))});
      recover.postMessage([['hello', new Uint8Array(64), 0]]);
      const answer = await new Promise((ok, fail) => { recover.once('message', ok); recover.once('error', fail); });
      await recover.terminate();
      console.log(JSON.stringify({ started: 'started' in started, answer }));`;
    const script = path.join(await mkdtemp(path.join(tmpdir(), 'ons-build-')), 'threads.mjs');
    await writeFile(script, threads);
    const r = await node([script]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ started: true, answer: [null] });
  });
});
