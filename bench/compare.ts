/**
 * Compares the event bus of another git ref with this checkout, in one sitting.
 *
 *   npm run bench:compare -- <git-ref> [phases]          (phases default: a)
 *
 * Side A is `<git-ref>`, checked out into a temporary worktree with its own `npm ci`; side B is
 * this checkout as it is (uncommitted changes included). Each side runs its own
 * `bench/ebus.ts` as a separate process, alternating ABBA BAAB… for BENCH_ROUNDS rounds (at
 * least 6; a round is one run of each side), each run starting from a PostgreSQL CHECKPOINT so
 * no run pays for the dirty pages of the one before. It then prints each side's actions/s,
 * p50/p99 and CPU per action (service, PostgreSQL) per phase, and B ÷ A with the standard
 * error of the rounds' own ratios. docs/performance.md ("Comparing two versions") explains
 * how to read it.
 *
 * Knobs: BENCH_ROUNDS (default 6), BENCH_PHASE_SECONDS (passed on), BENCH_DATABASE_URL (the
 * server both sides use; default the machine's PostgreSQL), BENCH_A_ENV / BENCH_B_ENV (JSON
 * objects of settings for one side only, e.g. to compare a setting against itself with
 * `<git-ref>` = HEAD), BENCH_COMPARE_DIR (where worktrees are kept; default the system's
 * temporary directory; a worktree already installed for the same commit is reused).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseReport, type PhaseFigures, type RunFigures } from './ebus-report.js';
import { mean, spread, standardError } from './stats.js';

const ROUNDS = Math.max(6, Number(process.env.BENCH_ROUNDS ?? 6));
const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const READY_MARK = '.bench-compare-ready';

function git(args: string[], cwd = process.cwd()): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/** A worktree of `sha` with its dependencies installed, made once and reused. */
function prepareWorktree(sha: string): string {
  const base = process.env.BENCH_COMPARE_DIR ?? tmpdir();
  const dir = path.join(base, `ons-compare-${sha.slice(0, 12)}`);
  if (existsSync(path.join(dir, READY_MARK))) {
    console.log(`side A: reusing ${dir}`);
    return dir;
  }
  if (existsSync(dir)) git(['worktree', 'remove', '--force', dir]);
  console.log(`side A: git worktree add ${dir} ${sha.slice(0, 12)}; npm ci (once)`);
  git(['worktree', 'add', '--detach', dir, sha]);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  writeFileSync(path.join(dir, READY_MARK), `${sha}\n`);
  return dir;
}

async function checkpoint(): Promise<void> {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  await c.query('CHECKPOINT');
  await c.end();
}

/** The process group of the run in progress, ended with this tool on Ctrl-C. */
let running: number | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (running) process.kill(-running, 'SIGTERM');
    process.exit(130);
  });
}

/** One run of a side's bench/ebus.ts; its whole report is kept in `logFile`. */
function runSide(
  label: string,
  cwd: string,
  phases: string,
  extraEnv: Record<string, string>,
  logFile: string,
) {
  return new Promise<RunFigures>((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'bench/ebus.ts'], {
      cwd,
      env: {
        ...process.env,
        ...extraEnv,
        BENCH_PHASES: phases,
        BENCH_DATABASE_URL: DATABASE_URL,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    running = child.pid ?? null;
    let text = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (text += d));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (text += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      running = null;
      writeFileSync(logFile, text);
      if (code !== 0) {
        return reject(new Error(`side ${label}'s bench/ebus.ts exited ${code} (see ${logFile})`));
      }
      const figures = parseReport(text);
      const line = [...phases]
        .map((p) => {
          const f = figures.get(p);
          return f ? `(${p}) ${f.perSecond.toLocaleString('en')}/s` : `(${p}) no figures`;
        })
        .join(', ');
      console.log(`  ${label}: ${line}`);
      resolve(figures);
    });
  });
}

const envOf = (name: string) => JSON.parse(process.env[name] ?? '{}') as Record<string, string>;

function describeSide(runs: PhaseFigures[]): string {
  const f = (pick: (p: PhaseFigures) => number, digits = 0) => {
    const xs = runs.map(pick).filter((x) => Number.isFinite(x));
    if (xs.length === 0) return '–';
    return `${mean(xs).toFixed(digits)} ± ${standardError(xs).toFixed(digits)}`;
  };
  return `${f((p) => p.perSecond)} actions/s, p50 ${f((p) => p.p50, 1)} ms, p99 ${f((p) => p.p99, 1)} ms, CPU per action service ${f((p) => p.serviceUs)} µs + postgres ${f((p) => p.postgresUs)} µs`;
}

function ratioLine(
  name: string,
  a: PhaseFigures[],
  b: PhaseFigures[],
  pick: (p: PhaseFigures) => number,
) {
  const ratios = a.map((ra, i) => pick(b[i]!) / pick(ra)).filter((r) => Number.isFinite(r));
  if (ratios.length === 0) return null;
  return `${name} ${mean(ratios).toFixed(3)} ${spread(ratios)}`;
}

async function main() {
  const ref = process.argv[2];
  const phases = process.argv[3] ?? 'a';
  if (!ref || !/^[a-e]+$/.test(phases)) {
    console.error('usage: npm run bench:compare -- <git-ref> [phases, e.g. a or abd]');
    process.exit(2);
  }
  const sha = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const here = process.cwd();
  const head = git(['rev-parse', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  const sideA = prepareWorktree(sha);
  console.log(
    `A = ${ref} (${sha.slice(0, 12)}), B = this checkout (${head.slice(0, 12)}${dirty ? ' + uncommitted changes' : ''}); phases ${phases}, ${ROUNDS} rounds, ABBA order, a CHECKPOINT before each run; both sides on Node ${process.versions.node} (the first node on PATH)`,
  );
  const logs = mkdtempSync(path.join(tmpdir(), 'ons-compare-logs-'));
  console.log(`each run's whole report: ${logs}/<round>-<side>.txt`);
  const runs: { A: RunFigures[]; B: RunFigures[] } = { A: [], B: [] };
  const started = Date.now();
  for (let round = 0; round < ROUNDS; round++) {
    console.log(`round ${round + 1} of ${ROUNDS}`);
    const order = round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const);
    for (const side of order) {
      await checkpoint();
      const cwd = side === 'A' ? sideA : here;
      const env = envOf(`BENCH_${side}_ENV`);
      // A run that fails to start (its random port taken, say) is run once more, never twice.
      const log = path.join(logs, `${round + 1}-${side}.txt`);
      const figures = await runSide(side, cwd, phases, env, log).catch((err: unknown) => {
        console.log(`  ${side}: ${String(err)}; running it once more`);
        return runSide(side, cwd, phases, env, log);
      });
      runs[side].push(figures);
    }
  }
  console.log(`\n${ROUNDS} rounds in ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  for (const phase of ['a', 'b', 'c', 'd', 'e']) {
    // Only rounds where both sides have figures for the phase are compared.
    const pa: PhaseFigures[] = [];
    const pb: PhaseFigures[] = [];
    runs.A.forEach((r, i) => {
      const fa = r.get(phase);
      const fb = runs.B[i]?.get(phase);
      if (fa && fb) {
        pa.push(fa);
        pb.push(fb);
      }
    });
    if (pa.length === 0) continue;
    const missing = ROUNDS - pa.length;
    const note = missing ? ` (${missing} round(s) without figures on a side left out)` : '';
    console.log(`(${phase}) A: ${describeSide(pa)}${note}`);
    console.log(`    B: ${describeSide(pb)}`);
    const lines = [
      ratioLine('throughput B ÷ A', pa, pb, (p) => p.perSecond),
      ratioLine('service CPU per action B ÷ A', pa, pb, (p) => p.serviceUs),
      ratioLine('postgres CPU per action B ÷ A', pa, pb, (p) => p.postgresUs),
      phase === 'c' ? null : ratioLine('p99 B ÷ A', pa, pb, (p) => p.p99),
    ].filter((l): l is string => l !== null);
    for (const l of lines) console.log(`    ${l}`);
  }
  // One phase's throughput over another's, each run's own ratio: (a) over (c) is the share of
  // the group-commit ceiling phase (a) reaches; (e) over (b) what a hundred organizations keep
  // of ten organizations' throughput.
  const phaseRatio = (side: RunFigures[], top: string, bottom: string) => {
    const ratios = side
      .map((r) => (r.get(top)?.perSecond ?? NaN) / (r.get(bottom)?.perSecond ?? NaN))
      .filter((x) => Number.isFinite(x));
    return ratios.length
      ? `${mean(ratios).toFixed(2)} ± ${standardError(ratios).toFixed(2)}`
      : null;
  };
  for (const [top, bottom, what] of [
    ['a', 'c', 'group-commit ceiling'],
    ['e', 'b', 'ten organizations'],
  ] as const) {
    const ra = phaseRatio(runs.A, top, bottom);
    const rb = phaseRatio(runs.B, top, bottom);
    if (ra && rb) console.log(`(${top}) ÷ (${bottom}) ${what}: A ${ra}, B ${rb}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
