/**
 * Event bus benchmark (issue 7 acceptance 10, docs/ebus.md, "Inside"). Real PostgreSQL, durable
 * commits.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/ebus.ts
 *
 * Creates a fresh database (bench/scratch-database.ts: on BENCH_DATABASE_URL's server, else an
 * embedded PostgreSQL), starts the service as a child process on loopback, pre-signs every
 * action (untimed, native secp256k1), then prints in one run:
 *  (a) one organization, single POST /ebus/execute, 50 connections (one wallet each)
 *  (b) ten organizations together, 50 connections (5 wallets each)
 *  (c) raw ceilings: signature recovery alone, and group commit alone (no HTTP): the
 *      service's own committer, built by its composition root, so each group runs the
 *      statement the service runs (batch join, outbox hook, spend policies)
 *  (d) ten organizations through POST /ebus/actions/batch, BENCH_BATCH_SIZE (20) per request
 *  (e) a hundred organizations of two wallets each, over the same 50 connections (run only
 *      when BENCH_PHASES names it)
 * and the ratios. Each phase is bounded by BENCH_PHASE_SECONDS (default 8, at most 15).
 * For each HTTP phase it also prints the service's own view (time per request, event-loop
 * busy share, group sizes and times, from /metrics) and the CPU per action of the service,
 * PostgreSQL and the load generator (from /proc).
 *
 * Knobs: BENCH_PHASES (default abcd), BENCH_ACTIONS_PER_WALLET, BENCH_POLICIES=N (N ≤ 10
 * spend policies in force on phase (a)'s organization, every one binding every action and
 * none refusing: docs/policies.md; compare with 0 for what they cost), BENCH_WEBHOOK=1 (one
 * webhook matching every action of phase (a), delivered over HTTPS to a receiver in its own
 * process: `BENCH_B_ENV='{"BENCH_WEBHOOK":"1"}' npm run bench:compare -- HEAD a` is issue 29's
 * with-and-without-webhooks ratio, alternated), BENCH_CLIENT=undici,
 * BENCH_NODE_FLAGS (default as `npm start`), BENCH_CPU_PROF=<dir>, BENCH_SETUP_SQL (run after
 * the migrations, for experiments), BENCH_SERVICE_STDOUT=1; the service's own settings
 * (WORKERS, EBUS_*) pass through from the environment.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { newId } from '../src/lib/ids.js';
import { SecretSealer } from '../src/lib/sealed-secret.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase, type Database } from '../src/db/pool.js';
import { createLogger } from '../src/http/logger.js';
import { systemClock } from '../src/lib/clock.js';
import { SessionService } from '../src/modules/auth/session-service.js';
import { TokenService } from '../src/modules/auth/token-service.js';
import { actionHash, buildActionText } from '../src/modules/ebus/action-text.js';
import type { VerifiedAction } from '../src/modules/ebus/types.js';
import { describeCpu, sampleCpu } from './cpu-account.js';
import { makeBenchOrg, NETWORK, presign as presignFrom, type BenchWallet } from './ebus-load.js';
import { sharedLanes, takeWarmUp, type SharedLane } from './ebus-many-orgs.js';
import { scratchDatabase } from './scratch-database.js';
import { addBenchWebhook, startBenchReceiver } from './webhook-setup.js';
import { RawLane } from './raw-client.js';
import { measureRecoveryRate } from './signature-recovery.js';

const PHASE_S = Math.min(15, Number(process.env.BENCH_PHASE_SECONDS ?? 8));
const CONNECTIONS = 50;
const BATCH_SIZE = Math.min(100, Number(process.env.BENCH_BATCH_SIZE ?? 20));
const PER_WALLET = Number(process.env.BENCH_ACTIONS_PER_WALLET ?? 640);
const WARM_UP = 40;

type Wallet = BenchWallet;

const makeOrg = makeBenchOrg;

/**
 * Up to ten spend policies on an organization, each binding every action of phase (a) (the
 * organization or its template) and none ever refusing: seven caps (so seven use rows per
 * group statement), an allowed-actions list, a denied-templates list and a largest fee.
 */
/**
 * Settles the database before a phase: what the phases before it wrote is vacuumed and
 * analysed (autovacuum's work, which would otherwise land in whichever phase runs when it
 * wakes) and flushed by a checkpoint. Without it a phase pays for its predecessors' rows:
 * (e) right after (b) measured ~1.2–1.8× (b)'s PostgreSQL CPU per action, alone ~1.2×
 * (docs/performance.md, "Wave 3, session 23").
 */
async function settle(database: Database): Promise<void> {
  await database.pool.query('VACUUM (ANALYZE)');
  await database.pool.query('CHECKPOINT');
}

async function benchPolicies(database: Database, orgId: string, templateId: string, n: number) {
  const big = (10n ** 40n).toString();
  const all: [string, string | null, string][] = [
    ['organization', null, `period, spend_cap_wei) VALUES ('day', ${big}`],
    ['organization', null, `period, max_actions) VALUES ('minute', 1000000000`],
    ['template', templateId, `allowed_actions) VALUES ('{mint,transfer,update}'`],
    ['organization', null, `period, spend_cap_wei) VALUES ('30d', ${big}`],
    ['template', templateId, `period, max_actions) VALUES ('hour', 1000000000`],
    ['organization', null, `max_fee_wei) VALUES (${big}`],
    ['template', templateId, `period, spend_cap_wei) VALUES ('hour', ${big}`],
    ['organization', null, `denied_templates) VALUES ('{tpl_00000000000000000000000000}'`],
    ['organization', null, `period, max_actions) VALUES ('day', 1000000000`],
    ['template', templateId, `period, max_actions) VALUES ('minute', 1000000000`],
  ];
  for (const [type, target, rest] of all.slice(0, Math.min(n, all.length))) {
    const id = newId('policy');
    const [cols, vals] = rest.split(') VALUES (');
    await database.pool.query(
      `INSERT INTO policies (id, organization_id, name, target_type, target_id, created_at,
        updated_at, ${cols}) VALUES ($1, $2, 'bench', $3, $4, now(), now(), ${vals})`,
      [id, orgId, type, target],
    );
    await database.pool.query(
      'INSERT INTO policy_usage (policy_id, organization_id) VALUES ($1, $2)',
      [id, orgId],
    );
  }
  if (n > 0)
    console.log(`${Math.min(n, all.length)} spend policies in force on phase (a)'s organization`);
}

/** Signs `count` mints for a wallet with native secp256k1 (EIP-191), untimed. */
const presign = (w: Wallet, templateId: string, count: number) =>
  presignFrom(w, templateId, 0, count);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

/** The service's group committer totals, read from its /metrics. */
async function committerTotals(port: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(
    /^(ons_ebus_[a-z_]+|nodejs_eventloop_utilization) ([0-9.e+-]+)$/gm,
  )) {
    out[m[1]!] = Number(m[2]);
  }
  for (const m of text.matchAll(
    /^http_request_duration_seconds_(sum|count)\{[^}]*route="\/ebus\/(?:execute|actions\/batch)",status="200"\} ([0-9.e+-]+)$/gm,
  )) {
    // Phases (a) and (b) use only execute, (d) only batch: the two add up per phase.
    out[`http_${m[1]!}`] = (out[`http_${m[1]!}`] ?? 0) + Number(m[2]);
  }
  return out;
}

/**
 * "mean group 18.2, queue wait 6.1 ms, group apply 8.0 ms, 0 stalled" between two readings
 * (stalled: groups in flight past EBUS_GROUP_STALL_MS; 0 on code without the series).
 */
function describeGroups(from: Record<string, number>, to: Record<string, number>): string {
  const d = (k: string) => (to[k] ?? 0) - (from[k] ?? 0);
  const groups = Math.max(1, d('ons_ebus_groups'));
  const actions = Math.max(1, d('ons_ebus_group_actions'));
  const http = (d('http_sum') * 1000) / Math.max(1, d('http_count'));
  const elu = to.nodejs_eventloop_utilization ?? 0;
  return `in the service ${http.toFixed(1)} ms per request, event loop ${(elu * 100).toFixed(0)} % busy; mean group ${(actions / groups).toFixed(1)}, queue wait ${((d('ons_ebus_group_wait_seconds') * 1000) / actions).toFixed(1)} ms, group apply ${((d('ons_ebus_group_apply_seconds') * 1000) / groups).toFixed(1)} ms, ${d('ons_ebus_groups_stalled')} stalled`;
}

/** BENCH_CLIENT=undici uses undici's Pool instead of the raw keep-alive client. */
const CLIENT = process.env.BENCH_CLIENT === 'undici' ? 'undici' : 'raw';

/**
 * Runs one sequential request loop per wallet until the bodies or the phase's time run out;
 * `untimed` (the warm-up) sends every body, since the next phase's nonces follow on from them.
 */
async function load(port: number, lanes: SharedLane[], servicePid?: number, untimed = false) {
  const cpu0 = sampleCpu(servicePid);
  const pool =
    CLIENT === 'undici'
      ? new Pool(`http://127.0.0.1:${port}`, { connections: lanes.length, pipelining: 1 })
      : null;
  const sockets = pool ? [] : await Promise.all(lanes.map(() => RawLane.connect(port)));
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let firstRefusal = '';
  const start = performance.now();
  const deadline = untimed ? Infinity : start + PHASE_S * 1000;
  await Promise.all(
    lanes.map(async ({ w, bodies, tokens }, lane) => {
      const own = { authorization: `Bearer ${w.token}` };
      for (const [i, body] of bodies.entries()) {
        if (performance.now() >= deadline) break;
        const headers = tokens ? { authorization: `Bearer ${tokens[i]!}` } : own;
        const t0 = performance.now();
        let status: number;
        let text = '';
        if (pool) {
          const res = await pool.request({
            method: 'POST',
            path: '/ebus/execute',
            headers: { 'content-type': 'application/json', ...headers },
            body,
          });
          text = await res.body.text();
          status = res.statusCode;
        } else {
          const res = await sockets[lane]!.send(RawLane.post('/ebus/execute', headers, body));
          status = res.status;
          if (status !== 200) text = res.body.toString('utf8');
        }
        latencies.push(performance.now() - t0);
        if (status === 200) ok++;
        else if (failed++ === 0) firstRefusal = `${status} ${text.slice(0, 200)}`;
      }
    }),
  );
  await pool?.close();
  for (const sock of sockets) sock.close();
  // A refused action is a fault of the benchmark or the service: say what it was.
  if (firstRefusal) console.log(`first refusal: ${firstRefusal}`);
  return summarize({ ok, failed, latencies, start, cpu0, servicePid });
}

/** A phase's figures: actions/s, latency percentiles and CPU per action. */
function summarize(r: {
  ok: number;
  failed: number;
  latencies: number[];
  start: number;
  cpu0: ReturnType<typeof sampleCpu>;
  servicePid: number | undefined;
}) {
  const seconds = (performance.now() - r.start) / 1000;
  const cpu = describeCpu(r.cpu0, sampleCpu(r.servicePid), r.ok, 'action');
  r.latencies.sort((a, b) => a - b);
  return {
    ok: r.ok,
    failed: r.failed,
    seconds,
    perSecond: Math.round(r.ok / seconds),
    p50: percentile(r.latencies, 50),
    p90: percentile(r.latencies, 90),
    p99: percentile(r.latencies, 99),
    max: r.latencies[r.latencies.length - 1] ?? 0,
    cpu,
  };
}

/**
 * (d) the same signed actions through POST /ebus/actions/batch, `perRequest` consecutive
 * actions of one wallet per request: what a client that batches gets from the same machine.
 */
async function loadBatch(
  port: number,
  lanes: { w: Wallet; bodies: string[] }[],
  perRequest: number,
  servicePid?: number,
) {
  const cpu0 = sampleCpu(servicePid);
  const sockets = await Promise.all(lanes.map(() => RawLane.connect(port)));
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  const start = performance.now();
  const deadline = start + PHASE_S * 1000;
  await Promise.all(
    lanes.map(async ({ w, bodies }, lane) => {
      const headers = { authorization: `Bearer ${w.token}` };
      for (let i = 0; i < bodies.length && performance.now() < deadline; i += perRequest) {
        const chunk = bodies.slice(i, i + perRequest);
        const t0 = performance.now();
        const res = await sockets[lane]!.send(
          RawLane.post('/ebus/actions/batch', headers, `{"actions":[${chunk.join(',')}]}`),
        );
        latencies.push(performance.now() - t0);
        const applied =
          res.status === 200 ? res.body.toString('utf8').split('"status":"applied"').length - 1 : 0;
        ok += applied;
        failed += chunk.length - applied;
      }
    }),
  );
  for (const sock of sockets) sock.close();
  return summarize({ ok, failed, latencies, start, cpu0, servicePid });
}

/**
 * The committer alone: pre-verified actions straight into group commit, 50 concurrent. The
 * committer is the service's own, built by the service's composition root with the service's
 * settings (src/container.ts), so each group runs the statement the service runs: the batch
 * join, the webhooks' outbox hook and the spend policies included. Its background loops (the
 * sealer, deliveries) are not started: only the statement is measured.
 */
async function groupCommitCeiling(
  database: Database,
  org: Awaited<ReturnType<typeof makeOrg>>,
  url: string,
  publicUrl: string,
) {
  const config = loadConfig({
    ...process.env,
    NETWORK_ID: NETWORK,
    DATABASE_URL: url,
    PUBLIC_URL: publicUrl,
    RATE_LIMIT_ENABLED: 'false',
  });
  const container = await createContainer({
    config,
    database,
    clock: systemClock,
    logger: createLogger('warn'),
  });
  const ebus = container.ebus;
  const expires = new Date(Date.now() + 3600_000).toISOString();
  const cpu0 = sampleCpu(undefined);
  const start = performance.now();
  const deadline = start + PHASE_S * 1000;
  let ok = 0;
  await Promise.all(
    org.wallets.map(async (w) => {
      for (let nonce = 0; nonce < PER_WALLET * 4 && performance.now() < deadline; nonce++) {
        const action = {
          wallet: w.address,
          name: 'mint' as const,
          params: { template_id: org.templateId },
          nonce,
          expires,
        };
        const text = buildActionText({ network: NETWORK, organizationId: org.orgId, ...action });
        const v: VerifiedAction = {
          payerOrgId: org.orgId,
          apiKeyId: null,
          walletId: w.id,
          walletAddress: w.address,
          signerRole: 'member',
          action,
          text,
          hash: actionHash(text),
          signature: { type: 'eoa', signature: '0x' },
          passkey: null,
          credential: null,
          maxFeeWei: null,
        };
        const out = await ebus.committer.submit(v);
        if (!out.ok) throw out.error;
        ok++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  for (const w of container.workers) await w.stop();
  const s = ebus.committer.stats;
  const cpu = describeCpu(cpu0, sampleCpu(undefined), ok, 'action').replace('service 0 µs, ', '');
  return {
    ok,
    cpu,
    seconds,
    perSecond: Math.round(ok / seconds),
    meanGroup: s.actions / Math.max(1, s.groups),
  };
}

async function main() {
  const scratch = await scratchDatabase();
  const url = scratch.url;
  const database = createDatabase(url, 20);
  const child = { proc: null as ReturnType<typeof spawn> | null };
  // BENCH_WEBHOOK=1: one webhook matching every action of phase (a), to a receiver in a
  // process of its own (its CPU is not the service's).
  let delivered = 0;
  const receiver =
    process.env.BENCH_WEBHOOK === '1'
      ? await startBenchReceiver((arrived) => (delivered += arrived.length))
      : null;
  try {
    await migrate(database.pool);
    if (process.env.BENCH_SETUP_SQL) await database.pool.query(process.env.BENCH_SETUP_SQL);
    const port = 20000 + Math.floor(Math.random() * 20000);
    const publicUrl = `http://127.0.0.1:${port}`;
    const tokens = new TokenService(database.db, systemClock, publicUrl, SecretSealer.none());
    await tokens.init();
    const sessions = new SessionService(database.db, systemClock, tokens);
    const load1 = await makeOrg(database, sessions, CONNECTIONS);
    await benchPolicies(
      database,
      load1.orgId,
      load1.templateId,
      Number(process.env.BENCH_POLICIES ?? 0),
    );
    if (receiver) {
      await addBenchWebhook(database, load1.orgId, load1.templateId, receiver.url);
      console.log("one webhook matching every action of phase (a)'s organization");
    }
    const ten = [];
    for (let i = 0; i < 10; i++) ten.push(await makeOrg(database, sessions, CONNECTIONS / 10));
    const raw = await makeOrg(database, sessions, CONNECTIONS);
    const tenBatch = [];
    for (let i = 0; i < 10; i++) {
      tenBatch.push(await makeOrg(database, sessions, CONNECTIONS / 10));
    }

    const phases = process.env.BENCH_PHASES ?? 'abcd';
    // (e) 100 organizations of 2 wallets each, over the same 50 connections.
    const hundred = [];
    for (let i = 0; phases.includes('e') && i < 100; i++) {
      hundred.push(await makeOrg(database, sessions, 2));
    }
    // Enough for the warm-up only, for a phase that is not run.
    const count = (phase: string, n: number) => (phases.includes(phase) ? n : WARM_UP);
    const signStart = performance.now();
    const lanesA = load1.wallets.map((w) => ({
      w,
      bodies: presign(w, load1.templateId, count('a', PER_WALLET)),
    }));
    const lanesB = ten.flatMap((o) =>
      o.wallets.map((w) => ({ w, bodies: presign(w, o.templateId, count('b', PER_WALLET)) })),
    );
    const lanesD = phases.includes('d')
      ? tenBatch.flatMap((o) =>
          o.wallets.map((w) => ({ w, bodies: presign(w, o.templateId, PER_WALLET * 2) })),
        )
      : [];
    const lanesE = sharedLanes(hundred, CONNECTIONS, (w, templateId) =>
      presign(w, templateId, PER_WALLET),
    );
    const signed = [...lanesA, ...lanesB, ...lanesD, ...lanesE].reduce(
      (n, l) => n + l.bodies.length,
      0,
    );
    console.log(
      `pre-signed ${signed} actions in ${((performance.now() - signStart) / 1000).toFixed(1)} s (untimed)`,
    );

    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the service there.
    const prof = process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [];
    // The service runs with `npm start`'s node flags (package.json) unless BENCH_NODE_FLAGS says
    // otherwise, from the sources through tsx (as `npm start` ran it before the build, so both
    // sides of a bench:compare against an older ref start alike; the compiled dist/main.js
    // measured no faster: docs/performance.md, session 18).
    const flags = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=32')
      .split(' ')
      .filter(Boolean);
    child.proc = spawn(process.execPath, [...flags, ...prof, '--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: publicUrl,
        NETWORK_ID: NETWORK,
        LOG_LEVEL: 'warn',
        // The event bus's own limit (2,000 actions/s per organization) would cap phase (a) at
        // its target; the benchmark measures the path, not the limiter.
        RATE_LIMIT_ENABLED: 'false',
        ...receiver?.serviceEnv,
      },
      stdio: ['ignore', process.env.BENCH_SERVICE_STDOUT ? 'inherit' : 'ignore', 'inherit'],
    });
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${publicUrl}/healthz`)).ok) break;
      } catch {
        /* not up yet */
      }
      if (i > 100) throw new Error('service did not start');
      await new Promise((r) => setTimeout(r, 200));
    }
    // Warm-up, then the measured phases. V8 optimizes the hot path only after a thousand or
    // so requests (the first ones take 10 to 100 times longer), and the pool opens its
    // connections: WARM_UP actions per wallet (unmeasured) let each phase measure the
    // steady state, as a service that has been up for a second would see it.
    await load(
      port,
      lanesA.map((l) => ({ w: l.w, bodies: l.bodies.splice(0, WARM_UP) })),
      undefined,
      true,
    );
    await load(
      port,
      lanesB.map((l) => ({ w: l.w, bodies: l.bodies.splice(0, WARM_UP) })),
      undefined,
      true,
    );
    if (lanesE.length > 0) {
      const perLane = (hundred.length * 2) / lanesE.length;
      await load(
        port,
        lanesE.map((l) => takeWarmUp(l, WARM_UP, perLane)),
        undefined,
        true,
      );
    }
    const load0 = os.loadavg()[0]!.toFixed(2);
    const skipped = {
      ok: 0,
      failed: 0,
      seconds: 0,
      perSecond: 0,
      p50: 0,
      p90: 0,
      p99: 0,
      max: 0,
      cpu: '',
    };
    // A phase that follows another starts from a settled database (`settle`); the first
    // follows the warm-up as it always has, so a single-phase run measures what older
    // versions' benchmarks measured (bench:compare against them runs their own).
    const pid = child.proc.pid;
    let measured = false;
    const measure = async <T>(
      phase: string,
      run: () => Promise<T>,
    ): Promise<T | typeof skipped> => {
      if (!phases.includes(phase)) return skipped;
      if (measured) await settle(database);
      measured = true;
      return run();
    };
    const m0 = await committerTotals(port);
    const a = await measure('a', () => load(port, lanesA, pid));
    const m1 = await committerTotals(port);
    const b = await measure('b', () => load(port, lanesB, pid));
    const m2 = await committerTotals(port);
    const d = await measure('d', () => loadBatch(port, lanesD, BATCH_SIZE, pid));
    const m3 = await committerTotals(port);
    const e = await measure('e', () => load(port, lanesE, pid));
    const groupE = describeGroups(m3, await committerTotals(port));
    const groupD = describeGroups(m2, m3);
    const groupA = describeGroups(m0, m1);
    const groupB = describeGroups(m1, m2);
    child.proc.kill('SIGTERM');
    const recovery = phases.includes('c') ? await measureRecoveryRate(5000) : { perSecond: 0 };
    if (measured && phases.includes('c')) await settle(database);
    const c = phases.includes('c')
      ? await groupCommitCeiling(database, raw, url, publicUrl)
      : { ...skipped, meanGroup: 0 };
    const { rows } = await database.db.execute<{ synchronous_commit: string }>(
      sql`SHOW synchronous_commit`,
    );

    const fmt = (n: number) => n.toLocaleString('en');
    console.log(
      `machine: ${os.cpus().length} cores, load average before the phases ${load0}, after ${os.loadavg()[0]!.toFixed(2)}; synchronous_commit=${rows[0]?.synchronous_commit}; Node ${process.versions.node}`,
    );
    if (phases.includes('a')) {
      console.log(
        `(a) one org, POST /ebus/execute, ${lanesA.length} connections: ${fmt(a.perSecond)} actions/s (${a.ok} ok, ${a.failed} refused, ${a.seconds.toFixed(1)} s), p50 ${a.p50.toFixed(1)} ms, p90 ${a.p90.toFixed(1)} ms, p99 ${a.p99.toFixed(1)} ms, max ${a.max.toFixed(0)} ms\n    ${groupA}\n    ${a.cpu}`,
      );
    }
    if (phases.includes('b')) {
      console.log(
        `(b) ten orgs, POST /ebus/execute, ${lanesB.length} connections: ${fmt(b.perSecond)} actions/s (${b.ok} ok, ${b.failed} refused, ${b.seconds.toFixed(1)} s), p50 ${b.p50.toFixed(1)} ms, p90 ${b.p90.toFixed(1)} ms, p99 ${b.p99.toFixed(1)} ms, max ${b.max.toFixed(0)} ms\n    ${groupB}\n    ${b.cpu}`,
      );
    }
    if (phases.includes('c')) {
      console.log(
        `(c) signature recovery alone (1 core): ${fmt(recovery.perSecond)}/s; group-commit SQL alone (one org, 50 submitters): ${fmt(c.perSecond)} actions/s, mean group ${c.meanGroup.toFixed(1)}\n    group-commit ${c.cpu.replace('load generator', 'committer (node)')}`,
      );
    }
    if (phases.includes('d')) {
      console.log(
        `(d) ten orgs, POST /ebus/actions/batch (${BATCH_SIZE} actions of one wallet per request), ${lanesD.length} connections: ${fmt(d.perSecond)} actions/s (${d.ok} ok, ${d.failed} refused, ${d.seconds.toFixed(1)} s), p50 ${d.p50.toFixed(1)} ms, p99 ${d.p99.toFixed(1)} ms per request\n    ${groupD}\n    ${d.cpu}`,
      );
    }
    if (phases.includes('e')) {
      console.log(
        `(e) a hundred orgs of 2 wallets, POST /ebus/execute, ${lanesE.length} connections: ${fmt(e.perSecond)} actions/s (${e.ok} ok, ${e.failed} refused, ${e.seconds.toFixed(1)} s), p50 ${e.p50.toFixed(1)} ms, p90 ${e.p90.toFixed(1)} ms, p99 ${e.p99.toFixed(1)} ms, max ${e.max.toFixed(0)} ms\n    ${groupE}\n    ${e.cpu}`,
      );
    }
    // The ratios of the phases that ran, each only when both of its phases did.
    const ratio = (x: string, y: string, top: number, bottom: number, name: string) =>
      phases.includes(x) && phases.includes(y) ? [`${name} ${(top / bottom).toFixed(2)}`] : [];
    const ratios = [
      ...ratio('e', 'b', e.perSecond, b.perSecond, '(e)/(b)'),
      ...ratio('a', 'c', a.perSecond, recovery.perSecond, '(a)/recovery'),
      ...ratio('a', 'c', a.perSecond, c.perSecond, '(a)/group-commit'),
      ...ratio('b', 'a', b.perSecond, a.perSecond, '(b)/(a)'),
    ];
    if (ratios.length > 0) console.log(`ratios: ${ratios.join(', ')}`);
    if (receiver) {
      await new Promise((r) => setTimeout(r, 1000));
      console.log(`webhook deliveries arrived at the receiver: ${delivered}`);
    }
  } finally {
    child.proc?.kill('SIGTERM');
    await database.close();
    await new Promise((r) => setTimeout(r, 500));
    await scratch.drop().catch(() => undefined);
    receiver?.proc.kill('SIGTERM');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
