/**
 * Transaction batch benchmark (issue 16 item 10). Real PostgreSQL, durable commits.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/batches.ts
 *
 * Prints in one run:
 *  (1) sealing: a building batch of BENCH_SEAL_ACTIONS (1,000) logged actions, each on its own
 *      object, is closed and its header, content (RFC 8785 JSON, CIDv1) and Ed25519
 *      attestation written — the sealer's two steps, timed from outside; BENCH_SEAL_RUNS (7)
 *      runs, median and max.
 *  (2) the event bus, POST /ebus/execute, 50 connections (one wallet each), alternately on a
 *      service with batches on (the default: every action joins a batch, the sealer runs in
 *      the process) and one with BATCHES_ENABLED=false, each on its own database,
 *      BENCH_PHASE_SECONDS (8) each, BENCH_ROUNDS (3, at most 30) rounds alternating which
 *      goes first (ABBAAB): actions/s of each and the ratio of the means with its standard
 *      error (from the rounds' own ratios, which scatter by several per cent on a 2-core
 *      machine: more rounds narrow it), and the CPU per action of each
 *      side (its service process and the PostgreSQL server), which load from other work on
 *      the machine disturbs far less than throughput.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase, type Database } from '../src/db/pool.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { createBatches } from '../src/modules/batches/wiring.js';
import {
  alternate,
  benchSessions,
  loadPhase,
  makeBenchOrg,
  presign,
  startBenchService,
  type BenchOrg,
} from './ebus-load.js';
import { machineIdle, mainBusy, postmasterOf, sampleCpu } from './cpu-account.js';
import { median, scratchDatabase } from './scratch-database.js';
import { spread } from './stats.js';

const SEAL_ACTIONS = Math.min(10_000, Number(process.env.BENCH_SEAL_ACTIONS ?? 1000));
const SEAL_RUNS = Math.min(20, Number(process.env.BENCH_SEAL_RUNS ?? 7));
const PHASE_S = Math.min(15, Number(process.env.BENCH_PHASE_SECONDS ?? 8));
const CONNECTIONS = 50;
const ROUNDS = Math.min(30, Number(process.env.BENCH_ROUNDS ?? 3));
// Enough presigned actions for ~6,000 actions/s over every phase of a side.
const PER_WALLET = Math.ceil((6_000 * PHASE_S) / CONNECTIONS) * ROUNDS;
const WARM_UP = 40;

if (process.env.BENCH_DATABASE_URL) process.env.DATABASE_URL = process.env.BENCH_DATABASE_URL;

const hex32 = () => `0x${randomBytes(32).toString('hex')}`;

/** Logs `n` actions as the group statement would, in the building batch. */
async function logActions(database: Database, org: BenchOrg, n: number) {
  const w = org.wallets[0]!;
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId('action'),
    hash: hex32(),
    nonce: i,
    object_id: newId('object'),
    integrity_hash: hex32(),
    signature: `0x${randomBytes(65).toString('hex')}`,
  }));
  const { rows: wallet } = await database.db.execute<{ id: string }>(
    sql`SELECT id FROM wallets WHERE address = ${w.address}`,
  );
  await database.db.execute(sql`
    INSERT INTO action_logs (id, organization_id, hash, name, wallet_id, wallet, signature_type,
      signature, nonce, params, expires, object_id, template_id, fee_wei, batch_id,
      prev_integrity_hash, integrity_hash, created_at)
    SELECT r.id, ${org.orgId}, r.hash, 'mint', ${wallet[0]!.id}, ${w.address}, 'eoa',
      to_jsonb(r.signature), r.nonce + (SELECT coalesce(max(nonce) + 1, 0) FROM action_logs),
      jsonb_build_object('template_id', ${org.templateId}::text), ${new Date().toISOString()},
      r.object_id, ${org.templateId}, 1100000000000000,
      (SELECT id FROM batches WHERE status = 'building'), ${`0x${'0'.repeat(64)}`},
      r.integrity_hash, now()
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id text, hash text,
      nonce int, object_id text, integrity_hash text, signature text)`);
}

async function sealing() {
  const scratch = await scratchDatabase();
  const database = createDatabase(scratch.url, 4);
  try {
    await migrate(database.pool);
    const config = loadConfig({
      DATABASE_URL: scratch.url,
      BATCH_MAX_ACTIONS: String(SEAL_ACTIONS),
      BATCH_MAX_SECONDS: '3600',
      // The sealing work itself, without the rest a sealed batch takes before its header.
      BATCH_PROVE_DELAY_MS: '0',
    });
    const batches = await createBatches({
      db: database.db,
      clock: systemClock,
      config,
      logger: pino({ level: 'warn' }),
      databaseUrl: scratch.url,
    });
    const sessions = await benchSessions(database, 'http://127.0.0.1:1');
    const org = await makeBenchOrg(database, sessions, 1);
    await batches.sealer.openOrSeal();
    const close: number[] = [];
    const prove: number[] = [];
    for (let run = 0; run < SEAL_RUNS; run++) {
      await logActions(database, org, SEAL_ACTIONS);
      const t0 = performance.now();
      if (!(await batches.sealer.openOrSeal())) throw new Error('the batch did not seal');
      const t1 = performance.now();
      if ((await batches.sealer.proveSealed()) !== 1) throw new Error('the batch was not proven');
      const t2 = performance.now();
      close.push(t1 - t0);
      prove.push(t2 - t1);
    }
    const total = close.map((c, i) => c + prove[i]!);
    const { rows } = await database.db.execute<{ id: string; n: number }>(sql`
      SELECT id, actions_count AS n FROM batches
      WHERE status = 'proven' ORDER BY sequence DESC LIMIT 1`);
    const bytes = (await batches.explorer.content(rows[0]!.id)).length;
    const ms = (x: number) => `${x.toFixed(1)} ms`;
    console.log(
      `(1) sealing a batch of ${rows[0]!.n} actions (content ${Math.round(bytes / 1024)} KiB), ${SEAL_RUNS} runs: close ${ms(median(close))} median; header + content + attestation ${ms(median(prove))} median; total ${ms(median(total))} median, ${ms(Math.max(...total))} max`,
    );
  } finally {
    await database.close();
    await scratch.drop();
  }
}

/** One service on its own database with its organization's presigned lanes. */
async function serviceWith(env: Record<string, string>) {
  const scratch = await scratchDatabase();
  const database = createDatabase(scratch.url, 4);
  await migrate(database.pool);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const sessions = await benchSessions(database, `http://127.0.0.1:${port}`);
  const org = await makeBenchOrg(database, sessions, CONNECTIONS);
  const lanes = org.wallets.map((w) => ({
    w,
    bodies: presign(w, org.templateId, 0, PER_WALLET + WARM_UP),
  }));
  const child: ChildProcess = await startBenchService(port, scratch.url, env);
  const { rows } = await database.db.execute<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`);
  return {
    port,
    lanes,
    database,
    pid: child.pid!,
    postmaster: postmasterOf(rows[0]!.pid),
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await database.close();
      await scratch.drop();
    },
  };
}

async function eventBus() {
  // BENCH_ON_ENV and BENCH_OFF_ENV (JSON) add settings to a side, to take its cost apart.
  const envOf = (name: string) => JSON.parse(process.env[name] ?? '{}') as Record<string, string>;
  const on = await serviceWith(envOf('BENCH_ON_ENV'));
  const off = await serviceWith({
    ...envOf('BENCH_OFF_ENV'),
    BATCHES_ENABLED: 'false',
    BATCH_SEALER: 'false',
  });
  try {
    for (const s of [on, off]) {
      await loadPhase(
        s.port,
        s.lanes.map((l) => ({ w: l.w, bodies: l.bodies.splice(0, WARM_UP) })),
        60,
      );
    }
    const load0 = os.loadavg()[0]!.toFixed(2);
    const withBatches: number[] = [];
    const without: number[] = [];
    // CPU per action of each side (service and the PostgreSQL server, summed over its phases),
    // which other work on the machine disturbs far less than throughput.
    const cpu = {
      on: { svc: 0, pg: 0, n: 0, busy: [] as number[], idle: [] as number[] },
      off: { svc: 0, pg: 0, n: 0, busy: [] as number[], idle: [] as number[] },
    };
    const phase = async (s: typeof on, side: 'on' | 'off') => {
      // Every phase starts from a fresh checkpoint. At this rate the server's own checkpoints
      // (max_wal_size) come every ~45 s, and the full pages written after one slow whichever
      // side runs then; started this way, no phase meets one and each pays the same.
      await s.database.db.execute(sql`CHECKPOINT`);
      const c0 = sampleCpu(s.pid, s.postmaster);
      const r = await loadPhase(s.port, s.lanes, PHASE_S);
      const c1 = sampleCpu(s.pid, s.postmaster);
      cpu[side].svc += c1.service - c0.service;
      cpu[side].pg += c1.postgres - c0.postgres;
      cpu[side].n += r.ok;
      cpu[side].busy.push(mainBusy(c0, c1));
      cpu[side].idle.push(machineIdle(c0, c1));
      return r.perSecond;
    };
    await alternate(
      ROUNDS,
      async () => withBatches.push(await phase(on, 'on')),
      async () => without.push(await phase(off, 'off')),
    );
    // Whether sealing kept up: the sealed batches still waiting for their header and proof
    // the moment the load stops.
    const { rows: behind } = await on.database.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM batches WHERE status = 'proving'`,
    );
    // What the batches side did meanwhile: every action in a batch, the batches it sealed.
    await new Promise((r) => setTimeout(r, 12_000));
    const { rows } = await on.database.db.execute<{
      actions: number;
      waiting: number;
      sealed: number;
      avg: number;
    }>(sql`SELECT (SELECT count(*)::int FROM action_logs) AS actions,
        (SELECT count(*)::int FROM action_logs WHERE batch_id IS NULL) AS waiting,
        (SELECT count(*)::int FROM batches WHERE status <> 'building') AS sealed,
        (SELECT round(avg(actions_count))::int FROM batches WHERE status <> 'building') AS avg`);
    const fmt = (n: number) => n.toLocaleString('en');
    const avg = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    const r = rows[0]!;
    console.log(`machine: ${os.cpus().length} cores, load average before (2) ${load0}`);
    console.log(
      `(2) POST /ebus/execute, ${CONNECTIONS} connections, ${PHASE_S} s phases: with batches ${withBatches.map(fmt).join(', ')} actions/s; without ${without.map(fmt).join(', ')} actions/s; ratio ${(avg(withBatches) / avg(without)).toFixed(3)} ${spread(withBatches.map((x, i) => x / without[i]!))}`,
    );
    const per = (c: (typeof cpu)['on']) =>
      `service ${Math.round(c.svc / c.n)} µs + postgres ${Math.round(c.pg / c.n)} µs = ${Math.round((c.svc + c.pg) / c.n)} µs (main thread busy ${c.busy.map((b) => `${Math.round(b * 100)} %`).join(', ')}; machine idle ${Math.round((c.idle.reduce((a, b) => a + b, 0) / c.idle.length) * 100)} %)`;
    console.log(
      `    CPU per action: with batches ${per(cpu.on)}; without ${per(cpu.off)}; ratio (without ÷ with) ${((cpu.off.svc + cpu.off.pg) / cpu.off.n / ((cpu.on.svc + cpu.on.pg) / cpu.on.n)).toFixed(3)}`,
    );
    console.log(
      `    batches side: ${fmt(r.actions)} actions, ${fmt(r.waiting)} waiting for a batch, ${fmt(r.sealed)} batches sealed (mean ${fmt(r.avg ?? 0)} actions), ${behind[0]!.n} sealed but not yet proven when the load stopped`,
    );
  } finally {
    await on.stop();
    await off.stop();
  }
}

async function main() {
  const only = process.env.BENCH_PARTS ?? '12';
  if (only.includes('1')) await sealing();
  if (only.includes('2')) await eventBus();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
