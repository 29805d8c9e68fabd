import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedPublicObjects, type SeedResult } from '../../bench/seed-objects.js';
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
  const pool = svc.database.pool;
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
