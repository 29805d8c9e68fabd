/**
 * Webhook delivery benchmark (issue 20 item 10). Real PostgreSQL, durable commits, a real
 * HTTPS receiver (keep-alive, a CA made here) in a process of its own (webhook-receiver.ts), the
 * service as a child process.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/webhooks.ts
 *
 * Prints in one run:
 *  (1) delivery throughput: BENCH_DELIVERIES (20,000) deliveries queued in the outbox at once
 *      for one webhook, drained by the service's worker; deliveries/s from the first arrival
 *      to the last.
 *  (2) the event bus, POST /ebus/execute, 50 connections (one wallet each), alternately for
 *      an organization without webhooks and one with one webhook matching every action,
 *      BENCH_PHASE_SECONDS (8) each, BENCH_ROUNDS (2) rounds alternating which goes first
 *      (ABBA…), each phase from a fresh CHECKPOINT: actions/s of each and the ratio, and
 *      for the webhook phases the first-attempt latency (execute answered → delivery arrived).
 */
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../src/db/pool.js';
import { mainBusy, postmasterOf, processCpuUs, sampleCpu } from './cpu-account.js';
import {
  alternate,
  benchSessions,
  loadPhase,
  makeBenchOrg,
  percentile,
  presign,
  startBenchService,
} from './ebus-load.js';
import { scratchDatabase } from './scratch-database.js';
import { addBenchWebhook, startBenchReceiver } from './webhook-setup.js';

const PHASE_S = Math.min(15, Number(process.env.BENCH_PHASE_SECONDS ?? 8));
const DELIVERIES = Math.min(100_000, Number(process.env.BENCH_DELIVERIES ?? 20_000));
const CONNECTIONS = 50;
const ROUNDS = Math.min(12, Number(process.env.BENCH_ROUNDS ?? 2));
// Enough presigned actions for ~4,000 actions/s over every phase of a side.
const PER_WALLET = Math.ceil((4_000 * PHASE_S) / CONNECTIONS) * ROUNDS;
const WARM_UP = 40;

async function main() {
  // The receiver, in a process of its own (webhook-receiver.ts): every delivery's first
  // arrival by action id, in ms since the epoch.
  const arrivals = new Map<string, number>();
  let firstArrival = 0;
  let lastArrival = 0;
  const bench = await startBenchReceiver((reported) => {
    for (const [id, at] of reported) {
      if (!arrivals.has(id)) arrivals.set(id, at);
      if (!firstArrival || at < firstArrival) firstArrival = at;
      if (at > lastArrival) lastArrival = at;
    }
  });
  const receiver = bench.proc;
  const receiverUrl = bench.url;
  /** When the execute answer came (this process's performance.now()), in ms since the epoch. */
  const epoch = (t: number) => performance.timeOrigin + t;

  const scratch = await scratchDatabase();
  const url = scratch.url;
  const database = createDatabase(url, 10);
  let child: ChildProcess | null = null;
  try {
    await migrate(database.pool);
    const port = 20000 + Math.floor(Math.random() * 20000);
    const publicUrl = `http://127.0.0.1:${port}`;
    const sessions = await benchSessions(database, publicUrl);
    const plain = await makeBenchOrg(database, sessions, CONNECTIONS);
    const hooked = await makeBenchOrg(database, sessions, CONNECTIONS);
    await addBenchWebhook(database, hooked.orgId, hooked.templateId, receiverUrl);
    const pacedOrg = await makeBenchOrg(database, sessions, CONNECTIONS);
    await addBenchWebhook(database, pacedOrg.orgId, pacedOrg.templateId, receiverUrl);
    const drainOrg = await makeBenchOrg(database, sessions, CONNECTIONS);
    const drainHook = await addBenchWebhook(
      database,
      drainOrg.orgId,
      drainOrg.templateId,
      receiverUrl,
    );

    const per = PER_WALLET + WARM_UP * 2;
    const lanesPlain = plain.wallets.map((w) => ({
      w,
      bodies: presign(w, plain.templateId, 0, per),
    }));
    const lanesPaced = pacedOrg.wallets
      .slice(0, 25)
      .map((w) => ({ w, bodies: presign(w, pacedOrg.templateId, 0, PHASE_S * 20 + 20) }));
    const lanesHooked = hooked.wallets.map((w) => ({
      w,
      bodies: presign(w, hooked.templateId, 0, per),
    }));

    child = await startBenchService(port, url, {
      ...bench.serviceEnv,
      ...(process.env.BENCH_CPU_PROF ? { BENCH_CPU_PROF: process.env.BENCH_CPU_PROF } : {}),
    });

    // (1) Delivery throughput: the outbox filled at once (rows as the hook writes them).
    const event = JSON.stringify({
      action: { id: 'act_bench', name: 'mint' },
      object: { id: 'obj_bench' },
    });
    const now = new Date();
    await database.db.execute(sql`INSERT INTO webhook_deliveries (id, organization_id, webhook_id,
        action_id, event, status, next_attempt_at, created_at, updated_at)
      SELECT 'evt_' || lpad(g::text, 26, '0'), ${drainOrg.orgId}, ${drainHook}, 'act_' || lpad(g::text, 26, '0'),
        replace(${event}, 'act_bench', 'act_' || lpad(g::text, 26, '0'))::json,
        'pending', ${now}, ${now}, ${now}
      FROM generate_series(1, ${DELIVERIES}) g`);
    const drainStart = performance.now();
    while (arrivals.size < DELIVERIES && performance.now() - drainStart < 120_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const drained = arrivals.size;
    const drainSeconds = (lastArrival - firstArrival) / 1000;
    const { rows: doneRows } = await database.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ${drainHook} AND status = 'done'`,
    );
    arrivals.clear();

    // (2) The event bus without and with one matching webhook, ABAB, after a warm-up of each.
    await loadPhase(
      port,
      lanesPlain.map((l) => ({ w: l.w, bodies: l.bodies.splice(0, WARM_UP) })),
      60,
    );
    await loadPhase(
      port,
      lanesHooked.map((l) => ({ w: l.w, bodies: l.bodies.splice(0, WARM_UP) })),
      60,
    );
    await new Promise((r) => setTimeout(r, 1000));
    arrivals.clear();
    const answered = new Map<string, number>();
    const without: number[] = [];
    const withHook: number[] = [];
    const load0 = os.loadavg()[0]!.toFixed(2);
    // CPU per action of each side: the service, the PostgreSQL server, and this process (the
    // load generator, and the receiver while deliveries arrive), which other work on the
    // machine disturbs far less than throughput. A side's phase ends when its deliveries
    // have arrived, so none spills into the next phase.
    const { rows: backend } = await database.db.execute<{ pid: number }>(
      sql`SELECT pg_backend_pid() AS pid`,
    );
    const postmaster = postmasterOf(backend[0]!.pid);
    const cpu = {
      plain: { svc: 0, pg: 0, self: 0, rcv: 0, n: 0, busy: [] as number[] },
      hooked: { svc: 0, pg: 0, self: 0, rcv: 0, n: 0, busy: [] as number[] },
    };
    const measured = async <R extends { ok: number }>(
      side: 'plain' | 'hooked',
      run: () => Promise<R>,
    ) => {
      // Every phase starts from a fresh checkpoint, so the server's own (every ~45 s at this
      // rate) and the full pages written after one land on no side in particular.
      await database.db.execute(sql`CHECKPOINT`);
      const c0 = sampleCpu(child!.pid, postmaster);
      const r0 = processCpuUs(receiver.pid!);
      const r = await run();
      cpu[side].busy.push(mainBusy(c0, sampleCpu(child!.pid, postmaster)));
      const until = performance.now() + 30_000;
      while (side === 'hooked' && arrivals.size < answered.size && performance.now() < until) {
        await new Promise((res) => setTimeout(res, 20));
      }
      const c1 = sampleCpu(child!.pid, postmaster);
      cpu[side].svc += c1.service - c0.service;
      cpu[side].pg += c1.postgres - c0.postgres;
      cpu[side].self += c1.self - c0.self;
      cpu[side].rcv += processCpuUs(receiver.pid!) - r0;
      cpu[side].n += r.ok;
      return r;
    };
    await alternate(
      ROUNDS,
      async () =>
        without.push(
          (await measured('plain', () => loadPhase(port, lanesPlain, PHASE_S))).perSecond,
        ),
      async () =>
        withHook.push(
          (await measured('hooked', () => loadPhase(port, lanesHooked, PHASE_S, answered)))
            .perSecond,
        ),
    );
    const settle = performance.now();
    while (arrivals.size < answered.size && performance.now() - settle < 30_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const latencies: number[] = [];
    let missing = 0;
    for (const [id, t] of answered) {
      const at = arrivals.get(id);
      if (at === undefined) missing++;
      else latencies.push(at - epoch(t));
    }
    latencies.sort((a, b) => a - b);
    // (3) The same with a paced load the deliveries keep up with: 25 lanes, one action per
    // lane every 50 ms (about 500 actions/s), once what (2) queued is delivered.
    const drainedBy = performance.now() + 120_000;
    while (performance.now() < drainedBy) {
      const { rows } = await database.db.execute<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL`,
      );
      if (rows[0]?.n === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    arrivals.clear();
    const pacedAnswered = new Map<string, number>();
    const paced = await loadPhase(port, lanesPaced, PHASE_S, pacedAnswered, 50);
    const settle3 = performance.now();
    while (arrivals.size < pacedAnswered.size && performance.now() - settle3 < 30_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const pacedLatencies = [...pacedAnswered]
      .filter(([id]) => arrivals.has(id))
      .map(([id, t]) => arrivals.get(id)! - epoch(t))
      .sort((a, b) => a - b);
    const pacedMissing = pacedAnswered.size - pacedLatencies.length;
    const { rows: notDone } = await database.db.execute<{
      status: string;
      error: string;
      n: number;
    }>(
      sql`SELECT status, attempts -> -1 ->> 'error' AS error, count(*)::int AS n
        FROM webhook_deliveries WHERE status <> 'done' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`,
    );
    const avg = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    const fmt = (n: number) => n.toLocaleString('en');
    console.log(`machine: ${os.cpus().length} cores, load average before (2) ${load0}`);
    console.log(
      `(1) ${fmt(drained)} of ${fmt(DELIVERIES)} queued deliveries arrived (${fmt(doneRows[0]?.n ?? 0)} recorded done), ${fmt(Math.round(drained / drainSeconds))} deliveries/s (first to last arrival ${drainSeconds.toFixed(1)} s), one webhook, one HTTPS receiver, keep-alive`,
    );
    console.log(
      `(2) POST /ebus/execute, ${CONNECTIONS} connections, ${PHASE_S} s phases: without webhooks ${without.map(fmt).join(', ')} actions/s; with one matching webhook ${withHook.map(fmt).join(', ')} actions/s; ratio ${(avg(withHook) / avg(without)).toFixed(2)}`,
    );
    const cpuOf = (c: (typeof cpu)['plain']) => {
      const us = (x: number) => Math.round(x / Math.max(1, c.n));
      return `service ${us(c.svc)} + postgres ${us(c.pg)} = ${us(c.svc + c.pg)} µs (load generator ${us(c.self)} µs, receiver ${us(c.rcv)} µs; the service's main thread busy ${c.busy.map((b) => `${Math.round(b * 100)} %`).join(', ')} of the load)`;
    };
    const total = (c: (typeof cpu)['plain']) => (c.svc + c.pg) / Math.max(1, c.n);
    console.log(
      `    CPU per action: without webhooks ${cpuOf(cpu.plain)}; with ${cpuOf(cpu.hooked)}; ratio (without ÷ with, service + postgres) ${(total(cpu.plain) / total(cpu.hooked)).toFixed(3)}`,
    );
    console.log(
      `    first-attempt latency (execute answered → delivery arrived), ${fmt(latencies.length)} deliveries${missing ? `, ${missing} not arrived` : ''}: p50 ${percentile(latencies, 50).toFixed(0)} ms, p90 ${percentile(latencies, 90).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${(latencies[latencies.length - 1] ?? 0).toFixed(0)} ms`,
    );
    console.log(
      `(3) paced, 25 connections, one action per connection every 50 ms: ${fmt(paced.perSecond)} actions/s; first-attempt latency of ${fmt(pacedLatencies.length)} deliveries${pacedMissing ? ` (${pacedMissing} not arrived)` : ''}: p50 ${percentile(pacedLatencies, 50).toFixed(0)} ms, p90 ${percentile(pacedLatencies, 90).toFixed(0)} ms, p99 ${percentile(pacedLatencies, 99).toFixed(0)} ms, max ${(pacedLatencies[pacedLatencies.length - 1] ?? 0).toFixed(0)} ms`,
    );
    console.log(
      `    deliveries not done at the end: ${notDone.map((r) => `${r.n} ${r.status} (${r.error ?? 'not attempted'})`).join('; ') || 'none'}`,
    );
  } finally {
    child?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await database.close();
    await scratch.drop().catch(() => undefined);
    receiver.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
