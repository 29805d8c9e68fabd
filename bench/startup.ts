/**
 * Start-up time and memory of the service (issue 31 item 1): the process as `npm start` ran
 * it before the build (`node --import tsx src/main.ts`, TypeScript compiled at every start)
 * and as it runs now (`node --enable-source-maps dist/main.js`, run `npm run build:service`
 * first), same node flags otherwise.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/startup.ts
 *
 * Each run starts the service on a scratch database, migrated beforehand (so neither mode
 * pays for the migrations), and prints the time from spawning the process to the first 200
 * from /readyz (polled every 10 ms), the process's RSS then, and its RSS 3 s later (the
 * loops started, nothing requested). BENCH_RUNS (5) runs per mode, alternating which goes
 * first (ABBA…), after one discarded warm-up run of each (tsx fills its transform cache, the
 * OS its page cache). The machine's load average is printed before each run.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createDatabase } from '../src/db/pool.js';
import { migrate } from '../src/db/migrate.js';
import { scratchDatabase } from './scratch-database.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SETTLE_MS = 3_000;

const MODES = {
  tsx: ['--max-semi-space-size=32', '--import', 'tsx', 'src/main.ts'],
  built: ['--max-semi-space-size=32', '--enable-source-maps', 'dist/main.js'],
} as const;
type Mode = keyof typeof MODES;

interface Run {
  mode: Mode;
  readyMs: number;
  rssReadyMb: number;
  rssSettledMb: number;
  load: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

async function once(mode: Mode, databaseUrl: string): Promise<Run> {
  const port = await freePort();
  const load = os.loadavg()[0]!;
  const began = performance.now();
  const child = spawn(process.execPath, MODES[mode], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${mode}: the service exited early`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - began > 120_000) throw new Error(`${mode}: not ready in 2 minutes`);
      await sleep(10);
    }
    const readyMs = performance.now() - began;
    const rssReadyMb = await rssMb(child.pid!);
    await sleep(SETTLE_MS);
    const rssSettledMb = await rssMb(child.pid!);
    return { mode, readyMs, rssReadyMb, rssSettledMb, load };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main() {
  const scratch = await scratchDatabase();
  try {
    const database = createDatabase(scratch.url, 1);
    await migrate(database.pool);
    await database.close();
    console.log(`node ${process.version}, ${os.cpus().length} cores, ${RUNS} runs per mode`);
    await once('tsx', scratch.url);
    await once('built', scratch.url);
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      const order: Mode[] = i % 2 === 0 ? ['tsx', 'built'] : ['built', 'tsx'];
      for (const mode of order) {
        const r = await once(mode, scratch.url);
        runs.push(r);
        console.log(
          `${mode.padEnd(5)} ready ${r.readyMs.toFixed(0).padStart(5)} ms  ` +
            `RSS ${r.rssReadyMb.toFixed(1)} MB at ready, ${r.rssSettledMb.toFixed(1)} MB ${SETTLE_MS / 1000} s later` +
            `  (load ${r.load.toFixed(2)})`,
        );
      }
    }
    for (const mode of Object.keys(MODES) as Mode[]) {
      const of = runs.filter((r) => r.mode === mode);
      const ready = of.map((r) => r.readyMs);
      const settled = of.map((r) => r.rssSettledMb);
      console.log(
        `${mode}: ready median ${median(ready).toFixed(0)} ms (${Math.min(...ready).toFixed(0)}–${Math.max(...ready).toFixed(0)}), ` +
          `RSS at ready median ${median(of.map((r) => r.rssReadyMb)).toFixed(1)} MB, ` +
          `settled median ${median(settled).toFixed(1)} MB (${Math.min(...settled).toFixed(1)}–${Math.max(...settled).toFixed(1)})`,
      );
    }
  } finally {
    await scratch.drop();
  }
}

await main();
