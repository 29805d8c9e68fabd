import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLog } from '../../src/modules/log/wiring.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import {
  bytes,
  consistent,
  H,
  hex,
  mth,
  parseCheckpoint,
  rootFromInclusion,
  verifyWithVkey,
} from '../helpers/log.js';

/**
 * Issue 33 (docs/log.md): every applied action is a leaf of one RFC 6962 tree, in batch
 * order; a signed checkpoint per batch; tiles; proofs. The sealer runs when a test ticks it.
 */
let svc: TestService;
let owner: EoaSigner;
let publicTemplate: string;
let privateTemplate: string;
const nonces = new Map<string, number>();

const get = (url: string, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url, headers });

async function execute(signer: EoaSigner, params: Record<string, unknown>) {
  const n = nonces.get(signer.walletId) ?? 0;
  nonces.set(signer.walletId, n + 1);
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/actions',
    headers: signer.headers,
    payload: await signEoa(svc, signer, { name: 'mint', params, nonce: n }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ action: { id: string; hash: string } }>().action;
}

async function settle() {
  svc.clock.advance(11_000);
  for (let i = 0; i < 30 && (await svc.container.batches.sealer.tick()); i++);
}

/** Every logged action's leaf data in tree order, from the batches (not from the log). */
async function expectedLeaves(): Promise<{ id: string; leaf: Buffer; batch: number }[]> {
  const { rows } = await svc.container.db.execute<{ id: string; sequence: number }>(sql`
    SELECT id, sequence::int AS sequence FROM batches WHERE hash IS NOT NULL ORDER BY sequence`);
  const out: { id: string; leaf: Buffer; batch: number }[] = [];
  for (const b of rows) {
    for (const l of await svc.container.batches.explorer.logLeaves(b.id)) {
      out.push({ ...l, batch: b.sequence });
    }
  }
  return out;
}

async function checkpoint() {
  const res = await get('/log/checkpoint');
  expect(res.statusCode, res.body).toBe(200);
  return parseCheckpoint(res.body);
}

beforeAll(async () => {
  svc = await startTestService({
    env: { BATCH_MAX_ACTIONS: '3', BATCH_MAX_SECONDS: '10', BATCH_CHALLENGE_WINDOW_SECONDS: '60' },
  });
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  publicTemplate = await createTemplate(svc, owner.orgId);
  privateTemplate = await createTemplate(svc, owner.orgId, { isPublic: false });
  await settle();
  for (let i = 0; i < 7; i++) await execute(owner, { template_id: publicTemplate });
  await settle();
});
afterAll(async () => {
  await svc?.stop();
});

describe('one append-only tree', () => {
  it('holds every action of every sealed batch in batch order, and nothing else', async () => {
    const leaves = await expectedLeaves();
    expect(leaves).toHaveLength(7);
    expect(new Set(leaves.map((l) => l.batch)).size).toBeGreaterThanOrEqual(3);
    const cp = await checkpoint();
    expect(cp.size).toBe(7);
    expect(hex(cp.root)).toBe(hex(mth(leaves.map((l) => l.leaf))));
    // A public action's leaf is its action hash.
    const { rows } = await svc.container.db.execute<{ id: string; hash: string }>(
      sql`SELECT id, hash FROM action_logs`,
    );
    const hashOf = new Map(rows.map((r) => [r.id, r.hash]));
    for (const l of leaves) expect(hex(l.leaf)).toBe(hashOf.get(l.id));
  });

  it('gives each batch its tree size and each action record its log_index', async () => {
    const leaves = await expectedLeaves();
    const batches = (await get('/batches?limit=50')).json<{
      batches: { sequence: number; log_tree_size: number | null; actions_count: number }[];
    }>().batches;
    for (const b of batches.filter((x) => x.log_tree_size !== null)) {
      const upTo = leaves.filter((l) => l.batch <= b.sequence).length;
      expect(b.log_tree_size).toBe(upTo);
    }
    expect(batches.find((b) => b.log_tree_size === null && b.actions_count === 0)).toBeTruthy();
    const list = (await get('/ebus/action-logs?limit=50', owner.headers)).json<{
      action_logs: { id: string; log_index: number | null }[];
    }>().action_logs;
    for (const a of list) expect(a.log_index).toBe(leaves.findIndex((l) => l.id === a.id));
  });

  it('an action waits with log_index null until its batch is sealed into the log', async () => {
    const a = await execute(owner, { template_id: publicTemplate });
    const record = async () =>
      (await get(`/ebus/action-logs?id=${a.id}`, owner.headers)).json<{
        action_logs: { log_index: number | null }[];
      }>().action_logs[0]!;
    expect((await record()).log_index).toBeNull();
    await settle();
    expect((await record()).log_index).toBe(7);
    expect((await checkpoint()).size).toBe(8);
  });

  it("appends the leaves its batch's header was computed from, without reading them back", async () => {
    const explorer = svc.container.batches.explorer;
    const read = vi.spyOn(explorer, 'logLeaves');
    const before = (await checkpoint()).size;
    try {
      await execute(owner, { template_id: publicTemplate });
      await execute(owner, { template_id: privateTemplate });
      await execute(owner, { template_id: publicTemplate });
      await settle();
      expect(read).not.toHaveBeenCalled();
    } finally {
      read.mockRestore();
    }
    // The same leaves as read back from the batches, a private action's commitment included.
    const leaves = await expectedLeaves();
    const cp = await checkpoint();
    expect(cp.size).toBe(before + 3);
    expect(cp.size).toBe(leaves.length);
    expect(hex(cp.root)).toBe(hex(mth(leaves.map((l) => l.leaf))));
    const { rows } = await svc.container.db.execute<{ id: string; leaf: string }>(
      sql`SELECT action_id AS id, '0x' || encode(leaf, 'hex') AS leaf FROM log_entries
        ORDER BY log_index`,
    );
    expect(rows.map((r) => [r.id, r.leaf])).toEqual(leaves.map((l) => [l.id, hex(l.leaf)]));
  });

  it('back-fills batches sealed before the log existed, in sequence order, to the same root', async () => {
    const before = await checkpoint();
    const db = svc.container.db;
    await db.execute(sql`DELETE FROM log_entries`);
    await db.execute(sql`DELETE FROM log_tiles`);
    await db.execute(sql`DELETE FROM log_checkpoints`);
    await db.execute(sql`UPDATE batches SET log_tree_size = NULL`);
    expect((await get('/log/checkpoint')).statusCode).toBe(404);
    // No header to write: an idle sealer lets the log look every 500 ms.
    await new Promise((r) => setTimeout(r, 600));
    await settle();
    const after = await checkpoint();
    expect(after.size).toBe(before.size);
    expect(after.root.equals(before.root)).toBe(true);
  });

  it('appends each batch once when several processes append at the same time', async () => {
    const other = await createLog({
      db: svc.container.db,
      clock: svc.clock,
      config: svc.config,
      logger: svc.container.logger,
      leaves: svc.container.batches.explorer,
    });
    for (let i = 0; i < 4; i++) await execute(owner, { template_id: publicTemplate });
    svc.clock.advance(11_000);
    // Seal and write headers without the log, then let two logs race for them.
    const sealer = svc.container.batches.sealer;
    for (let i = 0; i < 10; i++) await sealer.openOrSeal();
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM batches WHERE status = 'proving'`,
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
    await sealer.proveSealed();
    await Promise.all([svc.container.log.append(), other.append(), other.append()]);
    await settle();
    const leaves = await expectedLeaves();
    const cp = await checkpoint();
    expect(cp.size).toBe(leaves.length);
    expect(cp.root.equals(mth(leaves.map((l) => l.leaf)))).toBe(true);
    const { rows: dup } = await svc.container.db.execute<{ n: number; d: number }>(
      sql`SELECT count(*)::int AS n, count(DISTINCT action_id)::int AS d FROM log_entries`,
    );
    expect(dup[0]).toEqual({ n: leaves.length, d: leaves.length });
  });
});

describe('signed checkpoints', () => {
  it('is a C2SP checkpoint binding the batch, signed by the key /public/network publishes', async () => {
    const res = await get('/log/checkpoint');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    const cp = parseCheckpoint(res.body);
    expect(cp.origin).toBe('localhost:8080');
    const { rows } = await svc.container.db.execute<{ sequence: number; hash: string }>(sql`
      SELECT sequence::int AS sequence, hash FROM batches WHERE hash IS NOT NULL
      ORDER BY sequence DESC LIMIT 1`);
    expect(cp.extension).toBe(`ons-batch ${rows[0]!.sequence} ${rows[0]!.hash}`);
    expect(res.body).toBe(
      `${cp.body}\n\u2014 localhost:8080 ${cp.signatures[0]!.bytes.toString('base64')}\n`,
    );
    const network = (await get('/public/network')).json<{
      log: { origin: string; verifier_key: string; witnesses: unknown[] };
    }>();
    expect(network.log.origin).toBe('localhost:8080');
    expect(network.log.witnesses).toEqual([]);
    expect(network.log.verifier_key).toMatch(/^localhost:8080\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(cp.signatures).toHaveLength(1);
    expect(verifyWithVkey(cp.body, cp.signatures[0]!, network.log.verifier_key)).toBe(true);
    expect(
      verifyWithVkey(
        cp.body.replace(/\n\d+\n/, '\n1\n'),
        cp.signatures[0]!,
        network.log.verifier_key,
      ),
    ).toBe(false);
  });

  it('every instance signs with the one key the first instance stored', async () => {
    const other = await createLog({
      db: svc.container.db,
      clock: svc.clock,
      config: svc.config,
      logger: svc.container.logger,
      leaves: svc.container.batches.explorer,
    });
    expect(other.network().verifier_key).toBe(svc.container.log.network().verifier_key);
  });
});

describe('private actions', () => {
  it('are in the log as their batch commitment, never their action hash', async () => {
    const a = await execute(owner, { template_id: privateTemplate });
    await settle();
    const leaves = await expectedLeaves();
    const leaf = leaves.find((l) => l.id === a.id)!;
    expect(hex(leaf.leaf)).not.toBe(a.hash);
    const cp = await checkpoint();
    expect(cp.root.equals(mth(leaves.map((l) => l.leaf)))).toBe(true);
    const byHash = await get(`/log/proof/inclusion?hash=${a.hash}&size=${cp.size}`);
    expect(byHash.statusCode).toBe(404);
    expect(byHash.json()).toMatchObject({ code: 5 });
    const byLeaf = await get(`/log/proof/inclusion?hash=${hex(leaf.leaf)}&size=${cp.size}`);
    expect(byLeaf.statusCode).toBe(200);
    const { rows } = await svc.container.db.execute<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM log_entries WHERE leaf = decode(${a.hash.slice(2)}, 'hex')`);
    expect(rows[0]!.n).toBe(0);
  });
});

describe('proofs', () => {
  it('serves inclusion proofs for every entry and size, within ⌈log₂ n⌉, that verify', async () => {
    const leaves = await expectedLeaves();
    const n = leaves.length;
    for (let size = 1; size <= n; size++) {
      const root = mth(leaves.slice(0, size).map((l) => l.leaf));
      for (let i = 0; i < size; i++) {
        const res = await get(`/log/proof/inclusion?hash=${hex(leaves[i]!.leaf)}&size=${size}`);
        expect(res.statusCode, res.body).toBe(200);
        const p = res.json<{
          log_index: number;
          tree_size: number;
          leaf_hash: string;
          proof: string[];
        }>();
        expect(p).toMatchObject({ log_index: i, tree_size: size });
        expect(p.leaf_hash).toBe(hex(H(Buffer.of(0), leaves[i]!.leaf)));
        expect(p.proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)));
        const got = rootFromInclusion(i, size, bytes(p.leaf_hash), p.proof.map(bytes));
        expect(got && hex(got)).toBe(hex(root));
      }
    }
  });

  it('serves consistency proofs between every two sizes, within ⌈log₂ n⌉ + 1, that verify', async () => {
    const leaves = (await expectedLeaves()).map((l) => l.leaf);
    const n = leaves.length;
    for (let m = 1; m <= n; m++) {
      for (let k = m; k <= n; k++) {
        const res = await get(`/log/proof/consistency?from=${m}&to=${k}`);
        expect(res.statusCode, res.body).toBe(200);
        const p = res.json<{ from: number; to: number; proof: string[] }>();
        expect(p.proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(k)) + 1);
        const ok = consistent(
          m,
          k,
          p.proof.map(bytes),
          mth(leaves.slice(0, m)),
          mth(leaves.slice(0, k)),
        );
        expect(ok, `${m}→${k}`).toBe(true);
      }
    }
  });

  it('refuses bad input with the flat error body', async () => {
    const size = (await checkpoint()).size;
    const leaf = hex((await expectedLeaves())[0]!.leaf);
    const cases: [string, number, number][] = [
      [`/log/proof/inclusion?hash=${leaf}&size=${size + 1}`, 400, 3],
      [`/log/proof/inclusion?hash=0x${'ab'.repeat(32)}&size=${size}`, 404, 5],
      [`/log/proof/inclusion?hash=0x1234&size=1`, 400, 3],
      [`/log/proof/inclusion?hash=${leaf}&size=0`, 400, 3],
      [`/log/proof/inclusion?hash=${leaf}`, 400, 3],
      [`/log/proof/inclusion?hash=${leaf}&size=-1`, 400, 3],
      [`/log/proof/inclusion?hash=${leaf}&size=99999999999999999999`, 400, 3],
      [`/log/proof/consistency?from=0&to=${size}`, 400, 3],
      [`/log/proof/consistency?from=3&to=2`, 400, 3],
      [`/log/proof/consistency?from=1&to=${size + 1}`, 400, 3],
      [`/log/proof/consistency?from=a&to=2`, 400, 3],
    ];
    for (const [url, status, code] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(status);
      expect(res.json(), url).toMatchObject({ code, message: expect.any(String) });
    }
  });
});

describe('tiles', () => {
  it('serves the partial level-0 tile and entry bundle, short-lived; nothing beyond the tree', async () => {
    const leaves = (await expectedLeaves()).map((l) => l.leaf);
    const n = leaves.length;
    const tile = await get(`/log/tile/0/000.p/${n}`);
    expect(tile.statusCode).toBe(200);
    expect(tile.headers['content-type']).toBe('application/octet-stream');
    expect(tile.headers['cache-control']).toBe('public, max-age=1');
    expect(tile.rawPayload.equals(Buffer.concat(leaves.map((l) => H(Buffer.of(0), l))))).toBe(true);
    const entries = await get(`/log/tile/entries/000.p/${n}`);
    expect(entries.statusCode).toBe(200);
    expect(
      entries.rawPayload.equals(
        Buffer.concat(leaves.map((l) => Buffer.concat([Buffer.of(0, 32), l]))),
      ),
    ).toBe(true);
    // A smaller partial tile is the start of the same bytes (a mirror of an older size).
    const small = await get(`/log/tile/0/000.p/2`);
    expect(small.rawPayload.equals(tile.rawPayload.subarray(0, 64))).toBe(true);
    for (const url of [
      `/log/tile/0/000.p/${n + 1}`,
      '/log/tile/0/000',
      '/log/tile/entries/000',
      '/log/tile/1/000.p/1',
      '/log/tile/0/001.p/1',
      '/log/tile/0/0',
      '/log/tile/0/000.p/0',
      '/log/tile/0/000.p/256',
      '/log/tile/7/000',
      '/log/tile/../000',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ code: 5 });
    }
  });
});
