import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main as onsVerify } from '@ons/sdk/cli';
import { runMonitor } from '../src/log/monitor.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { headerHash, verifyWebhook } from '@ons/sdk';
import {
  cosignatureLine,
  cosignatureVerifierKey,
  generateSigner,
  noteSignatureLine,
  noteVerifierKey,
  type SignerKey,
} from '../src/log/signer.js';
import { FakeLog, type FakeBatch } from './log-fixture.js';

/**
 * Issue 33 item 6: `ons-verify monitor` against a loopback server that serves a log as the
 * contract says, then doctored answers: each fault is named and exits 1.
 */

interface Doctor {
  checkpoint?: () => string;
  consistency?: (from: number, to: number) => string[];
  entries?: (n: number, bytes: Uint8Array) => Uint8Array;
  batches?: (list: FakeBatch[]) => FakeBatch[];
  /** Answers the batch list's pages itself (`next` as asked, null on the first). */
  batchPage?: (next: string | null) => { batches: FakeBatch[]; has_more: boolean; next: string };
  verifierKey?: string;
  /** Answers 404 for the paths it matches (data the log withholds). */
  missing?: (path: string) => boolean;
}

let log: FakeLog;
let doctor: Doctor = {};
const witness = generateSigner('witness.monitor.example');
let cosigners: SignerKey[] = [];
let server: Server;
let webhook: Server;
let base: string;
let hookUrl: string;
let dir: string;
const alerts: { headers: Record<string, unknown>; body: string }[] = [];

function serve(req: { url?: string }): { status: number; type: string; body: string | Buffer } {
  const u = new URL(req.url ?? '/', 'http://x');
  if (doctor.missing?.(u.pathname)) return { status: 404, type: 'text/plain', body: 'no' };
  const json = (v: unknown) => ({ status: 200, type: 'application/json', body: JSON.stringify(v) });
  if (u.pathname === '/public/network') {
    return json({
      network: log.network,
      log: {
        origin: log.origin,
        verifier_key: doctor.verifierKey ?? log.vkey,
        witnesses: [{ name: witness.name, verifier_key: cosignatureVerifierKey(witness) }],
      },
    });
  }
  if (u.pathname === '/log/checkpoint') {
    const text = doctor.checkpoint?.() ?? log.checkpoint(log.size, cosigners);
    return { status: 200, type: 'text/plain; charset=utf-8', body: text };
  }
  if (u.pathname === '/log/proof/consistency') {
    const from = Number(u.searchParams.get('from'));
    const to = Number(u.searchParams.get('to'));
    const proof = doctor.consistency?.(from, to) ?? log.consistency(from, to);
    return json({ from, to, proof });
  }
  const tile = /^\/log\/tile\/entries\/((?:x\d{3}\/)*\d{3})(?:\.p\/(\d+))?$/.exec(u.pathname);
  if (tile) {
    const n = Number(tile[1]!.replace(/x|\//g, ''));
    const width = tile[2] === undefined ? 256 : Number(tile[2]);
    if (log.size < n * 256 + width) return { status: 404, type: 'text/plain', body: 'no' };
    const bytes = log.entryTile(n, n * 256 + width);
    return {
      status: 200,
      type: 'application/octet-stream',
      body: Buffer.from(doctor.entries?.(n, bytes) ?? bytes),
    };
  }
  if (u.pathname === '/batches' && doctor.batchPage) {
    return json(doctor.batchPage(u.searchParams.get('next')));
  }
  if (u.pathname === '/batches') {
    const all = (doctor.batches?.(log.batches) ?? log.batches).slice().reverse();
    const at = Number(u.searchParams.get('next') ?? 0);
    const page = all.slice(at, at + 2); // small pages, so the monitor pages
    return json({ batches: page, has_more: at + 2 < all.length, next: String(at + 2) });
  }
  return { status: 404, type: 'text/plain', body: 'not found' };
}

const listen = async (s: Server): Promise<string> => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ons-monitor-'));
  server = createServer((req, res) => {
    const r = serve(req);
    res.writeHead(r.status, { 'content-type': r.type });
    res.end(r.body);
  });
  base = await listen(server);
  webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      alerts.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  hookUrl = await listen(webhook);
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await new Promise((r) => webhook?.close(r));
  await rm(dir, { recursive: true, force: true });
});

let stateFile: string;
let n = 0;
beforeEach(() => {
  log = new FakeLog('log.monitor.example');
  log.addBatch(3);
  log.addBatch(200);
  log.addBatch(60);
  doctor = {};
  cosigners = [witness];
  stateFile = join(dir, `state-${++n}.json`);
});

async function monitor(...extra: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await onsVerify(['monitor', '--url', base, '--state', stateFile, ...extra], {
    log: (l) => lines.push(l),
    isTTY: false,
  });
  return { code, out: lines.join('\n') };
}

/** A log with the same origin and key but other entries (what a split view would serve). */
function forkOf(size: number): FakeLog {
  const fork = new FakeLog(log.origin, 'fork');
  Object.assign(fork, { signer: log.signer });
  fork.addBatch(size);
  return fork;
}

describe('ons-verify monitor', () => {
  it('checks the whole log on its first pass, then only what is new', async () => {
    const first = await monitor('--min-cosignatures', '1');
    expect(first).toEqual({
      code: 0,
      out: `ok    size 263 (was 0): 263 new entries and 3 batches checked; cosigned by ${witness.name}`,
    });
    const state = JSON.parse(await readFile(stateFile, 'utf8')) as {
      size: number;
      log_key: string;
    };
    expect(state).toMatchObject({ size: 263, log_key: log.vkey });
    log.addBatch(5);
    log.addBatch(300);
    expect((await monitor('--min-cosignatures', '1')).out).toBe(
      `ok    size 568 (was 263): 305 new entries and 2 batches checked; cosigned by ${witness.name}`,
    );
    expect((await monitor()).out).toMatch(/^ok {4}size 568 \(was 568\): 0 new entries/);
  });

  it('refuses a --min-cosignatures that is not a whole number (never taken as none)', async () => {
    for (const bad of ['2x', '-1', '', '1.5']) {
      const r = await monitor('--min-cosignatures', bad);
      expect(r.code, bad).toBe(2);
      expect(r.out, bad).toContain('--min-cosignatures is a whole number');
    }
  });

  it('names a rollback', async () => {
    await monitor();
    const before = await readFile(stateFile, 'utf8');
    doctor.checkpoint = () => log.checkpoint(203);
    expect(await monitor()).toEqual({
      code: 1,
      out: 'FAULT rollback: the log went back from size 263 to 203',
    });
    // The state keeps the last good checkpoint, so the fault is reported again next time.
    expect(await readFile(stateFile, 'utf8')).toBe(before);
  });

  it('names a fork: two checkpoints of one size with different roots (a split view)', async () => {
    await monitor();
    const fork = forkOf(263);
    doctor.checkpoint = () => fork.checkpoint();
    expect(await monitor()).toEqual({
      code: 1,
      out: 'FAULT fork: two checkpoints of size 263 with different roots (a split view)',
    });
  });

  it('names a fork: a checkpoint of the size it saw naming another batch header, and keeps its state', async () => {
    await monitor();
    const before = await readFile(stateFile, 'utf8');
    // The same size and root, signed by the log, but its ons-batch line names another
    // header for batch 3: one of the two signed checkpoints of size 263 lies.
    const body = log
      .body()
      .replace(/^ons-batch 3 0x[0-9a-f]{64}$/m, `ons-batch 3 0x${'ab'.repeat(32)}`);
    expect(body).not.toBe(log.body());
    doctor.checkpoint = () => log.checkpoint(log.size, [witness], body);
    expect(await monitor()).toEqual({
      code: 1,
      out:
        'FAULT fork: two checkpoints of size 263 with the same root but different extension ' +
        'lines (a rewritten ons-batch line: the log signed two headers for one size)',
    });
    expect(await readFile(stateFile, 'utf8')).toBe(before);
    // The honest checkpoint again (its cosignatures may change) still passes.
    doctor = {};
    expect((await monitor()).code).toBe(0);
  });

  it('names a fork: a larger tree that does not extend the one it saw', async () => {
    await monitor();
    const fork = forkOf(300);
    doctor.checkpoint = () => fork.checkpoint();
    doctor.consistency = (from, to) => fork.consistency(from, to);
    const r = await monitor();
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      'FAULT fork: size 300 is not consistent with the checkpoint of size 263 seen before (a fork or rewritten history)',
    );
  });

  it('names a bad signature, another key, and a changed log key', async () => {
    doctor.checkpoint = () => log.checkpoint().replace(/\n263\n/, '\n262\n');
    expect((await monitor()).out).toBe("FAULT signature: the log's signature does not verify");
    const impostor = generateSigner(log.origin);
    const other = new FakeLog(log.origin);
    Object.assign(other, { signer: impostor });
    other.addBatch(4);
    doctor.checkpoint = () => other.checkpoint();
    expect((await monitor()).out).toBe("FAULT signature: no signature by the log's key");
    doctor = {};
    expect((await monitor()).code).toBe(0);
    doctor.verifierKey = noteVerifierKey(impostor);
    expect((await monitor()).out).toMatch(/^FAULT signature: the log's key changed from /);
  });

  it('names a bad cosignature and a missing quorum', async () => {
    const forged = generateSigner(witness.name);
    cosigners = [forged];
    // A line under the witness's name but another key: not the witness's (no valid one).
    expect((await monitor('--min-cosignatures', '1')).out).toBe(
      'FAULT cosignature: cosignatures: 0 valid, at least 1 required',
    );
    cosigners = [witness];
    doctor.checkpoint = () => {
      const text = log.checkpoint(log.size, [witness]);
      const lines = text.split('\n');
      const last = lines[lines.length - 2]!;
      const raw = Buffer.from(last.split(' ')[2]!, 'base64');
      raw[20]! ^= 1;
      lines[lines.length - 2] = `— ${witness.name} ${raw.toString('base64')}`;
      return lines.join('\n');
    };
    expect((await monitor()).out).toBe(
      `FAULT cosignature: ${witness.name}'s cosignature does not verify`,
    );
  });

  it('names a stale log: too few cosignatures within --max-age (a frozen log or an old view)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const at = (t: number) => () => {
      const body = log.body(log.size);
      return `${body}\n${noteSignatureLine(log.signer, body)}\n${cosignatureLine(witness, body, t)}\n`;
    };
    doctor.checkpoint = at(now - 7200);
    expect(await monitor('--min-cosignatures', '1', '--max-age', '3600')).toEqual({
      code: 1,
      out:
        'FAULT stale: 0 of the cosignatures are at most 3600 s old, at least 1 required ' +
        `(the newest is ${Math.floor(Date.now() / 1000) - (now - 7200)} s old)`,
    });
    // Without --max-age the same checkpoint passes; a fresh cosignature passes with it.
    expect((await monitor('--min-cosignatures', '1')).code).toBe(0);
    doctor.checkpoint = at(now - 60);
    expect((await monitor('--min-cosignatures', '1', '--max-age', '3600')).code).toBe(0);
    for (const bad of ['0', '-5', '1.5', 'x']) {
      const r = await monitor('--max-age', bad);
      expect(r.code, bad).toBe(2);
      expect(r.out, bad).toMatch(/--max-age is a whole number/);
    }
  });

  it('names a batch whose actions_hash is not the root of its entries, or that the checkpoint does not name', async () => {
    // The log signs other entries than batch 2 committed to (its header, chain and the
    // checkpoint's ons-batch line all hold): only recomputing actions_hash shows it.
    log.privateLeaves.set(10, `0x${'ee'.repeat(32)}`);
    expect((await monitor()).out).toBe(
      'FAULT batch: batch 2: actions_hash is not the root of its entries 3…202',
    );
    log.privateLeaves.clear();
    doctor.batches = (list) =>
      list.map((b) => {
        if (b.sequence !== 3) return b;
        const moved = { ...b, prev_hash: `0x${'22'.repeat(32)}` };
        return { ...moved, hash: headerHash(moved) };
      });
    expect((await monitor()).out).toBe(
      'FAULT batch: batch 3: prev_hash does not chain to the batch before',
    );
    // The first batch must chain to the genesis hash, on the first pass too.
    doctor.batches = (list) =>
      list.map((b) => {
        if (b.sequence !== 1) return b;
        const moved = { ...b, prev_hash: `0x${'33'.repeat(32)}` };
        return { ...moved, hash: headerHash(moved) };
      });
    expect((await monitor()).out).toBe(
      'FAULT batch: batch 1: prev_hash does not chain to the batch before',
    );
    doctor.batches = (list) =>
      list.map((b) => (b.sequence === 3 ? { ...b, hash: `0x${'11'.repeat(32)}` } : b));
    expect((await monitor()).out).toBe("FAULT batch: batch 3: hash is not its header's");
    doctor.batches = (list) => list.slice(0, 2);
    expect((await monitor()).out).toBe(
      'FAULT batch: batch 3, named by the checkpoint, is not listed',
    );
  });

  it('names a first pass whose first batch is not batch 1 (a made-up start with any prev_hash)', async () => {
    // The operator lists one "batch 2" covering every entry, chained to nothing, and signs a
    // checkpoint naming it: every other check holds.
    log = new FakeLog('log.monitor.example');
    const real = log.addBatch(20);
    const made = { ...real, sequence: 2, prev_hash: `0x${'77'.repeat(32)}` };
    const forged = { ...made, hash: headerHash(made) };
    const body = log.body().replace(/^ons-batch .*$/m, `ons-batch 2 ${forged.hash}`);
    doctor.checkpoint = () => log.checkpoint(log.size, [witness], body);
    doctor.batches = () => [forged];
    expect(await monitor()).toEqual({
      code: 1,
      out: "FAULT batch: batch 2 is listed as the log's first batch, not batch 1",
    });
    // Batch 1 chained to anything but the genesis hash is refused as before.
    const one = { ...real, prev_hash: `0x${'77'.repeat(32)}` };
    const rechained = { ...one, hash: headerHash(one) };
    doctor.checkpoint = () =>
      log.checkpoint(
        log.size,
        [witness],
        log.body().replace(/^ons-batch .*$/m, `ons-batch 1 ${rechained.hash}`),
      );
    doctor.batches = () => [rechained];
    expect((await monitor()).out).toBe(
      'FAULT batch: batch 1: prev_hash does not chain to the batch before',
    );
    doctor = {};
    expect((await monitor()).code).toBe(0);
  });

  describe('names a batch list whose numbers do not go up by one, however its prev_hash links hold', () => {
    // The fake serves the list newest first in pages of two: of five batches, 5 and 4 share
    // the first page, 3 and 2 the second, 1 is alone on the third.
    const rows: {
      what: string;
      /** The numbers the listed batches carry, oldest first (the log's are 1, 2, 3…). */
      numbers: number[];
      /** Batches sealed after a first, honest pass (0: the faulty list is the first pass). */
      later?: number;
      fault: string | null;
    }[] = [
      { what: 'consecutive (the control)', numbers: [1, 2, 3, 4, 5], fault: null },
      {
        what: 'a gap within a page (4, then 6)',
        numbers: [1, 2, 3, 4, 6],
        fault: 'batch 6 is listed after batch 4',
      },
      {
        what: 'a gap across a page boundary (3, then 5)',
        numbers: [1, 2, 3, 5, 6],
        fault: 'batch 5 is listed after batch 3',
      },
      {
        what: 'a repeat within a page (2, then 2)',
        numbers: [1, 2, 2, 3, 4],
        fault: 'batch 2 is listed after batch 2',
      },
      {
        what: 'a repeat across a page boundary (3, then 3)',
        numbers: [1, 2, 3, 3, 4],
        fault: 'batch 3 is listed after batch 3',
      },
      {
        what: 'a decrease within a page (2, then 1)',
        numbers: [1, 2, 1, 2, 3],
        fault: 'batch 1 is listed after batch 2',
      },
      {
        what: 'a decrease across a page boundary (3, then 2)',
        numbers: [1, 2, 3, 2, 3],
        fault: 'batch 2 is listed after batch 3',
      },
      {
        what: 'consecutive on the next pass (the control)',
        numbers: [1, 2, 3, 4, 5, 6, 7],
        later: 2,
        fault: null,
      },
      {
        what: 'a gap right after the batch the last pass saw (5, then 7)',
        numbers: [1, 2, 3, 4, 5, 7, 8],
        later: 2,
        fault: 'batch 7 is listed after batch 5',
      },
    ];
    /**
     * The log's batches carrying `numbers`, each header chained to the one listed before it
     * and hashed again, and the checkpoint re-signed naming the last: all but the numbers
     * holds.
     */
    function renumbered(numbers: number[]): { batches: FakeBatch[]; checkpoint: string } {
      const batches: FakeBatch[] = [];
      for (const [i, b] of log.batches.entries()) {
        const header = {
          ...b,
          sequence: numbers[i]!,
          prev_hash: batches[i - 1]?.hash ?? b.prev_hash,
        };
        batches.push({ ...header, hash: headerHash(header) });
      }
      const last = batches[batches.length - 1]!;
      const body = log.body().replace(/^ons-batch .*$/m, `ons-batch ${last.sequence} ${last.hash}`);
      return { batches, checkpoint: log.checkpoint(log.size, [witness], body) };
    }
    for (const row of rows) {
      it(row.what, async () => {
        log.addBatch(5);
        log.addBatch(300);
        if (row.later) {
          expect((await monitor()).out).toMatch(/5 batches checked/);
          for (let i = 0; i < row.later; i++) log.addBatch(7);
        }
        expect(row.numbers).toHaveLength(log.batches.length);
        const served = renumbered(row.numbers);
        doctor.batches = () => served.batches;
        doctor.checkpoint = () => served.checkpoint;
        const before = await readFile(stateFile, 'utf8').catch(() => null);
        const r = await monitor();
        if (row.fault === null) {
          expect(r.code).toBe(0);
          expect(r.out).toMatch(new RegExp(` and ${row.later ?? 5} batches checked`));
          return;
        }
        expect(r).toEqual({
          code: 1,
          out: `FAULT batch: ${row.fault}: batch numbers go up by one`,
        });
        // Nothing of the faulty list is kept: the next pass checks it again.
        expect(await readFile(stateFile, 'utf8').catch(() => null)).toBe(before);
      });
    }
  });

  it('names entry tiles that do not hash to the signed root', async () => {
    doctor.entries = (tile, bytes) => {
      if (tile !== 0) return bytes;
      const copy = Uint8Array.from(bytes);
      copy[2 + 34 * 5]! ^= 1;
      return copy;
    };
    expect((await monitor()).out).toBe(
      'FAULT entries: entries 0…262 do not hash to the signed root',
    );
  });

  it('posts a fault report signed like a webhook (--webhook-key), which verifyWebhook accepts', async () => {
    const key = 'ab'.repeat(32);
    await monitor();
    doctor.checkpoint = () => log.checkpoint(3);
    const r = await monitor('--webhook', `${hookUrl}/alerts`, '--webhook-key', key);
    expect(r.code).toBe(1);
    const a = alerts[alerts.length - 1]!;
    expect(await verifyWebhook(a.headers as Record<string, string>, a.body, key)).toMatchObject({
      ok: true,
    });
    expect(JSON.parse(a.body)).toMatchObject({ type: 'log.fault', fault: 'rollback' });
    expect(
      await verifyWebhook(a.headers as Record<string, string>, a.body, 'cd'.repeat(32)),
    ).toEqual({ ok: false, reason: 'signature' });
    expect((await monitor('--webhook-key', key)).code).toBe(2);
  });

  it('names data withheld behind a signed checkpoint, and alerts on it', async () => {
    const key = 'ab'.repeat(32);
    const cases: [string, (p: string) => boolean, RegExp][] = [
      ['entry tiles', (p) => p.startsWith('/log/tile/entries/'), /entry tile 0 is missing$/],
      ['the batches', (p) => p === '/batches', /GET \/batches.*HTTP 404$/],
    ];
    for (const [what, missing, words] of cases) {
      doctor = { missing };
      const before = alerts.length;
      const r = await monitor('--webhook', `${hookUrl}/alerts`, '--webhook-key', key);
      expect(r.code, what).toBe(1);
      expect(r.out, what).toMatch(/^FAULT withheld: size 263 is signed, but /);
      expect(r.out, what).toMatch(words);
      expect(alerts.length, what).toBe(before + 1);
      expect(JSON.parse(alerts[alerts.length - 1]!.body)).toMatchObject({ fault: 'withheld' });
    }
    // The consistency proof from the last size it saw, withheld.
    doctor = {};
    expect((await monitor()).code).toBe(0);
    log.addBatch(5);
    doctor = { missing: (p) => p === '/log/proof/consistency' };
    expect((await monitor()).out).toMatch(/^FAULT withheld: size 268 is signed, but /);
  });

  it('names a batch list that never ends as withheld, promptly (it paged forever)', async () => {
    let pages = 0;
    const cases: [string, Doctor['batchPage'], string][] = [
      [
        'empty pages that say there is more',
        (next) => ({ batches: [], has_more: true, next: String(Number(next ?? 0) + 1) }),
        'page 1 is empty but says there is more',
      ],
      [
        'a cursor given before',
        () => ({ batches: [log.batches[2]!], has_more: true, next: 'again' }),
        'page 2 gives a next cursor it gave before ("again")',
      ],
      [
        // Pages of one batch, each sealed after the checkpoint, under new cursors: the three
        // batches up to the checkpoint's fill three such pages, and one more is allowed.
        'pages past what its batches fill',
        (next) => ({
          batches: [{ ...log.batches[2]!, sequence: 1000 + Number(next ?? 0) }],
          has_more: true,
          next: String(Number(next ?? 0) + 1),
        }),
        'goes on past 4 pages of 1 for the 3 batches after batch 0',
      ],
    ];
    for (const [what, page, words] of cases) {
      pages = 0;
      doctor = {
        batchPage: (next) => {
          pages++;
          return page!(next);
        },
      };
      const started = Date.now();
      const r = await runMonitor({ url: base, statePath: stateFile });
      expect(r, what).toMatchObject({ ok: false, fault: 'withheld', size: 0 });
      expect(r.message, what).toBe(`size 263 is signed, but the batch list ${words}`);
      expect(pages, what).toBeLessThanOrEqual(4);
      expect(Date.now() - started, what).toBeLessThan(5_000);
    }
    // The state file was never written: the next pass starts over.
    await expect(readFile(stateFile, 'utf8')).rejects.toThrow('ENOENT');
    doctor = {};
    expect((await monitor()).code).toBe(0);
  });

  it('names a checkpoint naming a batch further on than its new entries allow, without paging towards it', async () => {
    // Each batch holds an action: batch 10^12 cannot be in a log of 263 entries. The server
    // lists batches down from it one a page, each page new: within the page bound, that
    // would be 10^12 pages.
    const made = { ...log.batches[2]!, sequence: 1e12 };
    const far = { ...made, hash: headerHash(made) };
    const body = log.body().replace(/^ons-batch .*$/m, `ons-batch ${far.sequence} ${far.hash}`);
    let pages = 0;
    doctor.checkpoint = () => log.checkpoint(log.size, [witness], body);
    doctor.batchPage = (next) => {
      pages++;
      const n = Number(next ?? 0);
      return { batches: [{ ...far, sequence: 1e12 - n }], has_more: true, next: String(n + 1) };
    };
    const started = Date.now();
    expect(await runMonitor({ url: base, statePath: stateFile })).toMatchObject({
      ok: false,
      fault: 'batch',
      message:
        'batch 1000000000000, named by the checkpoint, is 1000000000000 batches after ' +
        'batch 0, but only 263 entries were added',
    });
    expect(pages).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('exits 2 when it cannot run (the service is unreachable)', async () => {
    const lines: string[] = [];
    const code = await onsVerify(
      ['monitor', '--url', 'http://127.0.0.1:9', '--state', join(dir, 'none.json')],
      { log: (l) => lines.push(l), isTTY: false },
    );
    expect(code).toBe(2);
    expect(lines[0]).toMatch(/^error: /);
  });
});
