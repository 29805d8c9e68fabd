/**
 * Where a sealed batch's header time goes (issue 16 item 10): a service with batches on takes
 * real signed mints for a few seconds, then this process times, on one sealed batch of
 * ~1,000 actions, reading its actions and each part of its header, and the whole as the
 * header thread does it (read 100 rows at a time, hashed as they come), BENCH_RUNS (15) times.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/header-micro.ts
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../src/db/pool.js';
import { recordText, sortedAffectedObjects } from '../src/modules/batches/content.js';
import { actionsHash, integrityRoot } from '../src/modules/batches/formulas.js';
import { computeHeader, HeaderBuilder } from '../src/modules/batches/header.js';
import { batchActionPages, batchActions } from '../src/modules/ebus/index.js';
import { benchSessions, loadPhase, makeBenchOrg, presign, startBenchService } from './ebus-load.js';
import { median, scratchDatabase } from './scratch-database.js';

const RUNS = Math.min(50, Number(process.env.BENCH_RUNS ?? 15));
if (process.env.BENCH_DATABASE_URL) process.env.DATABASE_URL = process.env.BENCH_DATABASE_URL;

const scratch = await scratchDatabase();
const database = createDatabase(scratch.url, 2);
try {
  await migrate(database.pool);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const sessions = await benchSessions(database, `http://127.0.0.1:${port}`);
  const org = await makeBenchOrg(database, sessions, 20);
  const lanes = org.wallets.map((w) => ({ w, bodies: presign(w, org.templateId, 0, 200) }));
  const child = await startBenchService(port, scratch.url);
  await loadPhase(port, lanes, 3);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const { rows } = await database.db.execute<{
    id: string;
    sequence: number;
    version: number;
    created_at: Date;
    n: number;
  }>(sql`SELECT b.id, b.sequence, b.version, b.created_at,
      (SELECT count(*)::int FROM action_logs a WHERE a.batch_id = b.id) AS n
    FROM batches b WHERE status <> 'building' ORDER BY n DESC LIMIT 1`);
  const b = rows[0]!;
  const request = {
    batch: {
      id: b.id,
      sequence: b.sequence,
      version: b.version,
      when_created: new Date(b.created_at).toISOString(),
    },
    prev: null,
  };
  const t = { read: [] as number[], actions: [] as number[], objects: [] as number[] };
  Object.assign(t, { root: [] as number[], records: [] as number[], header: [] as number[] });
  Object.assign(t, { paged: [] as number[] });
  const times = t as Record<string, number[]>;
  for (let i = 0; i < RUNS; i++) {
    let t0 = performance.now();
    const actions = await batchActions(database.db, b.id);
    const lap = (k: string) => {
      const t1 = performance.now();
      times[k]!.push(t1 - t0);
      t0 = t1;
    };
    lap('read');
    actionsHash(actions.map((a) => a.record.hash));
    lap('actions');
    const objects = sortedAffectedObjects(actions);
    lap('objects');
    integrityRoot(objects, true);
    lap('root');
    for (const a of actions) recordText(request.batch.version, a);
    lap('records');
    await computeHeader({ ...request, actions });
    lap('header');
    // As the header thread does it: 100 rows per statement, hashed as they come.
    const builder = new HeaderBuilder(request);
    for await (const page of batchActionPages(database.db, b.id, 100)) builder.add(page);
    builder.build();
    lap('paged');
  }
  const bytes = JSON.stringify((await batchActions(database.db, b.id)).map((a) => a.record)).length;
  console.log(
    `batch of ${b.n} actions (~${Math.round(bytes / b.n)} bytes of JSON each), ${RUNS} runs, medians: ` +
      Object.entries(times)
        .map(([k, v]) => `${k} ${median(v).toFixed(2)} ms`)
        .join(', '),
  );
} finally {
  await database.close();
  await scratch.drop();
}
