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
import autocannon from 'autocannon';
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
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1' });
  const database = createDatabase(url, config.dbPoolSize);
  try {
    await migrate(database.pool);
    let t = performance.now();
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
      // A short warm-up so the JIT and the pool are settled before measuring.
      await autocannon({ url: address + pathAndQuery, connections: 50, duration: 2, workers: 1 });
      t = performance.now();
      const r = await autocannon({
        url: address + pathAndQuery,
        connections: 50,
        duration: seconds,
        workers: 1,
      });
      console.log(
        `${name.padEnd(15)} ${pathAndQuery}\n` +
          `  ${body.objects.length} objects per page; ${Math.round(r.requests.average)} req/s ` +
          `(total ${r.requests.total}); latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ` +
          `max ${r.latency.max} ms; non-2xx ${r.non2xx}; errors ${r.errors}; timeouts ${r.timeouts}`,
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
