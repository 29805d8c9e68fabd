import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main as onsVerify } from '@ons/sdk/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseVerifierKey, verifyCheckpoint } from '@ons/sdk';
import { generateSigner, parseSignerKey, signerKeyText } from '../src/log/signer.js';
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

  it('answers 409 with its size when old is not the size it recorded', async () => {
    const r = await post(request(3, log.consistency(3), log.checkpoint()));
    expect(r).toEqual({ status: 409, type: 'text/x.tlog.size', text: '9\n' });
  });

  it('refuses a fork: a proof that fails (422) and another root at its own size (422)', async () => {
    const fork = new FakeLog(log.origin, 'fork');
    Object.assign(fork, { signer: log.signer });
    fork.addBatch(12);
    const bad = await post(request(9, fork.consistency(9), fork.checkpoint()));
    expect(bad.status).toBe(422);
    const same = new FakeLog(log.origin, 'same size');
    Object.assign(same, { signer: log.signer });
    same.addBatch(9);
    expect((await post(request(9, [], same.checkpoint()))).status).toBe(422);
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

  it('refuses a rollback (400), an unknown log (404), a bad signature (403), malformed input (400)', async () => {
    expect((await post(request(9, [], log.checkpoint(3)))).status).toBe(400);
    const other = new FakeLog('elsewhere.example');
    other.addBatch(1);
    expect((await post(request(0, [], other.checkpoint()))).status).toBe(404);
    const impostor = new FakeLog(log.origin);
    impostor.addBatch(10);
    expect((await post(request(9, log.consistency(9, 10), impostor.checkpoint()))).status).toBe(
      403,
    );
    for (const body of ['', 'old x\n\n', `old 9\nnot-base64\n\n${log.checkpoint()}`, 'old 9\n\n']) {
      expect((await post(body)).status, body).toBe(400);
    }
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
