import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main as onsVerify } from '@ons/sdk/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseVerifierKey, verifyCheckpoint } from '@ons/sdk';
import {
  generateSigner,
  noteSignatureLine,
  parseSignerKey,
  signerKeyText,
} from '../src/log/signer.js';
import { Witness } from '../src/log/witness.js';
import { FakeLog } from './log-fixture.js';

/** Issue 33 item 5 (SDK side): `ons-verify witness`, a C2SP tlog-witness with a state file. */

let dir: string;
let server: Server;
let url: string;
const log = new FakeLog('log.witness.example');
const signer = generateSigner('witness.test.example/w1');
let witness: Witness;
const statePath = () => join(dir, 'witness.json');

const b64 = (hex: string) => Buffer.from(hex.slice(2), 'hex').toString('base64');
const request = (old: number, proof: string[], checkpoint: string) =>
  `old ${old}\n${proof.map((p) => `${b64(p)}\n`).join('')}\n${checkpoint}`;
const post = async (body: string) => {
  const res = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ons-witness-'));
  witness = await Witness.open({
    signer,
    logs: [parseVerifierKey(log.vkey)],
    statePath: statePath(),
    now: () => 1_800_000_123,
  });
  ({ url, server } = await witness.listen(0));
  log.addBatch(3);
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('ons-verify witness', () => {
  it('cosigns the first checkpoint from size 0, then one proven consistent with it', async () => {
    const first = await post(request(0, [], log.checkpoint()));
    expect(first.status).toBe(200);
    const withCosig = `${log.checkpoint()}${first.text}`;
    const r = await verifyCheckpoint(withCosig, {
      logKey: log.vkey,
      witnessKeys: [witness.verifierKey],
      minCosignatures: 1,
    });
    expect(r.errors).toEqual([]);
    expect(r.cosignatures[0]).toMatchObject({ name: signer.name, timestamp: 1_800_000_123 });

    log.addBatch(6);
    const second = await post(request(3, log.consistency(3), log.checkpoint()));
    expect(second.status).toBe(200);
    const state = JSON.parse(await readFile(statePath(), 'utf8')) as {
      logs: Record<string, { size: number }>;
    };
    expect(state.logs[log.origin]!.size).toBe(9);
    // Atomic rename: no temporary file is left behind.
    expect(await readdir(dir)).toEqual(['witness.json']);
    // The same checkpoint again is fine (nothing new to prove).
    expect((await post(request(9, [], log.checkpoint()))).status).toBe(200);
  });

  it('refuses another text of the size it cosigned, the same root (409): a rewritten ons-batch line', async () => {
    const before = await readFile(statePath(), 'utf8');
    const body = log
      .body(9)
      .replace(/^ons-batch 2 0x[0-9a-f]{64}$/m, `ons-batch 2 0x${'cd'.repeat(32)}`);
    expect(body).not.toBe(log.body(9));
    const r = await post(request(9, [], log.checkpoint(9, [], body)));
    expect(r).toEqual({
      status: 409,
      type: 'text/plain; charset=utf-8',
      text: 'another checkpoint of the size it cosigned (its text differs)\n',
    });
    expect(await readFile(statePath(), 'utf8')).toBe(before);
    // The text it cosigned, again: cosigned.
    expect((await post(request(9, [], log.checkpoint(9)))).status).toBe(200);
  });

  describe('refuses as C2SP tlog-witness says (add-checkpoint), recording nothing', () => {
    // The witness has cosigned the log at size 9 (the test before). Each row is a request
    // and the answer tlog-witness gives it (or, where it is silent, the one kept).
    /** Another history under the log's origin, signed with the log's key. */
    const forkOf = (size: number, variant: string) => {
      const fork = new FakeLog(log.origin, variant);
      Object.assign(fork, { signer: log.signer });
      fork.addBatch(size);
      return fork;
    };
    /** The log's checkpoint of size 9 with one bit of its signature flipped. */
    const badSignature = () => {
      const text = log.checkpoint(9);
      const [body, sig] = text.split('\n\n') as [string, string];
      const [dash, name, b64sig] = sig.trim().split(' ') as [string, string, string];
      const raw = Buffer.from(b64sig, 'base64');
      raw[10]! ^= 1;
      return `${body}\n\n${dash} ${name} ${raw.toString('base64')}\n`;
    };
    const hash = `0x${'ab'.repeat(32)}`;
    const plain = 'text/plain; charset=utf-8';
    const rows: {
      what: string;
      body: () => string;
      status: number;
      type?: string;
      text?: string;
    }[] = [
      {
        what: '409 with its size: old is not the size it recorded',
        body: () => request(3, log.consistency(3, 9), log.checkpoint(9)),
        status: 409,
        type: 'text/x.tlog.size',
        text: '9\n',
      },
      {
        what: '409: the size it recorded with another root (a split view)',
        body: () => request(9, [], forkOf(9, 'same size').checkpoint()),
        status: 409,
        type: plain,
        text: 'another root at the size it cosigned (a split view)\n',
      },
      {
        what: '422: a larger tree whose proof does not prove consistency (a fork)',
        body: () => {
          const fork = forkOf(12, 'fork');
          return request(9, fork.consistency(9), fork.checkpoint());
        },
        status: 422,
      },
      {
        what: '422: the size and root it recorded, with a proof (from m to m it is empty)',
        body: () => request(9, [hash], log.checkpoint(9)),
        status: 422,
      },
      {
        what: '400: old past the checkpoint (a rollback)',
        body: () => request(9, [], log.checkpoint(3)),
        status: 400,
      },
      {
        what: '400: old past the checkpoint and not the size it recorded (checked first)',
        body: () => request(5, [], log.checkpoint(3)),
        status: 400,
      },
      {
        what: '404: a log it does not know',
        body: () => {
          const other = new FakeLog('elsewhere.example');
          other.addBatch(1);
          return request(0, [], other.checkpoint());
        },
        status: 404,
      },
      {
        what: "403: no signature by the log's key (another key under its name)",
        body: () => {
          const impostor = new FakeLog(log.origin);
          impostor.addBatch(10);
          return request(9, log.consistency(9, 10), impostor.checkpoint());
        },
        status: 403,
      },
      {
        what: "403: the log's key's signature does not verify",
        body: () => request(9, [], badSignature()),
        status: 403,
      },
      // Where tlog-witness is silent, the answer kept: malformed input is 400.
      { what: '400: an empty body', body: () => '', status: 400 },
      { what: '400: old is not a number', body: () => 'old x\n\n', status: 400 },
      {
        what: '400: old with a leading zero',
        body: () => request(9, [], log.checkpoint(9)).replace('old 9', 'old 09'),
        status: 400,
      },
      {
        what: '400: a proof line that is not base64',
        body: () => `old 9\nnot-base64\n\n${log.checkpoint(9)}`,
        status: 400,
      },
      {
        what: '400: more than 63 proof lines',
        body: () => request(9, Array<string>(64).fill(hash), log.checkpoint(9)),
        status: 400,
      },
      { what: '400: no checkpoint', body: () => 'old 9\n\n', status: 400 },
      {
        what: '400: a note signed by the log that is not a checkpoint',
        body: () => request(9, [], `hello\n\n${noteSignatureLine(log.signer, 'hello\n')}\n`),
        status: 400,
      },
    ];
    for (const row of rows) {
      it(row.what, async () => {
        const before = await readFile(statePath(), 'utf8');
        const r = await post(row.body());
        expect(r.status).toBe(row.status);
        if (row.type !== undefined) expect(r.type).toBe(row.type);
        if (row.text !== undefined) expect(r.text).toBe(row.text);
        expect(await readFile(statePath(), 'utf8')).toBe(before);
      });
    }
  });

  it('refuses from size 0 what no tree extends (422), then cosigns a first checkpoint', async () => {
    // A witness of a log it has recorded nothing for: `old 0`, and the proof must be empty.
    const fresh = new FakeLog('fresh.witness.example');
    const first = await Witness.open({
      signer,
      logs: [parseVerifierKey(fresh.vkey)],
      statePath: join(dir, 'fresh.json'),
    });
    const emptyTreeRoot = fresh.root(0);
    const otherRoot = Uint8Array.from(emptyTreeRoot, (b) => b ^ 1);
    const rows: [string, () => string, number][] = [
      [
        'size 0 with a root that is not the empty tree’s (kept: nothing to compare with)',
        () => request(0, [], fresh.checkpoint(0, [], fresh.body(0, otherRoot))),
        422,
      ],
      [
        'a proof from size 0 (it must be empty)',
        () => request(0, [`0x${'ab'.repeat(32)}`], fresh.checkpoint()),
        422,
      ],
      ['the first checkpoint, from size 0', () => request(0, [], fresh.checkpoint()), 200],
    ];
    fresh.addBatch(4);
    for (const [what, body, status] of rows) {
      expect((await first.addCheckpoint(body())).status, what).toBe(status);
    }
    await rm(join(dir, 'fresh.json'));
  });

  it('answers 405 to another method and 413 to a body past 64 KiB', async () => {
    expect((await fetch(`${url}/add-checkpoint`)).status).toBe(405);
    expect((await post('x'.repeat(70_000))).status).toBe(413);
  });

  it('survives a client that goes away in the middle of its request', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(url);
    for (let i = 0; i < 3; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(
        'POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nold 0\n',
      );
      await new Promise((r) => setTimeout(r, 20));
      socket.destroy();
    }
    await new Promise((r) => setTimeout(r, 50));
    // Still serving, and its state untouched: a 409 names the size it recorded.
    const res = await post(request(0, [], log.checkpoint(3)));
    expect(res.status).toBe(409);
  });

  it('keeps refusing after a restart: the state file is what it signed', async () => {
    const again = await Witness.open({
      signer,
      logs: [parseVerifierKey(log.vkey)],
      statePath: statePath(),
    });
    expect((await again.addCheckpoint(request(0, [], log.checkpoint(3)))).status).toBe(409);
    log.addBatch(2);
    expect(
      (await again.addCheckpoint(request(9, log.consistency(9), log.checkpoint()))).status,
    ).toBe(200);
    await writeFile(join(dir, 'broken.json'), '{"version": 2}');
    await expect(
      Witness.open({ signer, logs: [], statePath: join(dir, 'broken.json') }),
    ).rejects.toThrow('not a witness state file');
    await rm(join(dir, 'broken.json'));
  });

  it('"witness-key" writes a Go-format key file once and prints its cosignature key', async () => {
    const lines: string[] = [];
    const keyFile = join(dir, 'key');
    const code = await onsVerify(['witness-key', '--name', 'w.example/acme', '--out', keyFile], {
      log: (l) => lines.push(l),
      isTTY: false,
    });
    expect(code).toBe(0);
    const s = parseSignerKey(await readFile(keyFile, 'utf8'));
    expect(signerKeyText(s)).toBe((await readFile(keyFile, 'utf8')).trim());
    expect(parseVerifierKey(lines[0]!)).toMatchObject({ name: 'w.example/acme', alg: 4 });
    expect(
      await onsVerify(['witness-key', '--name', 'x', '--out', keyFile], {
        log: () => undefined,
        isTTY: false,
      }),
    ).toBe(2);
    await rm(keyFile);
  });
});
