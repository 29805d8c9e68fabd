/**
 * `npm test`: the three test tiers (vitest.config.ts's projects; docs/testing.md), one
 * vitest run each, in order, then one line per tier with its test count and elapsed time.
 *
 *   npm test                          # unit, integration, browser
 *   npm test -- integration browser   # only these tiers
 *
 * Every tier runs even when an earlier one failed (the counts stay whole); the exit code is 1
 * when any failed. Each tier's counts come from vitest's JSON report, written to a temporary
 * directory beside the default reporter's output.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const TIERS = ['unit', 'integration', 'browser'] as const;
type Tier = (typeof TIERS)[number];

interface Report {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: FileResult[];
}

interface FileResult {
  name: string;
  message?: string;
  assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
}

interface Outcome {
  tier: Tier;
  code: number;
  seconds: number;
  report: Report | null;
}

function tiersOf(args: string[]): Tier[] {
  if (args.length === 0) return [...TIERS];
  for (const a of args) {
    if (!(TIERS as readonly string[]).includes(a)) {
      console.error(`unknown tier ${JSON.stringify(a)}: one of ${TIERS.join(', ')}`);
      process.exit(2);
    }
  }
  return TIERS.filter((t) => args.includes(t));
}

function runVitest(args: string[]): Promise<number> {
  const bin = createRequire(import.meta.url).resolve('vitest/vitest.mjs');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function runTier(tier: Tier, dir: string): Promise<Outcome> {
  const out = path.join(dir, `${tier}.json`);
  console.log(`\n== test tier: ${tier}`);
  const started = process.hrtime.bigint();
  const code = await runVitest([
    'run',
    '--project',
    tier,
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${out}`,
  ]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const report = await readFile(out, 'utf8').then(
    (text) => JSON.parse(text) as Report,
    () => null,
  );
  return { tier, code, seconds, report };
}

function line(o: Outcome): string {
  const r = o.report;
  const counts = r
    ? `${r.numTotalTests} tests in ${r.testResults.length} files: ${r.numPassedTests} passed, ` +
      `${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`
    : 'no report (vitest did not finish)';
  return `${o.tier.padEnd(11)} ${o.code === 0 ? 'ok    ' : 'FAILED'} ${o.seconds.toFixed(1).padStart(6)} s  ${counts}`;
}

/** The failed tests of a tier, a line each with the first line of the failure, so that the
 * end of a long log (all a CI page may show) names them. */
function failures(o: Outcome): string[] {
  const lines: string[] = [];
  for (const file of o.report?.testResults ?? []) {
    const rel = path.relative(process.cwd(), file.name);
    const failed = file.assertionResults.filter((a) => a.status === 'failed');
    for (const a of failed) {
      const first = (a.failureMessages?.[0] ?? '').split('\n')[0]?.slice(0, 300) ?? '';
      lines.push(`  ${o.tier}: ${rel} > ${a.fullName}\n      ${first}`);
    }
    if (failed.length === 0 && file.message) {
      lines.push(`  ${o.tier}: ${rel}\n      ${file.message.split('\n')[0]?.slice(0, 300) ?? ''}`);
    }
  }
  return lines;
}

async function main() {
  const tiers = tiersOf(process.argv.slice(2));
  const dir = await mkdtemp(path.join(tmpdir(), 'ons-test-report-'));
  const outcomes: Outcome[] = [];
  try {
    for (const tier of tiers) outcomes.push(await runTier(tier, dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const total = outcomes.reduce((n, o) => n + (o.report?.numTotalTests ?? 0), 0);
  const seconds = outcomes.reduce((n, o) => n + o.seconds, 0);
  console.log('\n== test tiers');
  for (const o of outcomes) console.log(line(o));
  console.log(
    `${'all'.padEnd(11)} ${' '.repeat(6)} ${seconds.toFixed(1).padStart(6)} s  ${total} tests`,
  );
  const failed = outcomes.flatMap(failures);
  if (failed.length > 0) console.log(`\n== failed\n${failed.join('\n')}`);
  process.exitCode = outcomes.every((o) => o.code === 0) ? 0 : 1;
}

await main();
