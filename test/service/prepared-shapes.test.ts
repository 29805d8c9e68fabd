import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedRows } from '../../src/db/prepared.js';
import { freshDatabaseUrl } from '../helpers/db.js';

/**
 * A named statement stays on its connection for the connection's life, so a runner whose
 * callers choose the query's shape (the public list's filters) names only its first
 * `maxShapes` shapes: an anonymous caller cycling through filter combinations could
 * otherwise grow every connection's server memory without end (docs/decisions.md).
 */
let pool: pg.Pool;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabaseUrl(), max: 1 });
});
afterAll(async () => {
  await pool?.end();
});

const namedOnTheConnection = async () =>
  Number((await pool.query('SELECT count(*) AS n FROM pg_prepared_statements')).rows[0].n);

/** Forty query shapes, each run twice. */
async function runShapes(run: ReturnType<typeof preparedRows>) {
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 40; i++) {
      const rows = await run<{ n: number }>(sql`SELECT ${i}::int + ${sql.raw(String(i))} AS n`);
      expect(rows).toEqual([{ n: 2 * i }]);
    }
  }
}

describe('preparedRows', () => {
  it('names at most maxShapes shapes; the others run unnamed and answer the same', async () => {
    await runShapes(preparedRows(pool, 8));
    expect(await namedOnTheConnection()).toBe(8);
  });

  it('never names a query run with planForValues, planned for its values each time', async () => {
    await pool.end();
    pool = new pg.Pool({ connectionString: pool.options.connectionString, max: 1 });
    const run = preparedRows(pool);
    for (let i = 0; i < 7; i++) {
      const rows = await run<{ n: number }>(sql`SELECT ${i}::int AS n`, { planForValues: true });
      expect(rows).toEqual([{ n: i }]);
    }
    expect(await namedOnTheConnection()).toBe(0);
  });

  it('names every shape without a cap', async () => {
    // A new connection: node-postgres remembers per connection which names it prepared.
    await pool.end();
    pool = new pg.Pool({ connectionString: pool.options.connectionString, max: 1 });
    await runShapes(preparedRows(pool));
    expect(await namedOnTheConnection()).toBe(40);
  });
});
