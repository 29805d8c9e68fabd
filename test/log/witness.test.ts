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
});
