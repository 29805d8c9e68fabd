/**
 * Proof generation on a 10⁷-leaf transparency log (issue 33 item 4; docs/log.md, "Proofs";
 * docs/performance.md, "Transparency log proofs").
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/log-proofs.ts [leaves]
 *
 * 1. Seeds a synthetic log of `leaves` (argument, else LOG_BENCH_LEAVES, else 10,000,000;
 *    `1e6` works) into a scratch database (bench/scratch-database.ts: on DATABASE_URL's server,
 *    else an embedded PostgreSQL): the log_entries and log_tiles rows the log's append writes
 *    (bench/log-seed.ts), then a checkpoint signed with the root the seeder computed, checked
 *    equal to the one the log's code reads from the tiles.
 * 2. Starts the service on that database (no workers) and times BENCH_RUNS (500) inclusion
 *    proofs of random entries in the whole tree (the lookup by hash included) and as many
 *    consistency proofs between random sizes m ≤ n ≤ leaves: first through the log service
 *    as the routes call it, then through the routes over HTTP (loopback, one connection).
 *    Prints p50 / p99 / max, this process's CPU per proof (over HTTP: the client's included)
 *    and the proof lengths against ⌈log₂ n⌉ (inclusion) and ⌈log₂ n⌉ + 1 (consistency).
 * 3. Verifies, with the SDK's verifier (sdk/src/log/), the checkpoint's signature, 100 of the
 *    inclusion proofs and the consistency proofs between ~20 sizes whose roots the seeder
 *    computed without the database. Exits 1 when any check fails.
 *
 * LOG_BENCH_KEEP=1 keeps the scratch database (on DATABASE_URL's server; its URL is printed);
 * LOG_BENCH_DATABASE_URL=<that URL> times an already seeded one again (no seeding; the
 * consistency checks then use the log's own roots).
 */
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../src/db/pool.js';
import { createLogger } from '../src/http/logger.js';
import { systemClock } from '../src/lib/clock.js';
import { rootAt } from '../src/modules/log/hashes.js';
import { checkpointBody, NoteSigner, privateKeyOfSeed } from '../src/modules/log/note.js';
import { latestCheckpoint, saveCheckpoint } from '../src/modules/log/repo.js';
import { ceilLog2 } from '../src/modules/log/tree.js';
import { createService } from '../src/server.js';
import { verifyCheckpoint } from '../sdk/src/log/checkpoint.js';
import {
  leafHash as sdkLeafHash,
  verifyConsistencyProof,
  verifyInclusionProof,
} from '../sdk/src/log/tree.js';
import { syntheticLeaf } from '../test/helpers/synthetic-log.js';
import { seedSyntheticLog } from './log-seed.js';
import { median, scratchDatabase } from './scratch-database.js';

const N = Math.floor(Number(process.argv[2] ?? process.env.LOG_BENCH_LEAVES ?? 1e7));
const RUNS = Math.min(5_000, Number(process.env.BENCH_RUNS ?? 500));
// An embedded PostgreSQL stops with this process: only a server's database can be kept.
const KEEP =
  process.env.LOG_BENCH_KEEP === '1' &&
  Boolean(process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL);
const REUSE = process.env.LOG_BENCH_DATABASE_URL || null;
if (!(N >= 2 && N <= 2 ** 40)) throw new Error(`leaves must be 2 … 2^40, got ${N}`);

const ORIGIN = 'bench.example';
const SEED = Buffer.alloc(32, 9);
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
const bytes = (h: string) => Buffer.from(h.slice(2), 'hex');
const pct = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const ms = (v: number) => Number(v.toFixed(2));
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const stats = (v: number[]) => ({
  p50: ms(median(v)),
  p99: ms(pct(v, 0.99)),
  max: ms(Math.max(...v)),
});

/** A fixed pseudo-random sequence (mulberry32): a run is reproducible. */
let state = 0x10_6b_e7c4;
function rand(n: number): number {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
}

const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok && failures.length < 20) failures.push(what);
};

// Sizes whose roots the seeder computes on its own: consistency proofs between them are
// checked against roots the log's code never touched.
const SIZES = [
  ...new Set([1, 2, 255, 256, 257, 65_536, 65_537, N - 1, N].filter((s) => s >= 1 && s <= N)),
];
while (SIZES.length < 20) SIZES.push(1 + rand(N));

const scratch = REUSE ? null : await scratchDatabase();
const url = REUSE ?? scratch!.url;
const config = loadConfig({
  DATABASE_URL: url,
  LOG_LEVEL: 'warn',
  PORT: '0',
  HOST: '127.0.0.1',
  RATE_LIMIT_ENABLED: 'false',
  LOG_ORIGIN: ORIGIN,
  LOG_SIGNING_KEY: SEED.toString('hex'),
});
const database = createDatabase(url, Math.max(4, config.dbPoolSize));
const report: Record<string, unknown> = { leaves: N, runs: RUNS };
try {
  await migrate(database.pool);
  const db = database.db;
  let roots = new Map<number, Buffer>();
  if (!REUSE) {
    console.error(`seeding ${N} leaves into ${new URL(url).pathname.slice(1)}…`);
    const seeded = await seedSyntheticLog(database.pool, N, SIZES, (l) => console.error(l));
    roots = seeded.roots;
    report.seed_seconds = seeded.seconds;
    console.error(`seeded in ${seeded.seconds.total} s`);
    const signer = new NoteSigner(ORIGIN, privateKeyOfSeed(SEED));
    const root = roots.get(N)!;
    const note = signer.sign(
      checkpointBody(ORIGIN, N, root, { sequence: 1, hash: `0x${'00'.repeat(32)}` }),
    );
    await db.transaction((tx) =>
      saveCheckpoint(tx, {
        sequence: 1,
        batchId: 'bat_bench',
        size: N,
        root,
        note,
        now: new Date(),
      }),
    );
  } else {
    const cp = await latestCheckpoint(db);
    if (cp?.tree_size !== N) throw new Error(`that database's log has ${cp?.tree_size} leaves`);
  }
  // The log's own reading of the root from the tiles, against the seeder's.
  let t = performance.now();
  const root = await rootAt(db, N);
  report.root_ms = ms(performance.now() - t);
  if (REUSE) roots.set(N, root);
  check(
    root.equals(roots.get(N)!),
    `the root read from the tiles ${hex(root)} is not the seeder's`,
  );
  for (const [size, r] of roots) {
    check(
      (await rootAt(db, size)).equals(r),
      `the root at ${size} read from the tiles is not the seeder's`,
    );
  }

  const service = await createService({
    config,
    database,
    clock: systemClock,
    logger: createLogger('warn'),
  });
  const address = await service.app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const log = service.container.log;
    const network = (await (await fetch(`${address}/public/network`)).json()) as {
      log: { verifier_key: string };
    };
    const checked = await verifyCheckpoint(
      await (await fetch(`${address}/log/checkpoint`)).text(),
      {
        logKey: network.log.verifier_key,
      },
    );
    check(checked.ok && checked.checkpoint?.size === N, `checkpoint: ${checked.errors.join('; ')}`);
    check(
      hex(checked.checkpoint?.root ?? new Uint8Array()) === hex(roots.get(N)!),
      'checkpoint root',
    );

    const incl = ceilLog2(N);
    const inclusionCase = () => rand(N);
    const consistencyCase = () => {
      const n = 1 + rand(N);
      return [1 + rand(n), n] as const;
    };
    const http = async <T>(path: string): Promise<T> => {
      const res = await fetch(address + path);
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    type Incl = { log_index: number; leaf_hash: string; proof: string[] };
    type Cons = { proof: string[] };
    const inclusionVia = {
      service: (i: number) => log.inclusion(hex(syntheticLeaf(i)), N),
      http: (i: number) =>
        http<Incl>(`/log/proof/inclusion?hash=${hex(syntheticLeaf(i))}&size=${N}`),
    };
    const consistencyVia = {
      service: (m: number, n: number) => log.consistency(m, n),
      http: (m: number, n: number) => http<Cons>(`/log/proof/consistency?from=${m}&to=${n}`),
    };
    console.error(
      `timing ${RUNS} inclusion and ${RUNS} consistency proofs, through the service then over HTTP…`,
    );
    report.load_average_before = loadavg().map((l) => ms(l));
    for (const via of ['service', 'http'] as const) {
      // Warm-up: the first requests load the code paths and the tiles' pages.
      for (let k = 0; k < 20; k++) {
        await inclusionVia[via](inclusionCase());
        await consistencyVia[via](...consistencyCase());
      }
      const inclusion: number[] = [];
      let inclusionMax = 0;
      let cpu = process.cpuUsage();
      const toVerify: { index: number; answer: Incl }[] = [];
      for (let k = 0; k < RUNS; k++) {
        const index = inclusionCase();
        t = performance.now();
        const answer = await inclusionVia[via](index);
        inclusion.push(performance.now() - t);
        inclusionMax = Math.max(inclusionMax, answer.proof.length);
        check(answer.log_index === index, `inclusion of ${index}: log_index ${answer.log_index}`);
        check(answer.proof.length <= incl, `inclusion of ${index}: ${answer.proof.length} hashes`);
        if (toVerify.length < 50) toVerify.push({ index, answer });
      }
      const inclusionCpu = cpuMs(process.cpuUsage(cpu)) / RUNS;
      cpu = process.cpuUsage();
      const consistency: number[] = [];
      let consistencyMax = 0;
      for (let k = 0; k < RUNS; k++) {
        const [m, n] = consistencyCase();
        t = performance.now();
        const answer = await consistencyVia[via](m, n);
        consistency.push(performance.now() - t);
        consistencyMax = Math.max(consistencyMax, answer.proof.length);
        check(
          answer.proof.length <= ceilLog2(n) + 1,
          `consistency ${m}→${n}: ${answer.proof.length}`,
        );
      }
      const consistencyCpu = cpuMs(process.cpuUsage(cpu)) / RUNS;
      for (const { index, answer } of toVerify) {
        const leaf = sdkLeafHash(syntheticLeaf(index));
        check(answer.leaf_hash === hex(leaf), `inclusion of ${index}: leaf hash`);
        check(
          verifyInclusionProof(index, N, leaf, answer.proof.map(bytes), roots.get(N)!),
          `inclusion of ${index} (${via}) does not verify`,
        );
      }
      report[via] = {
        inclusion_ms: { ...stats(inclusion), cpu_per_proof: ms(inclusionCpu) },
        inclusion_max_hashes: inclusionMax,
        consistency_ms: { ...stats(consistency), cpu_per_proof: ms(consistencyCpu) },
        consistency_max_hashes: consistencyMax,
        verified_inclusion_proofs: toVerify.length,
      };
    }
    report.load_average_after = loadavg().map((l) => ms(l));
    report.bound_hashes = { inclusion: incl, consistency: incl + 1 };

    // Consistency between every two sizes whose roots the seeder computed.
    const sizes = [...roots.keys()].sort((a, b) => a - b);
    let pairs = 0;
    for (let a = 0; a < sizes.length; a++) {
      for (let b = a; b < sizes.length; b++) {
        const [m, n] = [sizes[a]!, sizes[b]!];
        const { proof } = await consistencyVia.http(m, n);
        check(
          verifyConsistencyProof(m, n, proof.map(bytes), roots.get(m)!, roots.get(n)!),
          `consistency ${m}→${n} does not verify`,
        );
        pairs++;
      }
    }
    report.verified_consistency_proofs = pairs;
  } finally {
    await service.close();
  }
  report.checks = failures.length === 0 ? 'all passed' : failures;
  console.log(JSON.stringify(report, null, 2));
  if (KEEP && scratch) console.error(`kept: LOG_BENCH_DATABASE_URL=${url}`);
} finally {
  await database.close();
  if (scratch && !KEEP) await scratch.drop();
}
if (failures.length > 0) process.exit(1);
