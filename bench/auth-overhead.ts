/**
 * Authentication overhead: one small GET, served unauthenticated, with an API key and with
 * a bearer token, in one run (issue 5, acceptance 8: each credential keeps ≥ 85% of the
 * unauthenticated req/s).
 *
 *   npx tsx bench/auth-overhead.ts [seconds per target, default 10] [connections, default 50]
 *
 * The service runs in this process on a free loopback port, against DATABASE_URL's server
 * (in a scratch database, dropped afterwards) or else an embedded PostgreSQL in a temporary
 * directory. The route is registered twice with one handler — `/bench/whoami` (auth
 * `either`, permission `authenticated`) and `/bench/whoami-open` (auth `none`) — so the
 * only difference between the runs is authentication. Logging is at `warn` (no per-request
 * log lines), as a production instance would run under load.
 */
import { performance } from 'node:perf_hooks';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../src/db/pool.js';
import type { App } from '../src/http/app.js';
import { createLogger } from '../src/http/logger.js';
import { addressForWalletId } from '../src/lib/address.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { permissionsOfRole } from '../src/lib/permissions.js';
import { createService } from '../src/server.js';
import { median, scratchDatabase } from './scratch-database.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);

interface Run {
  label: string;
  reqPerSec: number;
  ratio: number;
  p99Ms: number;
  serverUsPerReq: number;
  errors: number;
  non2xx: number;
}

function benchRoutes(app: App) {
  const handler = async (req: {
    auth: { walletId: string; orgId: string | null; kind: string } | null;
  }) => ({
    wallet_id: req.auth?.walletId ?? null,
    organization_id: req.auth?.orgId ?? null,
    kind: req.auth?.kind ?? null,
  });
  app.get('/bench/whoami', { config: { auth: 'either', permission: 'authenticated' } }, handler);
  app.get('/bench/whoami-open', { config: { auth: 'none' } }, handler);
}

interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
}

async function shot(t: Target, duration: number) {
  // The load generator runs in its own thread so it does not share the server's event loop.
  return autocannon({ url: t.url, connections, duration, headers: t.headers, workers: 1 });
}

/**
 * Interleaved rounds, each starting with a different target (A B C, B C A, C A B, …),
 * rather than one long run each, so a change in the load of this shared machine falls on
 * every target alike. Besides req/s it records the server thread's busy time per request
 * (event-loop utilisation; the load generator runs in another thread).
 */
async function measure(targets: Target[], totalSeconds: number, roundSeconds = 1): Promise<Run[]> {
  const rounds = Math.max(1, Math.round(totalSeconds / roundSeconds));
  const acc = targets.map(() => ({
    requests: 0,
    seconds: 0,
    busyMs: 0,
    perRound: [] as number[],
    p99s: [] as number[],
    errors: 0,
    non2xx: 0,
  }));
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < targets.length; k++) {
      const j = (i + k) % targets.length;
      const before = performance.eventLoopUtilization();
      const r = await shot(targets[j]!, roundSeconds);
      const elu = performance.eventLoopUtilization(before);
      const a = acc[j]!;
      a.requests += r.requests.total;
      a.seconds += r.duration;
      a.busyMs += elu.active;
      a.perRound.push(r.requests.total / r.duration);
      a.p99s.push(r.latency.p99);
      a.errors += r.errors + r.timeouts;
      a.non2xx += r.non2xx;
    }
  }
  const base = acc[0]!;
  return targets.map((t, j) => {
    const a = acc[j]!;
    return {
      label: t.label,
      reqPerSec: a.requests / a.seconds,
      // The ratio within each round, then the median: robust to bursts of outside load.
      ratio: median(a.perRound.map((rps, i) => rps / base.perRound[i]!)),
      p99Ms: median(a.p99s),
      serverUsPerReq: (a.busyMs * 1000) / Math.max(1, a.requests),
      errors: a.errors,
      non2xx: a.non2xx,
    };
  });
}

async function main() {
  const scratch = await scratchDatabase();
  const database = createDatabase(scratch.url, 20);
  try {
    await migrate(database.pool);
    const config = loadConfig({
      DATABASE_URL: scratch.url,
      PORT: '0',
      LOG_LEVEL: 'warn',
      NETWORK_ID: 'ons-bench',
      DATA_DIR: path.join(tmpdir(), 'ons-bench-data'),
      // Limits stay on (their cost is part of every request) but out of reach: one client
      // address and one key make every request here.
      RATE_LIMIT_DEFAULT_PER_MINUTE: '1000000000',
      RATE_LIMIT_DEFAULT_PER_SECOND: '1000000000',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000000',
      RATE_LIMIT_ANONYMOUS_PER_SECOND: '1000000000',
    });
    const logger = createLogger('warn');
    const service = await createService(
      { config, database, clock: systemClock, logger },
      benchRoutes,
    );
    const db = service.container.db;

    // A member and a key, straight to the database / service (no sign-in routes needed).
    const orgId = newId('organization');
    const walletId = newId('wallet');
    const now = new Date();
    await db.execute(sql`INSERT INTO organizations (id, name, created_at, updated_at)
      VALUES (${orgId}, 'Bench', ${now}, ${now})`);
    await db.execute(sql`INSERT INTO wallets (id, address, email, default_org_id, created_at, updated_at)
      VALUES (${walletId}, ${addressForWalletId(walletId).toLowerCase()}, 'bench@example.test',
        ${orgId}, ${now}, ${now})`);
    await db.execute(sql`INSERT INTO members (id, organization_id, wallet_id, email, role, status, created_at, updated_at)
      VALUES (${newId('member')}, ${orgId}, ${walletId}, 'bench@example.test', 'owner', 'active', ${now}, ${now})`);
    const tokens = await service.container.sessions.issue(db, { walletId, orgId, device: 'bench' });
    const { secret } = await service.container.apiKeys.create(
      {
        kind: 'user',
        walletId,
        orgId,
        role: 'owner',
        permissions: permissionsOfRole('owner'),
        sessionId: null,
        apiKeyId: null,
      },
      { name: 'bench', permissions: [{ resource: 'objects', crud: { read: true } }] },
    );

    await service.app.listen({ port: 0, host: '127.0.0.1' });
    service.startWorkers();
    const address = service.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const base = `http://127.0.0.1:${address.port}`;

    const targets: Target[] = [
      { label: 'unauthenticated', url: `${base}/bench/whoami-open`, headers: {} },
      { label: 'API key', url: `${base}/bench/whoami`, headers: { 'x-api-key': secret } },
      {
        label: 'bearer token',
        url: `${base}/bench/whoami`,
        headers: { authorization: `Bearer ${tokens.access_token}` },
      },
    ];
    for (const t of targets) {
      const res = await fetch(t.url, { headers: t.headers });
      if (res.status !== 200) throw new Error(`${t.label}: ${t.url} answered ${res.status}`);
    }

    const load = loadavg().map((l) => l.toFixed(2));
    console.log(
      `auth overhead: ${seconds}s per target in interleaved 1s rounds, ${connections} connections, loopback; load average before: ${load.join(' ')}`,
    );
    for (const t of targets) await shot(t, 2); // warm-up: JIT, pool, caches
    const runs = await measure(targets, seconds);
    console.log(
      '| run | req/s | of unauthenticated (median of rounds) | p99 ms (median of rounds) | server µs/request | errors | non-2xx |',
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const r of runs) {
      const ratio = (r.ratio * 100).toFixed(1);
      console.log(
        `| ${r.label} | ${Math.round(r.reqPerSec)} | ${ratio}% | ${r.p99Ms} | ${r.serverUsPerReq.toFixed(0)} | ${r.errors} | ${r.non2xx} |`,
      );
    }
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const failing = runs.slice(1).filter((r) => r.ratio < 0.85 || r.non2xx > 0);
    await service.close();
    if (failing.length > 0) {
      console.log(
        `below target (85% of unauthenticated): ${failing.map((r) => r.label).join(', ')}`,
      );
      process.exitCode = 1;
    }
  } finally {
    await database.close();
    await scratch.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
