import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import type pg from 'pg';
import { SyntheticTree, type TileRow } from './log-seed-hash.js';

/**
 * Seeds a synthetic transparency log of `n` leaves into a migrated, empty database, fast
 * (bench/log-proofs.ts; docs/log.md, "Proofs"): exactly the rows the log's own append writes
 * for the same leaves, with the same schema, indexes and constraints afterwards:
 *
 * - log_entries: leaf i = SHA-256(i as 8 big-endian bytes), action id `syn_<i>`, written by
 *   PostgreSQL from generate_series (nothing to send), a million rows per statement, its
 *   indexes dropped first and built once at the end (checked identical to the migration's);
 * - log_tiles: every complete node of tree levels 8, 16, …, computed here in the same pass
 *   on the other core (bench/log-seed-hash.ts), in constant memory.
 *
 * No checkpoint: the caller signs one with the root, which the tree computed without the
 * database (as it did the roots at `sizes`, to check consistency proofs against).
 */
export async function seedSyntheticLog(
  pool: pg.Pool,
  n: number,
  sizes: readonly number[],
  progress: (line: string) => void = () => {},
): Promise<{ roots: Map<number, Buffer>; seconds: Record<string, number> }> {
  const seconds: Record<string, number> = {};
  const since = (t: number) => Number(((performance.now() - t) / 1000).toFixed(1));
  const t0 = performance.now();
  const schema = await entriesSchema(pool);
  const filled = await pool.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT FROM log_entries) OR EXISTS (SELECT FROM log_tiles) AS any`,
  );
  if (filled.rows[0]!.any) throw new Error('the log is not empty');
  await pool.query(`
    ALTER TABLE log_entries DROP CONSTRAINT log_entries_pkey,
      DROP CONSTRAINT log_entries_action_id_key;
    DROP INDEX log_entries_leaf`);

  // PostgreSQL writes the entries on one core while this process hashes on the other.
  const entries = (async () => {
    const t = performance.now();
    for (let a = 0; a < n; a += 1_000_000) {
      const b = Math.min(n, a + 1_000_000) - 1;
      await pool.query(
        `INSERT INTO log_entries (log_index, action_id, leaf)
         SELECT i, 'syn_' || i, sha256(int8send(i)) FROM generate_series($1::bigint, $2::bigint) i`,
        [a, b],
      );
      progress(`  entries: ${b + 1} written (${since(t)} s)`);
    }
    seconds.entries = since(t);
  })();
  // Awaited at the end; marked handled now so a failure here does not crash the process first.
  entries.catch(() => {});

  const tree = new SyntheticTree(n, sizes);
  let t = performance.now();
  let reported = 0;
  while (!tree.done) {
    tree.advance(64); // 16,384 leaves, ~75 ms: then the database client gets its turn
    await yieldToIo();
    if (performance.now() - reported > 10_000) {
      reported = performance.now();
      progress(`  tiles: ${tree.hashed} leaves hashed (${since(t)} s)`);
    }
  }
  tree.finish();
  await writeTiles(pool, tree.rows);
  seconds.tiles = since(t);
  await entries;
  progress(`  entries and tiles written (${since(t0)} s); building the indexes…`);

  t = performance.now();
  const client = await pool.connect();
  try {
    // For this session only: sorts in memory, both cores.
    await client.query(`SET maintenance_work_mem = '1GB'`);
    await client.query(`SET max_parallel_maintenance_workers = 2`);
    await client.query(
      `ALTER TABLE log_entries ADD CONSTRAINT log_entries_pkey PRIMARY KEY (log_index)`,
    );
    await client.query(`CREATE INDEX log_entries_leaf ON log_entries USING hash (leaf)`);
    await client.query(
      `ALTER TABLE log_entries ADD CONSTRAINT log_entries_action_id_key UNIQUE (action_id)`,
    );
  } finally {
    client.release();
  }
  const rebuilt = await entriesSchema(pool);
  if (JSON.stringify(rebuilt) !== JSON.stringify(schema)) {
    throw new Error(`log_entries' indexes differ from the migration's: ${JSON.stringify(rebuilt)}`);
  }
  seconds.indexes = since(t);
  // What autovacuum would have done to a log of this size by now: visibility map, hint bits,
  // statistics.
  t = performance.now();
  await pool.query(`VACUUM ANALYZE log_entries, log_tiles`);
  seconds.vacuum = since(t);
  seconds.total = since(t0);
  return { roots: tree.roots, seconds };
}

/** log_entries' indexes and constraints, as PostgreSQL describes them. */
async function entriesSchema(pool: pg.Pool): Promise<unknown> {
  const indexes = await pool.query(
    `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'log_entries' ORDER BY 1`,
  );
  const constraints = await pool.query(
    `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
     WHERE conrelid = 'log_entries'::regclass ORDER BY 1`,
  );
  return { indexes: indexes.rows, constraints: constraints.rows };
}

async function writeTiles(pool: pg.Pool, rows: readonly TileRow[]): Promise<void> {
  for (let k = 0; k < rows.length; k += 200) {
    const part = rows.slice(k, k + 200);
    await pool.query(
      `INSERT INTO log_tiles (level, idx, data)
       SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bytea[])`,
      [part.map((r) => r.level), part.map((r) => r.idx), part.map((r) => r.data)],
    );
  }
}
