import { createHash, createPublicKey, verify } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { CID } from 'multiformats/cid';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/lib/canonical-json.js';
import { verifyInclusion } from '../../src/lib/merkle.js';
import { loadConfig } from '../../src/config.js';
import { computeHeader } from '../../src/modules/batches/header.js';
import { batchActionPages, batchActions } from '../../src/modules/ebus/index.js';
import type { HeaderPool } from '../../src/modules/batches/header-pool.js';
import { Ed25519Prover } from '../../src/modules/batches/prover.js';
import { BatchSealer } from '../../src/modules/batches/sealer.js';
import { BatchSealerWorker } from '../../src/workers/batch-sealer.js';
import { chainProblems } from '../helpers/batches.js';
import { useTestService } from '../helpers/harness.js';
import {
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  signPasskey,
  type EoaSigner,
} from '../helpers/ebus.js';

/**
 * Issue 16: transaction batches. Time is the fake clock's; the sealer runs when a test calls
 * `tick()` (the worker loop is not started), so every step is observed.
 */
const MAX_ACTIONS = 5;
const MAX_SECONDS = 10;
const WINDOW_SECONDS = 60;

let owner: EoaSigner;
let templateId: string;
const nonces = new Map<string, number>();
const nextNonce = (s: EoaSigner) => {
  const n = nonces.get(s.walletId) ?? 0;
  nonces.set(s.walletId, n + 1);
  return n;
};

const tick = () => svc.container.batches.sealer.tick();

/** A prover with the service's batch key, so its batches' proofs verify like every other's. */
async function serviceProver() {
  const { rows } = await svc.container.db.execute<{ private_key: string }>(
    sql`SELECT private_key FROM batch_keys`,
  );
  return new Ed25519Prover(rows[0]!.private_key);
}

/** The service's batch salt key, so a test's sealer seals private actions as the service's. */
async function serviceSaltKey() {
  const { rows } = await svc.container.db.execute<{ secret: string }>(
    sql`SELECT secret FROM batch_salt_keys`,
  );
  return rows[0]!.secret;
}

/** Runs the sealer until a pass does nothing. */
async function settle() {
  for (let i = 0; i < 20 && (await tick()); i++);
}

async function mintMany(
  n: number,
  signer: EoaSigner = owner,
): Promise<{ id: string; batch_id: string | null }[]> {
  const actions = [];
  for (let i = 0; i < n; i++) {
    actions.push(
      await signEoa(svc, signer, {
        name: 'mint',
        params: { template_id: templateId },
        nonce: nextNonce(signer),
      }),
    );
  }
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/actions/batch',
    headers: signer.headers,
    payload: { actions },
  });
  expect(res.statusCode, res.body).toBe(200);
  const results = res.json().results as {
    status: string;
    action: { id: string; batch_id: string | null };
  }[];
  expect(results.every((r) => r.status === 'applied')).toBe(true);
  return results.map((r) => r.action);
}

const H = (...parts: Buffer[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const bytes = (hash: string) => Buffer.from(hash.slice(2), 'hex');
const hex = (b: Buffer) => `0x${b.toString('hex')}`;

/** RFC 6962 MTH, recursive, written independently of src/lib/merkle.ts. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return H();
  if (leaves.length === 1) return H(Buffer.of(0), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return H(Buffer.of(1), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const svc = useTestService({
  env: {
    BATCH_MAX_ACTIONS: String(MAX_ACTIONS),
    BATCH_MAX_SECONDS: String(MAX_SECONDS),
    BATCH_CHALLENGE_WINDOW_SECONDS: String(WINDOW_SECONDS),
  },
});
const { get } = svc;
beforeAll(async () => {
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  templateId = await createTemplate(svc, owner.orgId);
});

describe('joining and sealing', () => {
  it('opens a batch, and an idle network seals nothing', async () => {
    await tick();
    const list = (await get('/batches')).json();
    expect(list.batches).toHaveLength(1);
    expect(list.batches[0]).toMatchObject({ sequence: 1, status: 'building', actions_count: 0 });
    svc.clock.advance(MAX_SECONDS * 3 * 1000);
    await settle();
    expect((await get('/batches')).json().batches).toHaveLength(1);
  });

  it('every applied action joins the building batch; the batch seals at BATCH_MAX_ACTIONS', async () => {
    const building = (await get('/batches')).json().batches[0];
    const first = await mintMany(3);
    expect(first.map((a) => a.batch_id)).toEqual([building.id, building.id, building.id]);
    const live = (await get(`/batches/${building.id}`)).json();
    expect(live).toMatchObject({ status: 'building', actions_count: 3, hash: '', proof: null });
    expect(live.affected_actions.map((a: { id: string }) => a.id)).toEqual(first.map((a) => a.id));

    // 4 more: the 5th number is the batch's last; the two beyond it join the batch named to
    // follow it, which the explorer shows only once the full one has closed.
    const more = await mintMany(4);
    const nextId = more[2]!.batch_id!;
    expect(nextId).toMatch(/^bat_/);
    expect(nextId).not.toBe(building.id);
    expect(more.map((a) => a.batch_id)).toEqual([building.id, building.id, nextId, nextId]);
    expect((await get(`/batches/${nextId}`)).statusCode).toBe(404);
    await settle();
    const sealed = (await get(`/batches/${building.id}`)).json();
    expect(sealed).toMatchObject({ status: 'proven', actions_count: MAX_ACTIONS });
    const list = (await get('/batches')).json().batches;
    expect(list.map((b: { sequence: number }) => b.sequence)).toEqual([2, 1]);
    expect(list[0]).toMatchObject({ id: nextId, status: 'building', actions_count: 2 });
    // The two beyond it are batch 2's; the action log says so.
    const logs = await svc.container.db.execute<{ id: string; batch_id: string }>(
      sql`SELECT id, batch_id FROM action_logs WHERE id IN (${more[2]!.id}, ${more[3]!.id})`,
    );
    expect(logs.rows.every((r) => r.batch_id === list[0].id)).toBe(true);
  });

  it('seals at BATCH_MAX_SECONDS after its first action, whichever comes first', async () => {
    const building = (await get('/batches')).json().batches[0];
    svc.clock.advance((MAX_SECONDS - 1) * 1000);
    await settle();
    expect((await get(`/batches/${building.id}`)).json().status).toBe('building');
    svc.clock.advance(1000);
    await settle();
    expect((await get(`/batches/${building.id}`)).json()).toMatchObject({
      status: 'proven',
      actions_count: 2,
    });
  });

  it('puts every action in exactly one batch, in one unbroken chain', async () => {
    // Into an empty building batch: 5 join it, 5 the batch named to follow it, and the one
    // past both ranges waits without a batch until a batch whose range holds it opens.
    const many = await mintMany(MAX_ACTIONS * 2 + 1);
    expect(many.map((a) => a.batch_id === null)).toEqual([
      ...Array<boolean>(MAX_ACTIONS * 2).fill(false),
      true,
    ]);
    await settle();
    const { rows } = await svc.container.db.execute<{ n: number; batches: number }>(
      sql`SELECT count(*)::int AS n, count(DISTINCT batch_id)::int AS batches FROM action_logs`,
    );
    const { rows: missing } = await svc.container.db.execute(
      sql`SELECT id FROM action_logs WHERE batch_id IS NULL`,
    );
    expect(missing).toEqual([]);
    const all = await svc.container.db.execute<{ batch_id: string; n: number }>(
      sql`SELECT batch_id, count(*)::int AS n FROM action_logs GROUP BY batch_id`,
    );
    expect(all.rows.every((r) => r.n <= MAX_ACTIONS)).toBe(true);
    expect(rows[0]!.n).toBe(3 + 4 + MAX_ACTIONS * 2 + 1);
    const chain = (await get('/batches?limit=100&order=asc')).json().batches as {
      sequence: number;
      hash: string;
      prev_hash: string;
      integrity_root: string;
      prev_integrity_root: string;
      status: string;
    }[];
    expect(chain.map((b) => b.sequence)).toEqual(chain.map((_, i) => i + 1));
    const sealed = chain.filter((b) => b.status !== 'building');
    expect(sealed[0]!.prev_hash).toBe(`0x${'0'.repeat(64)}`);
    expect(sealed[0]!.prev_integrity_root).toBe(`0x${'0'.repeat(64)}`);
    for (let i = 1; i < sealed.length; i++) {
      expect(sealed[i]!.prev_hash).toBe(sealed[i - 1]!.hash);
      expect(sealed[i]!.prev_integrity_root).toBe(sealed[i - 1]!.integrity_root);
    }
  });

  it('restarts a full batch whose actions all rolled back, with the actions of the next one', async () => {
    // An empty building batch: the one holding the action that waited seals by time.
    svc.clock.advance(MAX_SECONDS * 1000);
    await settle();
    const building = (await get('/batches')).json().batches[0];
    expect(building).toMatchObject({ status: 'building', actions_count: 0 });
    // Every number left in its range is taken and rolled back (as by failed groups).
    const { rows } = await svc.container.db.execute<{ seq_start: string; capacity: number }>(
      sql`SELECT seq_start, capacity FROM batches WHERE id = ${building.id}`,
    );
    const end = Number(rows[0]!.seq_start) + rows[0]!.capacity;
    await svc.container.db.execute(sql`SELECT setval('action_log_seq', ${end - 1})`);
    const two = await mintMany(2);
    const nextId = two[0]!.batch_id!;
    expect(nextId).not.toBe(building.id);
    await settle();
    // Nothing to seal: the batch starts again over the next numbers and takes the two.
    const again = (await get(`/batches/${building.id}`)).json();
    expect(again).toMatchObject({ status: 'building', actions_count: 2 });
    expect((await get(`/batches/${nextId}`)).statusCode).toBe(404);
    expect(again.affected_actions.map((a: { id: string }) => a.id)).toEqual(two.map((a) => a.id));
  });
});

describe('roots, content and proof, recomputed from the raw rows', () => {
  it('match docs/batches.md, "The formulas", byte for byte', async () => {
    const batches = (await get('/batches?status=proven&limit=100')).json().batches as Record<
      string,
      unknown
    >[];
    expect(batches.length).toBeGreaterThanOrEqual(3);
    const network = (await get('/public/network')).json();
    expect(network.batch_public_key).toMatch(/^0x[0-9a-f]{64}$/);
    for (const b of batches) {
      const { rows } = await svc.container.db.execute<{
        id: string;
        hash: string;
        object_id: string;
        integrity_hash: string;
        fee_wei: string;
      }>(sql`SELECT id, hash, object_id, integrity_hash, fee_wei::text AS fee_wei
        FROM action_logs WHERE batch_id = ${b.id as string} ORDER BY seq`);
      // actions_hash
      const actionsHash = hex(mth(rows.map((r) => bytes(r.hash))));
      expect(b.actions_hash).toBe(actionsHash);
      // integrity_root: last integrity hash per object, sorted by id bytes
      const last = new Map<string, string>();
      for (const r of rows) last.set(r.object_id, r.integrity_hash);
      const ids = [...last.keys()].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      const root = hex(
        mth(ids.map((id) => Buffer.concat([Buffer.from(id), Buffer.of(0), bytes(last.get(id)!)]))),
      );
      expect(b.integrity_root).toBe(root);
      // commitment
      const seq = Buffer.alloc(8);
      seq.writeBigUInt64BE(BigInt(b.sequence as number));
      const commitment = hex(
        H(bytes(b.prev_integrity_root as string), bytes(root), bytes(actionsHash), seq),
      );
      expect(b.commitment).toBe(commitment);
      // fees
      const total = rows.reduce((s, r) => s + BigInt(r.fee_wei), 0n);
      expect(b.total_fee_wei).toBe(total.toString());
      expect(b.actions_count).toBe(rows.length);
      expect(
        (b.affected_actions as { id: string; alias: string }[]).map((a) => [a.id, a.alias]),
      ).toEqual(rows.map((r) => [r.id, r.object_id]));
      // hash
      const header = {
        id: b.id,
        sequence: b.sequence,
        prev_hash: b.prev_hash,
        prev_integrity_root: b.prev_integrity_root,
        integrity_root: b.integrity_root,
        actions_hash: b.actions_hash,
        commitment: b.commitment,
        actions_count: b.actions_count,
        total_fee_wei: b.total_fee_wei,
        when_created: b.when_created,
      };
      expect(b.hash).toBe(hex(H(Buffer.from(canonicalJson(header)))));
      // content and its CID
      const content = await get(`/batches/${b.id as string}/content`);
      expect(content.statusCode).toBe(200);
      expect(content.headers['content-type']).toMatch(/^application\/json/);
      const body = content.rawPayload;
      const parsed = JSON.parse(body.toString('utf8'));
      expect(parsed.batch).toEqual({ ...header, hash: b.hash });
      expect(parsed.actions.map((a: { id: string }) => a.id)).toEqual(rows.map((r) => r.id));
      // content version 4 (public actions as in version 2): each action's integrity hash, and the integrity_root leaves
      expect([b.version, parsed.version]).toEqual([4, 4]);
      expect(
        parsed.actions.map((a: { integrity_hash: string; organization_id: string }) => [
          a.integrity_hash,
          a.organization_id,
        ]),
      ).toEqual(rows.map((r) => [r.integrity_hash, owner.orgId]));
      expect(parsed.objects).toEqual(ids.map((id) => ({ id, integrity_hash: last.get(id) })));
      expect(canonicalJson(parsed)).toBe(body.toString('utf8'));
      const cid = CID.parse((b.ipfs_url as string).replace('ipfs://', ''));
      expect(cid.version).toBe(1);
      expect(cid.code).toBe(0x55);
      expect(cid.multihash.code).toBe(0x12);
      expect(Buffer.from(cid.multihash.digest).equals(H(body))).toBe(true);
      // the attestation
      const proof = b.proof as Record<string, string>;
      expect(proof.type).toBe('ed25519-attestation');
      expect(proof.public_values).toBe(commitment);
      expect(proof.vkey).toBe(network.batch_public_key);
      expect(proof.message).toMatch(/origin/);
      expect(proof.message).toMatch(/not/);
      expect(b.proof_id).toMatch(/^0x[0-9a-f]{64}$/);
      const key = createPublicKey({
        key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), bytes(proof.vkey!)]),
        format: 'der',
        type: 'spki',
      });
      expect(verify(null, bytes(commitment), key, bytes(proof.value!))).toBe(true);
      expect(b).toMatchObject({ sender: '', l2_tx_hash: '', l2_finalization_tx_hash: '' });
      expect(b.challenge_window_end).not.toBe('');
      expect(b.when_completed).toBe('');
    }
  });

  it('are read page by page exactly as at once, as the header thread reads them', async () => {
    const list = (await get('/batches?status=proven&limit=100')).json().batches as {
      id: string;
      actions_count: number;
    }[];
    const b = list.reduce((x, y) => (y.actions_count > x.actions_count ? y : x));
    const whole = await batchActions(svc.container.db, b.id);
    expect(whole.length).toBeGreaterThan(2);
    for (const size of [1, 2, whole.length, whole.length + 1]) {
      const pages: unknown[][] = [];
      for await (const page of batchActionPages(svc.container.db, b.id, size)) pages.push(page);
      expect(pages.every((p) => p.length > 0 && p.length <= size)).toBe(true);
      expect(pages.flat()).toEqual(whole);
    }
    const none: unknown[] = [];
    for await (const page of batchActionPages(svc.container.db, 'bat_none', 5)) none.push(page);
    expect(none).toEqual([]);
  });

  it('the action log records carry signature and expires, for an EOA and a passkey', async () => {
    const passkey = await createPasskeySigner(svc, { orgId: owner.orgId });
    const body = signPasskey(svc, passkey, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: 0,
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: passkey.headers,
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    const action = res.json().action;
    expect(action.expires).toBe(body.action.expires);
    expect(action.signature).toEqual({
      credential_id: body.signature.credential.id,
      authenticator_data: body.signature.credential.response.authenticatorData,
      client_data_json: body.signature.credential.response.clientDataJSON,
      signature: body.signature.credential.response.signature,
    });
    const eoa = await signEoa(svc, owner, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: nextNonce(owner),
    });
    const r2 = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: owner.headers,
      payload: eoa,
    });
    expect(r2.json().action).toMatchObject({
      signature: eoa.signature.signature,
      expires: eoa.action.expires,
    });
    const log = await svc.app.inject({
      method: 'GET',
      url: `/ebus/action-logs?id=${r2.json().action.id as string}`,
      headers: owner.headers,
    });
    expect(log.json().action_logs[0]).toMatchObject({
      signature: eoa.signature.signature,
      expires: eoa.action.expires,
    });
  });
});

describe('webhook bodies', () => {
  it('carry the batch the action joined', async () => {
    const now = svc.clock.now();
    await svc.container.db.execute(sql`INSERT INTO webhooks (id, organization_id, url, rules,
        signing_key, active_since, created_at, updated_at)
      VALUES (${'whk_01ARZ3NDEKTSV4RRFFQ69G5FAV'}, ${owner.orgId}, 'https://hooks.example.com/x',
        ${JSON.stringify([{ template_id: templateId, actions: [], addresses: [] }])}::jsonb,
        ${Buffer.alloc(32, 1)}, ${now}, ${now}, ${now})`);
    await tick();
    const [applied] = await mintMany(1);
    expect(applied!.batch_id).toMatch(/^bat_/);
    const { rows } = await svc.container.db.execute<{ event: string }>(
      sql`SELECT event FROM webhook_deliveries WHERE action_id = ${applied!.id}`,
    );
    expect(rows).toHaveLength(1);
    const event = JSON.parse(rows[0]!.event) as { action: Record<string, unknown> };
    expect(event.action).toMatchObject({ id: applied!.id, batch_id: applied!.batch_id });
    await svc.container.db.execute(sql`DELETE FROM webhook_deliveries`);
    await svc.container.db.execute(sql`DELETE FROM webhooks`);
  });
});

describe('inclusion proofs', () => {
  it('prove each action of a batch, and fail when one byte changes', async () => {
    const b = (await get('/batches?status=proven&limit=1&order=asc')).json().batches[0];
    for (const a of b.affected_actions as { id: string; hash: string }[]) {
      const res = await get(`/batches/${b.id as string}/proofs/${a.id}`);
      expect(res.statusCode, res.body).toBe(200);
      const proof = res.json();
      expect(proof.root).toBe(b.actions_hash);
      expect(proof.tree_size).toBe(b.actions_count);
      expect(verifyInclusion(proof, bytes(a.hash))).toBe(true);
      const changed = bytes(a.hash);
      changed[7] = changed[7]! ^ 1;
      expect(verifyInclusion(proof, changed)).toBe(false);
    }
    const other = (await get('/batches?status=proven&limit=1&order=desc')).json().batches[0];
    expect(other.id).not.toBe(b.id);
    const foreign = await get(
      `/batches/${b.id as string}/proofs/${other.affected_actions[0].id as string}`,
    );
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe(5);
  });
});

describe('the explorer', () => {
  it('answers 404 code 5 for a missing batch and 400 code 3 for a malformed id', async () => {
    const missing = await get('/batches/bat_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe(5);
    for (const url of [
      '/batches/nope',
      '/batches/obj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      '/batches/bat_01ARZ3NDEKTSV4RRFFQ69G5FAV/content',
      '/batches/bat_01ARZ3NDEKTSV4RRFFQ69G5FAV/proofs/x',
      '/batches?status=sealed',
      '/batches?limit=0',
    ]) {
      const res = await get(url);
      if (url.endsWith('/content')) {
        expect(res.statusCode, url).toBe(404);
        continue;
      }
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code, url).toBe(3);
    }
  });

  it('serves no content for a batch still building', async () => {
    const building = (await get('/batches?status=building')).json().batches[0];
    const res = await get(`/batches/${building.id as string}/content`);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe(5);
  });

  it('lists newest first with cursors, date filters and the status filter', async () => {
    const all = (await get('/batches?limit=100')).json().batches as {
      id: string;
      when_created: string;
    }[];
    const page1 = (await get('/batches?limit=2')).json();
    expect(page1.has_more).toBe(true);
    const page2 = (await get(`/batches?limit=2&next=${page1.next as string}`)).json();
    expect([...page1.batches, ...page2.batches].map((b: { id: string }) => b.id)).toEqual(
      all.slice(0, 4).map((b) => b.id),
    );
    const since = all[1]!.when_created;
    const recent = (
      await get(`/batches?limit=100&when_created[$gte]=${encodeURIComponent(since)}`)
    ).json();
    expect(recent.batches.length).toBeGreaterThanOrEqual(2);
    const building = (await get('/batches?status=building')).json().batches;
    expect(building).toHaveLength(1);
  });

  it('appears in /openapi.json', async () => {
    const doc = (await get('/openapi.json')).json();
    for (const path of [
      '/batches',
      '/batches/{batchId}',
      '/batches/{batchId}/content',
      '/batches/{batchId}/proofs/{actionId}',
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
  });
});

describe('the sealer worker', () => {
  it('closes the next full batch while a header is still being computed', async () => {
    await settle();
    let open = () => undefined as void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // Headers wait for the gate, as a header thread starved of CPU would.
    const headers = {
      compute: async (request, read) => {
        await gate;
        return computeHeader({ ...request, actions: await read() });
      },
    } as Pick<HeaderPool, 'compute'> as HeaderPool;
    const sealer = new BatchSealer({
      db: svc.container.db,
      clock: svc.clock,
      config: svc.config,
      prover: await serviceProver(),
      anchor: null,
      logger: svc.container.logger,
      saltKey: await serviceSaltKey(),
      headers,
    });
    const worker = new BatchSealerWorker(sealer, svc.container.logger, { idlePollMs: 10 });
    worker.start();
    try {
      const proving = async () =>
        (
          await svc.container.db.execute<{ n: number }>(
            sql`SELECT count(*)::int AS n FROM batches WHERE status = 'proving'`,
          )
        ).rows[0]!.n;
      await mintMany(MAX_ACTIONS);
      await expect.poll(proving, { timeout: 5_000 }).toBe(1);
      await mintMany(MAX_ACTIONS);
      // The first batch's header is held at the gate; the second still closes.
      await expect.poll(proving, { timeout: 5_000 }).toBe(2);
    } finally {
      open();
      await worker.stop();
    }
    await settle();
    expect(await chainProblems(svc.container.db)).toEqual([]);
  });
});

describe('the rest before a header', () => {
  it('reads a sealed batch only once it has rested BATCH_PROVE_DELAY_MS, 3 s by default', async () => {
    expect(loadConfig({}).batches.proveDelayMs).toBe(3_000);
    await settle();
    let reads = 0;
    const sealer = new BatchSealer({
      db: svc.container.db,
      clock: svc.clock,
      config: { ...svc.config, batches: { ...svc.config.batches, proveDelayMs: 3_000 } },
      prover: await serviceProver(),
      anchor: null,
      logger: svc.container.logger,
      saltKey: await serviceSaltKey(),
      headers: {
        compute: async (request, read) => {
          reads++;
          return computeHeader({ ...request, actions: await read() });
        },
      } as Pick<HeaderPool, 'compute'> as HeaderPool,
    });
    await mintMany(MAX_ACTIONS);
    expect(await sealer.openOrSeal()).toBe(true);
    expect([await sealer.proveSealed(), reads]).toEqual([0, 0]);
    svc.clock.advance(2_999);
    expect([await sealer.proveSealed(), reads]).toEqual([0, 0]);
    svc.clock.advance(1);
    expect([await sealer.proveSealed(), reads]).toEqual([1, 1]);
    expect(await chainProblems(svc.container.db)).toEqual([]);
  });
});

describe('status and fees', () => {
  it('finalizes a proven batch once its challenge window has passed', async () => {
    const b = (await get('/batches?status=proven&limit=1&order=desc')).json().batches[0];
    const end = Date.parse(b.challenge_window_end as string);
    const now = svc.clock.now().getTime();
    if (end > now + 1000) {
      svc.clock.advance(end - now - 1000);
      await settle();
      expect((await get(`/batches/${b.id as string}`)).json().status).toBe('proven');
    }
    svc.clock.advance(WINDOW_SECONDS * 1000);
    await settle();
    const done = (await get(`/batches/${b.id as string}`)).json();
    expect(done.status).toBe('finalized');
    expect(done.when_completed).toBe(svc.clock.now().toISOString());
  });

  it('prices the proving part by the recent average sealed batch size', async () => {
    const { rows } = await svc.container.db.execute<{ avg: number }>(
      sql`SELECT avg(actions_count)::float8 AS avg FROM (SELECT actions_count FROM batches
        WHERE status <> 'building' ORDER BY sequence DESC LIMIT ${svc.config.fees.windowBatches}) x`,
    );
    const avg = rows[0]!.avg;
    expect(avg).toBeLessThan(MAX_ACTIONS);
    svc.container.ebus.fees.invalidate();
    const fees = (await get('/public/network/fees')).json();
    const expected =
      (svc.config.fees.provingCostPerBatchWei * 1000n) / BigInt(Math.round(avg * 1000));
    expect(fees.proving_fee_wei).toBe(expected.toString());
    expect(BigInt(fees.proving_fee_wei)).toBeGreaterThan(
      svc.config.fees.provingCostPerBatchWei / BigInt(MAX_ACTIONS),
    );
  });

  it('fails a batch whose proving keeps failing, with the error, and keeps chaining', async () => {
    const failing = new BatchSealer({
      db: svc.container.db,
      clock: svc.clock,
      config: svc.config,
      prover: { prove: () => Promise.reject(new Error('prover is down')) },
      anchor: null,
      logger: svc.container.logger,
      saltKey: await serviceSaltKey(),
    });
    const signer = await createSigner(svc, { orgId: owner.orgId });
    await mintMany(1, signer);
    svc.clock.advance(MAX_SECONDS * 1000);
    await failing.openOrSeal();
    for (let i = 0; i < 12; i++) {
      await failing.proveSealed();
      svc.clock.advance(10 * 60_000);
    }
    const failed = (await get('/batches?status=failed')).json().batches;
    expect(failed).toHaveLength(1);
    expect(failed[0].error).toMatch(/prover is down/);
    expect(failed[0].hash).toMatch(/^0x[0-9a-f]{64}$/);
    // The next batch still chains to it.
    await mintMany(1, await createSigner(svc, { orgId: owner.orgId }));
    svc.clock.advance(MAX_SECONDS * 1000);
    await settle();
    const next = (await get('/batches?limit=100'))
      .json()
      .batches.find((b: { sequence: number }) => b.sequence === failed[0].sequence + 1);
    expect(next).toMatchObject({ status: 'proven', prev_hash: failed[0].hash });
  });
});
