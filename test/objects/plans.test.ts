import { sql } from 'drizzle-orm';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedPublicObjects, type SeedResult } from '../../bench/seed-objects.js';
import { createPublicDatabase } from '../../src/db/pool.js';
import { preparedRows } from '../../src/db/prepared.js';
import { listPublic } from '../../src/modules/objects/public-list.js';
import type { PublicObjectsQuery } from '../../src/modules/objects/schema.js';
import { useTestService } from '../helpers/harness.js';

/**
 * The public list's queries are index-backed: EXPLAIN of the SQL the service runs (captured
 * from the pool) on 30,000 seeded objects names the partial indexes of 0007_objects.sql.
 */
let seed: SeedResult;
const captured: { text: string; values: unknown[] }[] = [];

const svc = useTestService();
beforeAll(async () => {
  seed = await seedPublicObjects(svc.container.db, 30_000, { owners: 1000 });
  // The public list runs on the public reads' pool (src/db/pool.ts, createPublicDatabase).
  const pool = svc.container.publicDatabase.pool;
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  // Record the statements the list runs (drizzle calls pool.query with a config object).
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const cfg = args[0] as { text?: string; values?: unknown[] };
    if (cfg && typeof cfg === 'object' && cfg.text?.includes('FROM objects')) {
      captured.push({
        text: cfg.text,
        values: cfg.values ?? (args[1] as unknown[] | undefined) ?? [],
      });
    }
    return original(...args);
  };
});

async function planOf(url: string): Promise<string> {
  captured.length = 0;
  const res = await svc.app.inject({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  const q = captured.find((c) => c.text.includes('is_public'));
  expect(q).toBeDefined();
  const { rows } = await svc.database.pool.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (COSTS OFF) ${q!.text}`,
    q!.values,
  );
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  console.log(`${url}\n${plan}\n`);
  return plan;
}

describe('public object list query plans', () => {
  it('the unfiltered list walks objects_public_created', async () => {
    const plan = await planOf('/public/objects?limit=20');
    expect(plan).toMatch(/Index Scan using objects_public_created/);
    expect(plan).not.toMatch(/Seq Scan|Sort/);
  });

  it('the next page seeks into the same index', async () => {
    const first = (await svc.app.inject({ method: 'GET', url: '/public/objects?limit=20' })).json();
    const plan = await planOf(`/public/objects?limit=20&next=${first.next}`);
    expect(plan).toMatch(/Index Cond: \(ROW\(created_at, id\) < ROW/);
  });

  it('the owner filter uses objects_public_owner without sorting', async () => {
    const plan = await planOf(`/public/objects?limit=20&owner=${seed.sampleOwner}`);
    expect(plan).toMatch(/Index Scan using objects_public_owner/);
    expect(plan).not.toMatch(/Seq Scan|Sort/);
  });

  it('the geohash prefix filter uses an index, not a scan of the table', async () => {
    const plan = await planOf(`/public/objects?limit=20&geo_hash=${seed.sampleGeoPrefix}`);
    expect(plan).toMatch(
      /Index Scan using objects_public_(geo|created)|Bitmap Index Scan on objects_public_geo/,
    );
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it('sorting by when_modified uses objects_public_modified', async () => {
    const plan = await planOf('/public/objects?limit=20&sortBy=when_modified');
    expect(plan).toMatch(/Index Scan using objects_public_modified/);
  });

  it('autocomplete uses the name prefix index', async () => {
    const plan = await planOf('/public/objects?limit=20&autocomplete=object%201234');
    expect(plan).toMatch(/objects_public_name/);
  });

  it('the seeded data is what the plans ran over', async () => {
    const { rows } = await svc.container.db.execute<{ n: string }>(
      sql`SELECT count(*) AS n FROM objects WHERE is_public`,
    );
    expect(Number(rows[0]!.n)).toBe(30_000);
  });
});

/**
 * A named statement is planned for its values five times; from the sixth run on PostgreSQL
 * may keep a generic plan, made for no value, whenever it costs no more than those five did.
 * A caller choosing the values (a LIKE prefix, a date bound) could so leave every value on
 * a plan that reads the whole table (docs/decisions.md, "The public list plans a prefix or
 * date filter for its values"). Each case runs one shape six times with values of one kind,
 * then once with another on the same connection, and explains that last run as PostgreSQL
 * ran it: `EXPLAIN EXECUTE` of its named statement, or of its text with its values.
 */
describe('public list plans after six runs of a shape', () => {
  // The seeded objects were modified in the 30,000 s before 2026-11-01.
  const base = Date.parse('2026-11-01T00:00:00.000Z') - 30_000_000;
  const modified = (from: string, to: string) =>
    ({ limit: 100, 'when_modified[$gte]': from, 'when_modified[$lt]': to }) as PublicObjectsQuery;
  const window = (from: number) =>
    modified(
      new Date(base + from * 1000).toISOString(),
      new Date(base + (from + 600) * 1000).toISOString(),
    );

  async function lastPlan(runs: PublicObjectsQuery[], last: PublicObjectsQuery): Promise<string> {
    // One connection, opened as the service opens its public pool, with the service's runner.
    const database = createPublicDatabase(svc.database.url, {
      ...svc.config.publicDb,
      poolSize: 1,
    });
    const sent: { name?: string; text: string; values: unknown[] }[] = [];
    const pool = database.pool as unknown as { query: (...args: unknown[]) => unknown };
    const original = pool.query.bind(pool);
    pool.query = (...args: unknown[]) => {
      const cfg = args[0] as { name?: string; text?: string; values?: unknown[] };
      if (cfg?.text?.includes('FROM objects')) {
        sent.push({ name: cfg.name, text: cfg.text, values: cfg.values ?? [] });
      }
      return original(...args);
    };
    try {
      const run = preparedRows(database.pool, 32);
      for (const q of runs) await listPublic(run, q);
      await listPublic(run, last);
      const s = sent.at(-1)!;
      const literal = (v: unknown) =>
        typeof v === 'number' ? String(v) : pg.escapeLiteral(String(v));
      const { rows } = s.name
        ? await database.pool.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN (COSTS OFF) EXECUTE ${s.name}(${s.values.map(literal).join(', ')})`,
          )
        : await database.pool.query<{ 'QUERY PLAN': string }>({
            text: `EXPLAIN (COSTS OFF) ${s.text}`,
            values: s.values,
          });
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      console.log(`${JSON.stringify(last)} after ${runs.length} runs\n${plan}\n`);
      return plan;
    } finally {
      await database.close();
    }
  }

  it('a narrow geohash prefix after six city-wide ones seeks its prefix in objects_public_geo', async () => {
    // The busiest two-character prefixes: about 600 objects each, one seeded city.
    const { rows } = await svc.container.db.execute<{ p: string }>(
      sql`SELECT left(geo_hash, 2) AS p FROM objects GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 6`,
    );
    const plan = await lastPlan(
      rows.map((r) => ({ geo_hash: r.p, limit: 100 })),
      { geo_hash: 'zzzzz', limit: 100 },
    );
    expect(plan).toMatch(/Index Cond: \(\(geo_hash ~>=~ 'zzzzz'::text\)/);
  });

  it('a date range over every object after six ten-minute ones walks objects_public_created without sorting', async () => {
    const plan = await lastPlan(
      [1000, 5000, 9000, 12_000, 15_000, 20_000].map(window),
      modified('2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z'),
    );
    expect(plan).toMatch(/Index Scan using objects_public_created/);
    expect(plan).not.toMatch(/Sort/);
  });
});
