import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint } from '../../sdk/src/log/checkpoint.js';
import { parseVerifierKey } from '../../sdk/src/log/note.js';
import {
  cosignatureVerifierKey,
  generateSigner,
  noteVerifierKey,
  signerFromSeed,
} from '../../sdk/src/log/signer.js';
import { Witness } from '../../sdk/src/log/witness.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { parseCheckpoint } from '../helpers/log.js';

/**
 * Issue 33, item 5: each new checkpoint goes to the configured witnesses (C2SP tlog-witness)
 * off the sealer's path; the served checkpoint carries the cosignatures that came back. The
 * live witness is the SDK's `ons-verify witness` (keeps state in a file, refuses anything not
 * consistent with what it signed); the other one is down: it accepts connections and never
 * answers, the worst kind.
 */
const SEED = Buffer.alloc(32, 7);
const ORIGIN = 'localhost:8080';
let svc: TestService;
let owner: EoaSigner;
let templateId: string;
let dir: string;
let witness: Witness;
let live: Server;
let stalled: Server;
let stalledRequests = 0;
let stalledArrived: () => void = () => undefined;
const witnessSigner = generateSigner('witness.example/a');
const downSigner = generateSigner('witness.example/down');
let nonce = 0;
/** The live witness's clock, unix seconds (a test moves it to make old cosignatures). */
let witnessClock = () => Date.now() / 1000;

async function mint(n: number) {
  for (let i = 0; i < n; i++) {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/actions',
      headers: owner.headers,
      payload: await signEoa(svc, owner, {
        name: 'mint',
        params: { template_id: templateId },
        nonce: nonce++,
      }),
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}

async function seal() {
  svc.clock.advance(11_000);
  for (let i = 0; i < 30 && (await svc.container.batches.sealer.tick()); i++);
}

const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ons-witness-'));
  const logKey = noteVerifierKey(signerFromSeed(ORIGIN, SEED));
  witness = await Witness.open({
    signer: witnessSigner,
    logs: [parseVerifierKey(logKey)],
    statePath: join(dir, 'state.json'),
    now: () => witnessClock(),
  });
  live = (await witness.listen(0)).server;
  stalled = createServer(() => {
    stalledRequests++; // takes the request, never answers
    stalledArrived();
  });
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  svc = await startTestService({
    env: {
      BATCH_MAX_ACTIONS: '3',
      LOG_SIGNING_KEY: SEED.toString('hex'),
      LOG_WITNESSES: [
        `${cosignatureVerifierKey(witnessSigner)}=${urlOf(live)}`,
        `${cosignatureVerifierKey(downSigner)}=${urlOf(stalled)}/`,
      ].join(','),
    },
  });
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  templateId = await createTemplate(svc, owner.orgId);
  await seal();
});
afterAll(async () => {
  await svc?.stop();
  stalled?.closeAllConnections();
  await new Promise((r) => stalled?.close(r));
  await new Promise((r) => live?.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('witnesses', () => {
  it('publishes the witnesses, names and keys only', async () => {
    const network = (await svc.app.inject({ method: 'GET', url: '/public/network' })).json<{
      log: { verifier_key: string; witnesses: { name: string; verifier_key: string }[] };
    }>();
    expect(network.log.verifier_key).toBe(noteVerifierKey(signerFromSeed(ORIGIN, SEED)));
    expect(network.log.witnesses.map((w) => w.name)).toEqual([
      'witness.example/a',
      'witness.example/down',
    ]);
  });

  it('a down witness delays nothing; the served checkpoint carries the live one’s cosignature', async () => {
    // The request reaches the down witness off the sealer's path, so wait for it to arrive.
    const arrived = new Promise<void>((resolve) => (stalledArrived = resolve));
    await mint(3);
    await seal();
    await arrived;
    // The checkpoint is served while the down witness still holds its request.
    expect(stalledRequests).toBe(1);
    const first = await svc.app.inject({ method: 'GET', url: '/log/checkpoint' });
    expect(first.statusCode).toBe(200);
    expect(parseCheckpoint(first.body).size).toBe(3);
    await svc.container.log.settled(); // the stalled witness's request times out
    const res = await svc.app.inject({ method: 'GET', url: '/log/checkpoint' });
    const cp = parseCheckpoint(res.body);
    expect(cp.signatures.map((s) => s.name)).toEqual([ORIGIN, 'witness.example/a']);
    const checked = await verifyCheckpoint(res.body, {
      logKey: (await svc.app.inject({ method: 'GET', url: '/public/network' })).json<{
        log: { verifier_key: string };
      }>().log.verifier_key,
      witnessKeys: [cosignatureVerifierKey(witnessSigner), cosignatureVerifierKey(downSigner)],
      minCosignatures: 1,
    });
    expect(checked.errors).toEqual([]);
    expect(checked.cosignatures.map((c) => c.name)).toEqual(['witness.example/a']);
    expect(svc.logs.some((l) => l.msg === 'log: a witness did not answer')).toBe(true);
  }, 20_000);

  it('sends the next checkpoint with a consistency proof the witness accepts', async () => {
    await mint(4);
    await seal();
    await svc.container.log.settled();
    const cp = parseCheckpoint(
      (await svc.app.inject({ method: 'GET', url: '/log/checkpoint' })).body,
    );
    expect(cp.size).toBe(7);
    expect(cp.signatures.map((s) => s.name)).toEqual([ORIGIN, 'witness.example/a']);
  }, 20_000);

  it('learns the witness’s size from a 409 and tries again from there', async () => {
    // The service forgets what the witness last cosigned: it sends `old 0`, is told 7.
    await svc.container.db.execute(sql`DELETE FROM log_witness_state`);
    await mint(3);
    await seal();
    await svc.container.log.settled();
    const cp = parseCheckpoint(
      (await svc.app.inject({ method: 'GET', url: '/log/checkpoint' })).body,
    );
    expect(cp.size).toBe(10);
    expect(cp.signatures.map((s) => s.name)).toEqual([ORIGIN, 'witness.example/a']);
    const { rows } = await svc.container.db.execute<{ witness: string; tree_size: number }>(
      sql`SELECT witness, tree_size::int AS tree_size FROM log_witness_state`,
    );
    expect(rows).toEqual([{ witness: 'witness.example/a', tree_size: 10 }]);
  }, 20_000);

  it('asks a witness again once its cosignature is older than LOG_WITNESS_REFRESH_SECONDS (or missing), so a log that does not grow shows fresh ones', async () => {
    const log = svc.container.log;
    const network = (await svc.app.inject({ method: 'GET', url: '/public/network' })).json<{
      log: { verifier_key: string };
    }>();
    const keys = {
      logKey: network.log.verifier_key,
      witnessKeys: [cosignatureVerifierKey(witnessSigner), cosignatureVerifierKey(downSigner)],
      minCosignatures: 1,
      maxAgeSeconds: 3600,
    };
    const served = async () =>
      (await svc.app.inject({ method: 'GET', url: '/log/checkpoint' })).body;
    const refresh = async (advanceMs: number) => {
      svc.clock.advance(advanceMs);
      await log.refreshCosignatures();
      await log.settled();
    };
    const size = parseCheckpoint(await served()).size;
    const asked = stalledRequests;
    // Past the refresh period the live witness cosigns the same checkpoint again; its clock
    // runs two hours behind, so the new cosignature is already too old for the verifier.
    witnessClock = () => Date.now() / 1000 - 7200;
    await refresh(1_801_000);
    const old = await served();
    expect(parseCheckpoint(old).size).toBe(size);
    expect((await verifyCheckpoint(old, keys)).errors[0]).toMatch(
      /^stale: 0 of the cosignatures are at most 3600 s old, at least 1 required/,
    );
    // The down witness, which never cosigned it, was asked again too.
    expect(stalledRequests).toBe(asked + 1);
    // Within the period nothing is asked of the live witness, whatever its clock says now.
    witnessClock = () => Date.now() / 1000;
    await refresh(300_000);
    expect((await verifyCheckpoint(await served(), keys)).errors[0]).toMatch(/^stale/);
    // Past it, a fresh cosignature of the same checkpoint replaces the old one.
    await refresh(1_801_000);
    const fresh = await served();
    expect(parseCheckpoint(fresh).size).toBe(size);
    expect(parseCheckpoint(fresh).signatures.map((x) => x.name)).toEqual([
      ORIGIN,
      'witness.example/a',
    ]);
    expect((await verifyCheckpoint(fresh, keys)).errors).toEqual([]);
  }, 40_000);

  it('refuses a cosignature dated more than 600 s ahead of its clock: nothing is stored, the good line stays', async () => {
    const log = svc.container.log;
    const network = (await svc.app.inject({ method: 'GET', url: '/public/network' })).json<{
      log: { verifier_key: string };
    }>();
    const keys = {
      logKey: network.log.verifier_key,
      witnessKeys: [cosignatureVerifierKey(witnessSigner)],
      minCosignatures: 1,
    };
    const rows = async () =>
      (
        await svc.container.db.execute<{ batch_sequence: number; line: string; at: string }>(
          sql`SELECT batch_sequence::int AS batch_sequence, line, created_at::text AS at
              FROM log_cosignatures WHERE witness = 'witness.example/a' ORDER BY batch_sequence`,
        )
      ).rows;
    const good = await rows();
    const served = (await svc.app.inject({ method: 'GET', url: '/log/checkpoint' })).body;
    expect((await verifyCheckpoint(served, keys)).errors).toEqual([]);
    const refused = () =>
      svc.logs.filter(
        (l) =>
          l.msg === 'log: a witness refused a checkpoint' &&
          /ahead of the log's clock/.test(String(l.message)),
      ).length;
    // Each a valid line by the witness's key: 10^17, past 2^53 where every client's check of
    // the served note fails (a number the SDK's signer writes exactly, as 2^60 is not), and
    // a day ahead of the log's clock, which a verifier would count as fresh all day.
    const ahead = [1e17, svc.clock.now().getTime() / 1000 + 86_400];
    for (const [i, t] of ahead.entries()) {
      witnessClock = () => t;
      svc.clock.advance(1_801_000);
      await log.refreshCosignatures();
      await log.settled();
      expect(await rows(), String(t)).toEqual(good);
      const now = (await svc.app.inject({ method: 'GET', url: '/log/checkpoint' })).body;
      expect(now, String(t)).toBe(served);
      expect((await verifyCheckpoint(now, keys)).errors).toEqual([]);
      expect(refused(), String(t)).toBe(i + 1);
    }
    witnessClock = () => Date.now() / 1000;
  }, 40_000);
});
