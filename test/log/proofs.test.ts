import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendLeaf,
  emptyFrontier,
  frontierRoot,
  leafHash as sdkLeafHash,
  verifyConsistencyProof,
  verifyInclusionProof,
} from '../../sdk/src/log/tree.js';
import { extendTiles, rootAt } from '../../src/modules/log/hashes.js';
import { checkpointBody, NoteSigner, privateKeyOfSeed } from '../../src/modules/log/note.js';
import { saveCheckpoint } from '../../src/modules/log/repo.js';
import { bytes, H, hex } from '../helpers/log.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { insertSyntheticEntries, syntheticLeaf } from '../helpers/synthetic-log.js';

/**
 * Issue 33, items 3 and 4 at a size where every tile level matters: a synthetic log of
 * 70,000 leaves (past 256² = 65,536, so level-2 nodes exist), appended by the log's own tile
 * code in uneven steps as batches would, then every proof the service serves for random sizes
 * checked with the SDK's verifier (a second implementation) against roots the SDK computes
 * from the leaves alone.
 */
const N = 70_000;
let svc: TestService;
/** Root of each sampled prefix size, from the SDK's frontier (never the service's tiles). */
const roots = new Map<number, Uint8Array>();
/** A fixed pseudo-random sequence: a failure reproduces. */
let seed = 0x5eed;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const sizes: number[] = [1, 2, 3, 255, 256, 257, 65_535, 65_536, 65_537, N];
for (let i = 0; i < 20; i++) sizes.push(1 + rand(N));

const get = (url: string) => svc.app.inject({ method: 'GET', url });

beforeAll(async () => {
  svc = await startTestService();
  const db = svc.container.db;
  await insertSyntheticEntries(db, 0, N);
  // The tiles, as the log's append writes them, one uneven "batch" at a time.
  let at = 0;
  while (at < N) {
    const end = Math.min(N, at + 1 + rand(3_000));
    await db.transaction((tx) => extendTiles(tx, at, end));
    at = end;
  }
  const root = await rootAt(db, N);
  const signer = new NoteSigner('localhost:8080', privateKeyOfSeed(Buffer.alloc(32, 1)));
  const note = signer.sign(
    checkpointBody('localhost:8080', N, root, { sequence: 1, hash: `0x${'00'.repeat(32)}` }),
  );
  await db.transaction((tx) =>
    saveCheckpoint(tx, {
      sequence: 1,
      batchId: 'bat_synthetic',
      size: N,
      root,
      note,
      now: svc.clock.now(),
    }),
  );
  const want = new Set(sizes);
  const f = emptyFrontier();
  for (let i = 0; i < N; i++) {
    appendLeaf(f, sdkLeafHash(syntheticLeaf(i)));
    if (want.has(i + 1)) roots.set(i + 1, frontierRoot(f));
  }
}, 120_000);
afterAll(async () => {
  await svc?.stop();
});

describe('a 70,000-leaf log', () => {
  it('has the root the SDK computes from the leaves', async () => {
    expect(hex(await rootAt(svc.container.db, N))).toBe(hex(roots.get(N)!));
  });

  it('serves inclusion proofs for random entries and sizes that the SDK verifies, within ⌈log₂ n⌉', async () => {
    for (const size of sizes) {
      for (const index of [0, size - 1, rand(size), rand(size)]) {
        const res = await get(
          `/log/proof/inclusion?hash=${hex(syntheticLeaf(index))}&size=${size}`,
        );
        expect(res.statusCode, res.body).toBe(200);
        const p = res.json<{ log_index: number; leaf_hash: string; proof: string[] }>();
        expect(p.log_index).toBe(index);
        expect(p.proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)));
        const ok = verifyInclusionProof(
          index,
          size,
          bytes(p.leaf_hash),
          p.proof.map(bytes),
          roots.get(size)!,
        );
        expect(ok, `${index} in ${size}`).toBe(true);
      }
    }
  });

  it('serves consistency proofs between random sizes that the SDK verifies, within ⌈log₂ n⌉ + 1', async () => {
    const sorted = [...new Set(sizes)].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i++) {
      for (const j of [i, i + 1, sorted.length - 1, i + rand(sorted.length - i)]) {
        const [m, n] = [sorted[i]!, sorted[Math.min(j, sorted.length - 1)]!];
        const res = await get(`/log/proof/consistency?from=${m}&to=${n}`);
        expect(res.statusCode, res.body).toBe(200);
        const proof = res.json<{ proof: string[] }>().proof.map(bytes);
        expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)) + 1);
        expect(verifyConsistencyProof(m, n, proof, roots.get(m)!, roots.get(n)!), `${m}→${n}`).toBe(
          true,
        );
      }
    }
  });

  it('serves full tiles as immutable bytes: level 0, level 1 and an entry bundle', async () => {
    const leafHashes = Array.from({ length: 256 }, (_, i) =>
      H(Buffer.of(0), syntheticLeaf(256 + i)),
    );
    const t0 = await get('/log/tile/0/001');
    expect(t0.statusCode).toBe(200);
    expect(t0.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(t0.rawPayload.equals(Buffer.concat(leafHashes))).toBe(true);
    const e = await get('/log/tile/entries/001');
    expect(e.rawPayload.length).toBe(256 * 34);
    expect(
      e.rawPayload.subarray(0, 34).equals(Buffer.concat([Buffer.of(0, 32), syntheticLeaf(256)])),
    ).toBe(true);
    // Level 1, tile 0: the roots of the first 256 level-0 tiles; its 2nd hash is tile 0/001's root.
    const t1 = await get('/log/tile/1/000');
    expect(t1.statusCode).toBe(200);
    expect(t1.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    let level = leafHashes;
    while (level.length > 1) {
      const up: Buffer[] = [];
      for (let i = 0; i < level.length; i += 2) up.push(H(Buffer.of(1), level[i]!, level[i + 1]!));
      level = up;
    }
    expect(t1.rawPayload.subarray(32, 64).equals(level[0]!)).toBe(true);
    // Level 1's next tile is partial (70,000 leaves: 273 level-8 nodes, 17 past the first 256).
    expect((await get('/log/tile/1/001')).statusCode).toBe(404);
    const p = await get('/log/tile/1/001.p/17');
    expect(p.statusCode).toBe(200);
    expect(p.headers['cache-control']).toBe('public, max-age=1');
    expect((await get('/log/tile/2/000.p/1')).statusCode).toBe(200);
    expect((await get('/log/tile/2/000.p/2')).statusCode).toBe(404);
  });

  it('stores no tile twice and no node past the tree', async () => {
    const { rows } = await svc.container.db.execute<{ level: number; n: number; len: number }>(sql`
      SELECT level, count(*)::int AS n, sum(length(data))::int AS len FROM log_tiles
      GROUP BY level ORDER BY level`);
    expect(rows).toEqual([
      { level: 1, n: 2, len: Math.floor(N / 256) * 32 },
      { level: 2, n: 1, len: 32 },
    ]);
  });
});
