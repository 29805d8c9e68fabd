#!/usr/bin/env node
import { SingleBar, Presets } from 'cli-progress';
import { Command } from 'commander';
import { readFile, writeFile } from 'node:fs/promises';
import { runMonitor } from '../log/monitor.js';
import { parseVerifierKey } from '../log/note.js';
import {
  cosignatureVerifierKey,
  generateSigner,
  parseSignerKey,
  signerKeyText,
} from '../log/signer.js';
import { Witness } from '../log/witness.js';
import { directorySource, recordingSource } from '../verify/files.js';
import { verifyNetwork, type VerifyOptions, type VerifyReport } from '../verify/run.js';
import { httpSource, type Source } from '../verify/source.js';

/**
 * `ons-verify check <url-or-dir>`: re-checks the service's public history and prints one
 * line per item and a summary; exit status 1 when anything failed (2 when it could not run).
 * `ons-verify download <url> <dir>`: saves what `check` reads, to check it later offline.
 * `ons-verify witness …`: a tlog-witness for the service's log (and `witness-key` makes its key).
 * `ons-verify monitor …`: one monitoring pass over the log; exit status 1 names a fault.
 */

const sourceOf = (where: string): Source =>
  /^https?:\/\//.test(where) ? httpSource(where) : directorySource(where);

interface Out {
  log(line: string): void;
  isTTY: boolean;
}

/** The options `check` and `download` take (commander's names for them). */
interface CheckFlags {
  object?: string[];
  maxObjects: string;
  network?: string;
  batchKey?: string;
  logKey?: string;
  origin?: string[];
  rpId?: string[];
}

/** Adds the options of `check` and `download` to `command`. */
function checkOptions(command: Command): Command {
  return command
    .option('-o, --object <id...>', 'only these public objects')
    .option('--max-objects <n>', 'at most this many public objects', '1000')
    .option('--network <id>', 'the network id you expect (fails at once on another)')
    .option('--batch-key <hex>', 'the batch public key you expect, 0x + 64 hex')
    .option(
      '--log-key <vkey>',
      "the log's verifier key you expect: the latest checkpoint must verify with it and name a served batch",
    )
    .option(
      '--origin <origin...>',
      'passkey origins accepted besides those the network publishes (ones it accepted before)',
    )
    .option('--rp-id <id...>', 'passkey RP ids accepted besides the one the network publishes');
}

/** The verifier's options from the flags. */
function verifyOptionsOf(o: CheckFlags): VerifyOptions {
  return {
    ...(o.object && o.object.length > 0 ? { objects: o.object } : {}),
    maxObjects: positive('--max-objects', o.maxObjects),
    ...(o.network !== undefined ? { network: o.network } : {}),
    ...(o.batchKey !== undefined ? { batchPublicKey: o.batchKey } : {}),
    ...(o.logKey !== undefined ? { logKey: o.logKey } : {}),
    ...(o.origin ? { origins: o.origin } : {}),
    ...(o.rpId ? { rpIds: o.rpId } : {}),
  };
}

async function run(source: Source, options: VerifyOptions, out: Out) {
  const bar = out.isTTY
    ? new SingleBar(
        { format: 'verifying {bar} {value}/{total}', clearOnComplete: true },
        Presets.shades_classic,
      )
    : null;
  let started = false;
  const report: VerifyReport = await verifyNetwork(source, {
    ...options,
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
    const cut = v.skipped?.includes('maxObjects');
    const skipped = cut
      ? ' (not checked: past --max-objects)'
      : v.skipped
        ? ` (not checkable from public data: ${v.skipped.join(', ')})`
        : '';
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
  checkOptions(
    program
      .command('check')
      .description('verify from the service\'s public base URL or a directory saved by "download"')
      .argument('<source>', 'http(s) base URL, or a directory'),
  ).action(async (where: string, o: CheckFlags) => {
    const report = await run(sourceOf(where), verifyOptionsOf(o), out);
    status = report.ok ? 0 : 1;
  });
  checkOptions(
    program
      .command('download')
      .description('save what "check" reads into a directory, verifying as it goes')
      .argument('<url>', "the service's public base URL")
      .argument('<dir>', 'where to save the answers'),
  ).action(async (url: string, dir: string, o: CheckFlags) => {
    const options = verifyOptionsOf(o);
    const report = await run(await recordingSource(httpSource(url), dir), options, out);
    out.log(`saved into ${dir}`);
    status = report.ok ? 0 : 1;
  });
  program
    .command('witness-key')
    .description(
      "make a witness's signing key file (Go's PRIVATE+KEY note format) and print its verifier key",
    )
    .requiredOption('--name <name>', 'the key name, e.g. witness.example.org/acme')
    .requiredOption('--out <file>', 'where to write it (never overwritten)')
    .action(async (o: { name: string; out: string }) => {
      const s = generateSigner(o.name);
      await writeFile(o.out, `${signerKeyText(s)}\n`, { flag: 'wx', mode: 0o600 });
      out.log(cosignatureVerifierKey(s));
    });
  program
    .command('witness')
    .description('serve a C2SP tlog-witness (POST /add-checkpoint) that cosigns the log')
    .requiredOption('--key <file>', 'the signing key file ("witness-key" makes one)')
    .requiredOption('--state <file>', 'where it records the last checkpoint it cosigned')
    .requiredOption(
      '--log <vkey...>',
      "the log's verifier key (GET /public/network log.verifier_key)",
    )
    .option('--port <n>', 'TCP port', '7380')
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .action(
      async (o: { key: string; state: string; log: string[]; port: string; host: string }) => {
        const witness = await Witness.open({
          signer: parseSignerKey(await readFile(o.key, 'utf8')),
          logs: o.log.map((k) => parseVerifierKey(k)),
          statePath: o.state,
        });
        const { url, server } = await witness.listen(Number(o.port), o.host);
        out.log(`witness ${witness.verifierKey} listening on ${url}/add-checkpoint`);
        await new Promise<void>((resolve) => {
          const stop = () => server.close(() => resolve());
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      },
    );
  program
    .command('monitor')
    .description("one pass over the service's log: exit 1 naming a fault, 0 when all holds")
    .requiredOption('--url <url>', "the service's public base URL")
    .requiredOption('--state <file>', 'where it keeps the last checkpoint it checked')
    .option('--log-key <vkey>', "the log's verifier key (default: pinned at the first run)")
    .option('--witness-key <vkey...>', 'witness keys (default: pinned at the first run)')
    .option('--min-cosignatures <n>', 'cosignatures required from those witnesses', '0')
    .option(
      '--max-age <seconds>',
      'count only cosignatures at most this old (use with --min-cosignatures; e.g. 7200)',
    )
    .option('--webhook <url>', 'POST a signed report there on a fault')
    .option('--webhook-key <hex>', 'the 64-hex key that signs the report (as webhooks are signed)')
    .action(
      async (o: {
        url: string;
        state: string;
        logKey?: string;
        witnessKey?: string[];
        minCosignatures: string;
        maxAge?: string;
        webhook?: string;
        webhookKey?: string;
      }) => {
        if ((o.webhook === undefined) !== (o.webhookKey === undefined)) {
          throw new Error('--webhook and --webhook-key go together');
        }
        if (o.webhookKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(o.webhookKey)) {
          throw new Error('--webhook-key is 64 hex characters');
        }
        const r = await runMonitor({
          url: o.url,
          statePath: o.state,
          ...(o.logKey ? { logKey: o.logKey } : {}),
          ...(o.witnessKey ? { witnessKeys: o.witnessKey } : {}),
          minCosignatures: wholeNumber('--min-cosignatures', o.minCosignatures),
          ...(o.maxAge !== undefined ? { maxAgeSeconds: positive('--max-age', o.maxAge) } : {}),
          ...(o.webhook ? { webhookUrl: o.webhook, webhookKey: o.webhookKey! } : {}),
        });
        out.log(r.ok ? `ok    ${r.message}` : `FAULT ${r.fault}: ${r.message}`);
        status = r.ok ? 0 : 1;
      },
    );
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

/** A flag's value as a whole number ≥ 0, or a clear error (never NaN, which compares false). */
function wholeNumber(flag: string, text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new Error(`${flag} is a whole number ≥ 0, not "${text}"`);
  return Number(text);
}

/** A flag's value as a whole number > 0, or a clear error. */
function positive(flag: string, text: string): number {
  const n = wholeNumber(flag, text);
  if (n === 0) throw new Error(`${flag} is a whole number > 0, not "${text}"`);
  return n;
}
