/**
 * Rate-limiter overhead: one small GET with an API key, served by three instances of the
 * service in this process that differ only in their limiter — none (RATE_LIMIT_ENABLED=false),
 * in memory, and Redis (REDIS_URL) — measured in one run (issue 17, acceptance 6: the
 * in-memory limiter keeps ≥ 90 % of the req/s without it, the Redis limiter ≥ 75 %).
 *
 *   npx tsx bench/rate-limit-overhead.ts [seconds per target, default 10] [connections, default 50]
 *
 * Redis is the one at BENCH_REDIS_URL (default redis://127.0.0.1:6379); without one answering,
 * the Redis target is left out and said so. The instances share a scratch database on
 * DATABASE_URL's server (dropped afterwards) or an embedded PostgreSQL in a temporary
 * directory. Limits are on but out of reach: one key makes every request. The route
 * `/bench/whoami` (auth `either`, permission `authenticated`) exists only here.
 */
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase, type Database } from '../src/db/pool.js';
import type { App } from '../src/http/app.js';
import { createLogger } from '../src/http/logger.js';
import { addressForWalletId } from '../src/lib/address.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { permissionsOfRole } from '../src/lib/permissions.js';
import { createService, type Service } from '../src/server.js';
import { redisAnswers } from '../test/helpers/processes.js';
import { median, scratchDatabase } from './scratch-database.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const OUT_OF_REACH = '1000000000';

function benchRoutes(app: App) {
  app.get(
    '/bench/whoami',
    { config: { auth: 'either', permission: 'authenticated' } },
    async (req) => ({ wallet_id: req.auth?.walletId ?? null }),
  );
}

interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
}

async function shot(t: Target, duration: number) {
  // The load generator runs in its own thread so it does not share the servers' event loop.
  return autocannon({ url: t.url, connections, duration, headers: t.headers, workers: 1 });
}

/**
 * Interleaved 1 s rounds, each starting with a different target, so a change in the load
 * of this shared machine falls on every target alike; the ratio is the median of the
 * per-round ratios to the first target.
 */
async function measure(targets: Target[], totalSeconds: number) {
  const acc = targets.map(() => ({
    requests: 0,
    seconds: 0,
    busyMs: 0,
    perRound: [] as number[],
    p99s: [] as number[],
    errors: 0,
    non2xx: 0,
  }));
  for (let i = 0; i < Math.max(1, totalSeconds); i++) {
    for (let k = 0; k < targets.length; k++) {
      const j = (i + k) % targets.length;
      const before = performance.eventLoopUtilization();
      const r = await shot(targets[j]!, 1);
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
      ratio: median(a.perRound.map((rps, i) => rps / base.perRound[i]!)),
      p99Ms: median(a.p99s),
      serverUsPerReq: (a.busyMs * 1000) / Math.max(1, a.requests),
      errors: a.errors,
      non2xx: a.non2xx,
    };
  });
}

async function startInstance(database: Database, url: string, env: Record<string, string>) {
  const config = loadConfig({
    DATABASE_URL: url,
    PORT: '0',
    LOG_LEVEL: 'warn',
    NETWORK_ID: 'ons-bench',
    DATA_DIR: path.join(tmpdir(), 'ons-bench-data'),
    WEBHOOK_DELIVERY: 'false',
    RATE_LIMIT_DEFAULT_PER_MINUTE: OUT_OF_REACH,
    RATE_LIMIT_DEFAULT_PER_SECOND: OUT_OF_REACH,
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: OUT_OF_REACH,
    RATE_LIMIT_ANONYMOUS_PER_SECOND: OUT_OF_REACH,
    ...env,
  });
  const service = await createService(
    { config, database, clock: systemClock, logger: createLogger('warn') },
    benchRoutes,
  );
  await service.app.listen({ port: 0, host: '127.0.0.1' });
  const address = service.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { service, base: `http://127.0.0.1:${address.port}` };
}

async function apiKeyOf(service: Service): Promise<string> {
  const db = service.container.db;
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
  return secret;
}

async function main() {
  const scratch = await scratchDatabase();
  const database = createDatabase(scratch.url, 20);
  const services: Service[] = [];
  try {
    await migrate(database.pool);
    const withRedis = await redisAnswers(redisUrl);
    const variants: [string, Record<string, string>][] = [
      ['no limiter', { RATE_LIMIT_ENABLED: 'false' }],
      ['in-memory limiter', { RATE_LIMIT_ENABLED: 'true' }],
      ...(withRedis
        ? [
            ['Redis limiter', { RATE_LIMIT_ENABLED: 'true', REDIS_URL: redisUrl }] as [
              string,
              Record<string, string>,
            ],
          ]
        : []),
    ];
    const targets: Target[] = [];
    let secret = '';
    for (const [label, env] of variants) {
      const { service, base } = await startInstance(database, scratch.url, env);
      services.push(service);
      secret ||= await apiKeyOf(service);
      targets.push({ label, url: `${base}/bench/whoami`, headers: { 'x-api-key': secret } });
    }
    for (const t of targets) {
      const res = await fetch(t.url, { headers: t.headers });
      if (res.status !== 200) throw new Error(`${t.label}: ${t.url} answered ${res.status}`);
    }
    const load = loadavg().map((l) => l.toFixed(2));
    console.log(
      `rate-limit overhead: ${seconds}s per target in interleaved 1s rounds, ${connections} connections, loopback; load average before: ${load.join(' ')}`,
    );
    if (!withRedis) console.log(`no Redis answers at ${redisUrl}: the Redis target is left out`);
    for (const t of targets) await shot(t, 2); // warm-up: JIT, pool, caches
    const runs = await measure(targets, seconds);
    console.log(
      '| run | req/s | of no limiter (median of rounds) | p99 ms (median of rounds) | server µs/request | errors | non-2xx |',
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const r of runs) {
      console.log(
        `| ${r.label} | ${Math.round(r.reqPerSec)} | ${(r.ratio * 100).toFixed(1)}% | ${r.p99Ms} | ${r.serverUsPerReq.toFixed(0)} | ${r.errors} | ${r.non2xx} |`,
      );
    }
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const floor: Record<string, number> = { 'in-memory limiter': 0.9, 'Redis limiter': 0.75 };
    const failing = runs.filter(
      (r) => (floor[r.label] !== undefined && r.ratio < floor[r.label]!) || r.non2xx > 0,
    );
    if (failing.length > 0) {
      console.log(`below target: ${failing.map((r) => r.label).join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    for (const s of services) await s.close();
    await database.close();
    await scratch.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
