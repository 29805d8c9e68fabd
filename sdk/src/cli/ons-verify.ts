#!/usr/bin/env node
import { SingleBar, Presets } from 'cli-progress';
import { Command } from 'commander';
import { directorySource, recordingSource } from '../verify/files.js';
import { verifyNetwork, type VerifyReport } from '../verify/run.js';
import { httpSource, type Source } from '../verify/source.js';

/**
 * `ons-verify check <url-or-dir>`: re-checks the service's public history and prints one
 * line per item and a summary; exit status 1 when anything failed (2 when it could not run).
 * `ons-verify download <url> <dir>`: saves what `check` reads, to check it later offline.
 */

const sourceOf = (where: string): Source =>
  /^https?:\/\//.test(where) ? httpSource(where) : directorySource(where);

interface Out {
  log(line: string): void;
  isTTY: boolean;
}

async function run(source: Source, objects: string[] | undefined, max: number, out: Out) {
  const bar = out.isTTY
    ? new SingleBar(
        { format: 'verifying {bar} {value}/{total}', clearOnComplete: true },
        Presets.shades_classic,
      )
    : null;
  let started = false;
  const report: VerifyReport = await verifyNetwork(source, {
    ...(objects && objects.length > 0 ? { objects } : {}),
    maxObjects: max,
    onProgress: (done, total) => {
      if (!bar) return;
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(done);
    },
  });
  if (started) bar?.stop();
  for (const v of report.verdicts) {
    const skipped = v.skipped ? ` (not checkable from public data: ${v.skipped.join(', ')})` : '';
    out.log(v.ok ? `ok    ${v.item}${skipped}` : `FAIL  ${v.item}: ${v.failed} — ${v.reason}`);
  }
  const failed = report.verdicts.filter((v) => !v.ok).length;
  out.log(
    `${report.verdicts.length} checked, ${report.verdicts.length - failed} ok, ${failed} failed`,
  );
  return report;
}

/** The CLI, as a function (tests call it): resolves to the exit status. */
export async function main(
  argv: string[],
  out: Out = { log: (l) => console.log(l), isTTY: Boolean(process.stdout.isTTY) },
): Promise<number> {
  let status = 0;
  const program = new Command('ons-verify')
    .description("Re-check an Object Network Service's public history without trusting it")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => out.log(s.trimEnd()),
      writeErr: (s) => out.log(s.trimEnd()),
    });
  program
    .command('check')
    .description('verify from the service\'s public base URL or a directory saved by "download"')
    .argument('<source>', 'http(s) base URL, or a directory')
    .option('-o, --object <id...>', 'only these public objects')
    .option('--max-objects <n>', 'at most this many public objects', '1000')
    .action(async (where: string, o: { object?: string[]; maxObjects: string }) => {
      const report = await run(sourceOf(where), o.object, Number(o.maxObjects), out);
      status = report.ok ? 0 : 1;
    });
  program
    .command('download')
    .description('save what "check" reads into a directory, verifying as it goes')
    .argument('<url>', "the service's public base URL")
    .argument('<dir>', 'where to save the answers')
    .option('-o, --object <id...>', 'only these public objects')
    .option('--max-objects <n>', 'at most this many public objects', '1000')
    .action(async (url: string, dir: string, o: { object?: string[]; maxObjects: string }) => {
      const report = await run(
        await recordingSource(httpSource(url), dir),
        o.object,
        Number(o.maxObjects),
        out,
      );
      out.log(`saved into ${dir}`);
      status = report.ok ? 0 : 1;
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (e.code?.startsWith('commander.')) return e.exitCode ?? 2;
    out.log(`error: ${e.message ?? String(err)}`);
    return 2;
  }
  return status;
}

const invoked = process.argv[1] ?? '';
if (/ons-verify(\.[cm]?[jt]s)?$/.test(invoked)) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
