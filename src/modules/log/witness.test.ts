import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint } from '../../../sdk/src/log/checkpoint.js';
import {
  cosignatureLine,
  cosignatureVerifierKey,
  noteSignatureLine,
  noteVerifierKey,
  signerFromSeed,
} from '../../../sdk/src/log/signer.js';
import { cosign, privateKeyOfSeed } from './note.js';
import { addCheckpoint, MAX_COSIGNATURE_AHEAD_SECONDS, parseWitnesses } from './witness.js';

/**
 * What of a witness's answer is kept (docs/log.md, "Witnesses"): only a cosignature line a
 * strict verifier of the served note accepts. A line in another base64 form is refused, not
 * stored (it would break every client's check of the checkpoint); CRLF line ends are taken
 * off; an endless answer is read to a cap.
 */
const logSigner = signerFromSeed('log.test.example', Buffer.alloc(32, 1));
const witnessSigner = signerFromSeed('witness.test.example', Buffer.alloc(32, 2));
const body = `log.test.example\n5\n${Buffer.alloc(32, 3).toString('base64')}\n`;
const note = `${body}\n${noteSignatureLine(logSigner, body)}\n`;
/** A genuine cosignature line whose base64 holds `+` or `/` (the URL-safe variant differs). */
const genuine = ((): string => {
  for (let t = 1_700_000_000; ; t++) {
    const line = cosignatureLine(witnessSigner, body, t);
    if (/[+/]/.test(line.slice(line.lastIndexOf(' ') + 1))) return line;
  }
})();
const b64 = genuine.slice(genuine.lastIndexOf(' ') + 1);
const withB64 = (text: string) => `${genuine.slice(0, genuine.lastIndexOf(' ') + 1)}${text}`;

let answer: (res: import('node:http').ServerResponse) => void = (res) => res.end();
let server: Server;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const witness = () =>
  parseWitnesses(
    `${cosignatureVerifierKey(witnessSigner)}=http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  )[0]!;

async function send(text: string) {
  answer = (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
  return addCheckpoint(witness(), 0, [], note, new Date(), 2_000);
}

describe('a witness answer', () => {
  it('is kept as the genuine line, also from CRLF line ends, and the note still verifies', async () => {
    for (const text of [`${genuine}\n`, `${genuine}\r\n`, `junk\n${genuine}\r\n\r\n`]) {
      const a = await send(text);
      expect(a, JSON.stringify(text)).toEqual({ kind: 'cosigned', line: genuine });
      const served = `${note}${a.kind === 'cosigned' ? a.line : ''}\n`;
      const checked = await verifyCheckpoint(served, {
        logKey: noteVerifierKey(logSigner),
        witnessKeys: [cosignatureVerifierKey(witnessSigner)],
        minCosignatures: 1,
      });
      expect(checked.errors).toEqual([]);
    }
  });

  it('is refused when its signature is in any but the canonical base64', async () => {
    const variants = {
      'URL-safe alphabet': b64.replace(/\+/g, '-').replace(/\//g, '_'),
      'no padding': b64.replace(/=+$/, ''),
      'trailing characters': `${b64}AA`,
      'a tab after it': `${b64}\t`,
      'a space inside': `${b64.slice(0, 10)} ${b64.slice(10)}`,
    };
    // The genuine line's base64 has what the first two variants change.
    expect(b64).toMatch(/[+/]/);
    expect(b64).toMatch(/=$/);
    for (const [name, text] of Object.entries(variants)) {
      expect(Buffer.from(text, 'base64').equals(Buffer.from(b64, 'base64')), name).toBe(true);
      const a = await send(`${withB64(text)}\n`);
      expect(a.kind, name).toBe('refused');
    }
  });

  it('is refused when dated more than 600 s after the log’s clock (2^60, a day ahead)', async () => {
    const now = new Date('2026-11-29T12:00:00Z');
    const at = (t: bigint) =>
      cosign(witnessSigner.name, privateKeyOfSeed(Buffer.alloc(32, 2)), body, t);
    const nowS = BigInt(now.getTime() / 1000);
    for (const t of [1n << 60n, nowS + 86_400n, nowS + 601n]) {
      answer = (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${at(t)}\n`);
      expect(await addCheckpoint(witness(), 0, [], note, now, 2_000), String(t)).toEqual({
        kind: 'refused',
        status: 200,
        message: `the cosignature's time ${t} is more than 600 s ahead of the log's clock`,
      });
    }
    expect(MAX_COSIGNATURE_AHEAD_SECONDS).toBe(600);
    // Up to 600 s ahead is a clock's skew: kept, as an older line is.
    for (const t of [nowS + 600n, nowS - 86_400n]) {
      answer = (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${at(t)}\n`);
      const a = await addCheckpoint(witness(), 0, [], note, now, 2_000);
      expect(a, String(t)).toEqual({ kind: 'cosigned', line: at(t) });
    }
  });

  it('is refused with the witness’s words on a 409 that names no size (a conflict at its size)', async () => {
    const words = 'another checkpoint of the size it cosigned (its text differs)';
    answer = (res) => res.writeHead(409, { 'content-type': 'text/plain' }).end(`${words}\n`);
    expect(await addCheckpoint(witness(), 0, [], note, new Date(), 2_000)).toEqual({
      kind: 'refused',
      status: 409,
      message: `a 409 without a tree size: ${words}`,
    });
  });

  it('is read only to its cap, however long the witness goes on', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const more = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    };
    const started = Date.now();
    const a = await addCheckpoint(witness(), 0, [], note, new Date(), 4_000);
    expect(a).toEqual({
      kind: 'refused',
      status: 200,
      message: 'no valid cosignature by the witness key',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
