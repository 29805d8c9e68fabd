import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main as onsVerify } from '@ons/sdk/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ceilLog2,
  leafHash,
  rootOfLeafHashes,
  parseVerifierKey,
  verifyCheckpoint,
  verifyConsistencyProof,
  verifyInclusionProof,
  verifyReceipt,
  type ActionRecord,
  type Receipt,
} from '@ons/sdk';
import {
  cosignatureVerifierKey,
  noteVerifierKey,
  signerFromSeed,
} from '../../sdk/src/log/signer.js';
import { Witness } from '../../sdk/src/log/witness.js';
import { buildNetwork, type VerifyNetwork } from './verify-fixture.js';

/**
 * Issue 33 against the real service: the SDK's verifiers, its witness and its monitor on what
 * the service serves. Two witnesses are configured, the SDK's own (live) and one that is down:
 * the served checkpoint carries the live one's cosignature, and nothing waited for the other.
 */

const ORIGIN = 'log.live.example';
const SEED = new Uint8Array(32).fill(7);
const logSigner = signerFromSeed(ORIGIN, SEED);
const live = signerFromSeed('witness.live.example', new Uint8Array(32).fill(3));
// This key's base64 holds a `+` (as about half of all keys do): the vkey parser must split
// the text at its first two `+` only.
const down = signerFromSeed('witness.down.example', new Uint8Array(32).fill(8));

let dir: string;
let net: VerifyNetwork;
let witnessServer: Server;
let base: string;

const hashBytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.slice(2), 'hex'));
const text = async (path: string) => (await fetch(`${base}${path}`)).text();
const json = async <T>(path: string) => (await (await fetch(`${base}${path}`)).json()) as T;
const network = () =>
  json<{ network: string; log: { verifier_key: string; witnesses: { verifier_key: string }[] } }>(
    '/public/network',
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ons-log-live-'));
  const witness = await Witness.open({
    signer: live,
    logs: [parseVerifierKey(noteVerifierKey(logSigner))],
    statePath: join(dir, 'witness.json'),
  });
  const w = await witness.listen(0);
  witnessServer = w.server;
  net = await buildNetwork({
    LOG_SIGNING_KEY: Buffer.from(SEED).toString('hex'),
    LOG_ORIGIN: ORIGIN,
    LOG_WITNESSES: [
      `${cosignatureVerifierKey(down)}=http://127.0.0.1:9`,
      `${cosignatureVerifierKey(live)}=${w.url}`,
    ].join(','),
  });
  base = net.live.baseUrl;
  // The witnesses are asked in the background: wait (bounded) for the live one's line.
  for (let i = 0; i < 300 && !(await text('/log/checkpoint')).includes(live.name); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
});
afterAll(async () => {
  await net?.live.stop();
  await new Promise((r) => witnessServer?.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('the log as the service serves it, checked by the SDK', () => {
  it("publishes the log's key and both witnesses; the checkpoint carries the live witness's cosignature", async () => {
    const n = await network();
    expect(n.log.verifier_key).toBe(noteVerifierKey(logSigner));
    const keys = n.log.witnesses.map((w) => w.verifier_key);
    expect(keys.sort()).toEqual(
      [cosignatureVerifierKey(down), cosignatureVerifierKey(live)].sort(),
    );
    const r = await verifyCheckpoint(await text('/log/checkpoint'), {
      logKey: n.log.verifier_key,
      witnessKeys: keys,
      minCosignatures: 1,
    });
    expect(r.errors).toEqual([]);
    expect(r.cosignatures.map((c) => c.name)).toEqual([live.name]);
    expect(r.checkpoint?.origin).toBe(ORIGIN);
    expect(r.checkpoint?.batch).not.toBeNull();
  });

  it("verifies every public action's receipt offline with only the log's key", async () => {
    const n = await network();
    const history = await json<{ action_logs: ActionRecord[] }>(
      `/public/objects/${net.publicA}/history?order=asc`,
    );
    expect(history.action_logs.length).toBeGreaterThan(0);
    for (const a of history.action_logs) {
      const receipt = await json<Receipt>(`/ebus/action-logs/${a.id}/receipt`);
      const r = await verifyReceipt(receipt, {
        logKey: n.log.verifier_key,
        witnessKeys: [cosignatureVerifierKey(live)],
      });
      expect(r.errors, a.id).toEqual([]);
      expect(r.skipped).toEqual([]);
      // A doctored record does not verify.
      const bent = JSON.parse(JSON.stringify(receipt)) as Receipt;
      bent.action.nonce += 1;
      expect((await verifyReceipt(bent, { logKey: n.log.verifier_key })).ok).toBe(false);
    }
  });

  it("verifies the private action's receipt through its commitment, for its organization", async () => {
    const n = await network();
    const res = await net.live.svc.app.inject({
      method: 'GET',
      url: `/ebus/action-logs?object_id=${net.privateC}`,
      headers: net.owner.headers,
    });
    const id = res.json<{ action_logs: { id: string }[] }>().action_logs[0]!.id;
    const r = await net.live.svc.app.inject({
      method: 'GET',
      url: `/ebus/action-logs/${id}/receipt`,
      headers: net.owner.headers,
    });
    expect(r.statusCode).toBe(200);
    const receipt = r.json<Receipt>();
    const checked = await verifyReceipt(receipt, { logKey: n.log.verifier_key });
    expect(checked.errors).toEqual([]);
    expect((await fetch(`${base}/ebus/action-logs/${id}/receipt`)).status).not.toBe(200);
  });

  it('serves proofs the SDK accepts, within RFC 9162 bounds, for every pair of sizes', async () => {
    const size = (
      await verifyCheckpoint(await text('/log/checkpoint'), { logKey: noteVerifierKey(logSigner) })
    ).checkpoint!.size;
    expect(size).toBeGreaterThan(3);
    const entries: Uint8Array[] = [];
    const bundle = new Uint8Array(
      await (await fetch(`${base}/log/tile/entries/000.p/${size}`)).arrayBuffer(),
    );
    for (let at = 0; at < bundle.length; at += 34) entries.push(bundle.slice(at + 2, at + 34));
    expect(entries).toHaveLength(size);
    const roots = Array.from({ length: size + 1 }, (_, k) =>
      rootOfLeafHashes(entries.slice(0, k).map(leafHash)),
    );
    for (let to = 1; to <= size; to++) {
      for (let from = 1; from <= to; from++) {
        const c = await json<{ proof: string[] }>(`/log/proof/consistency?from=${from}&to=${to}`);
        expect(c.proof.length).toBeLessThanOrEqual(ceilLog2(to) + 1);
        const proof = c.proof.map((p) => hashBytes(p));
        expect(
          verifyConsistencyProof(from, to, proof, roots[from]!, roots[to]!),
          `${from}→${to}`,
        ).toBe(true);
      }
      for (let i = 0; i < to; i++) {
        const hash = `0x${Buffer.from(entries[i]!).toString('hex')}`;
        const p = await json<{ log_index: number; proof: string[] }>(
          `/log/proof/inclusion?hash=${hash}&size=${to}`,
        );
        expect(p.log_index).toBe(i);
        expect(p.proof.length).toBeLessThanOrEqual(ceilLog2(to));
        const ok = verifyInclusionProof(
          i,
          to,
          leafHash(entries[i]!),
          p.proof.map((x) => hashBytes(x)),
          roots[to]!,
        );
        expect(ok, `${i} in ${to}`).toBe(true);
      }
    }
  });

  it('ons-verify monitor passes over the real log, and again with nothing new', async () => {
    const lines: string[] = [];
    const out = { log: (l: string) => lines.push(l), isTTY: false };
    const state = join(dir, 'monitor.json');
    expect(
      await onsVerify(['monitor', '--url', base, '--state', state, '--min-cosignatures', '1'], out),
    ).toBe(0);
    expect(lines.at(-1)).toMatch(/^ok {4}size \d+ \(was 0\)/);
    expect(await onsVerify(['monitor', '--url', base, '--state', state], out)).toBe(0);
    expect(lines.at(-1)).toMatch(/^ok {4}size (\d+) \(was \1\): 0 new entries/);
  });
});
