/**
 * Benchmark: GET /public/objects over 100,000 public objects.
 *
 *   npx tsx bench/public-objects.ts [count] [seconds]
 *
 * Uses BENCH_DATABASE_URL (or DATABASE_URL) — a new database is created on that server and
 * dropped at the end — else an embedded PostgreSQL in a temporary directory. Seeds
 * `count` (default 100,000) objects set-based, starts the service in this process on a
 * loopback port and runs autocannon (50 connections, `seconds` each, default 10) for the
 * list with no filter, with an owner filter and with a geohash filter. Prints the figures.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { startEmbedded, type EmbeddedServer } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../src/db/pool.js';
import { createLogger } from '../src/http/logger.js';
import { systemClock } from '../src/lib/clock.js';
import { createService } from '../src/server.js';
import { seedPublicObjects } from './seed-objects.js';

const count = Number(process.argv[2] ?? 100_000);
const seconds = Number(process.argv[3] ?? 10);

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
}

const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/** autocannon at 50 connections for `seconds`, in a child process (its JSON result). */
async function cannon(url: string, seconds: number): Promise<CannonResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [autocannonBin, '-c', '50', '-d', String(seconds), '-j', url],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as CannonResult;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function main() {
  const external = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || null;
  let embedded: EmbeddedServer | null = null;
  let dir: string | null = null;
  if (!external) {
    dir = await mkdtemp(path.join(tmpdir(), 'ons-bench-'));
    embedded = await startEmbedded(dir);
  }
  const adminUrl = external ?? embedded!.url;
  const dbName = `ons_bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = withDatabase(adminUrl, dbName);
  const config = loadConfig({
    DATABASE_URL: url,
    LOG_LEVEL: 'warn',
    PORT: '0',
    HOST: '127.0.0.1',
    // One client address makes every request: the per-address limit would answer 429s.
    RATE_LIMIT_ENABLED: 'false',
    // 1000 (the default) measures the service as shipped; 0 measures the query path alone.
    PUBLIC_LIST_CACHE_MS: process.env.PUBLIC_LIST_CACHE_MS ?? '1000',
  });
  const database = createDatabase(url, config.dbPoolSize);
  try {
    await migrate(database.pool);
    const t = performance.now();
    const seed = await seedPublicObjects(database.db, count);
    console.log(`seeded ${count} objects in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const logger = createLogger('warn');
    const service = await createService({ config, database, clock: systemClock, logger });
    const address = await service.app.listen({ port: 0, host: '127.0.0.1' });
    const cases = [
      ['no filter', '/public/objects?limit=20'],
      ['owner filter', `/public/objects?limit=20&owner=${seed.sampleOwner}`],
      ['geohash filter', `/public/objects?limit=20&geo_hash=${seed.sampleGeoPrefix}`],
    ] as const;
    console.log(
      `load average before: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const [name, pathAndQuery] of cases) {
      const probe = await fetch(address + pathAndQuery);
      const body = (await probe.json()) as { objects: unknown[] };
      // autocannon runs in its own process, so this process's CPU time is the service's.
      await cannon(address + pathAndQuery, 2);
      const cpu = process.cpuUsage();
      const r = await cannon(address + pathAndQuery, seconds);
      const used = process.cpuUsage(cpu);
      const cpuUsPerReq = (used.user + used.system) / Math.max(1, r.requests.total);
      console.log(
        `${name.padEnd(15)} ${pathAndQuery}\n` +
          `  ${body.objects.length} objects per page; ${Math.round(r.requests.average)} req/s ` +
          `(total ${r.requests.total}); latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ` +
          `max ${r.latency.max} ms; non-2xx ${r.non2xx}; errors ${r.errors}; ` +
          `service CPU ${Math.round(cpuUsPerReq)} µs/request`,
      );
    }
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    await service.close();
  } finally {
    await database.close();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    if (embedded) await embedded.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
