import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type pg from 'pg';

/**
 * The built-in dump, for when no pg_dump can read the server (the embedded PostgreSQL ships
 * none, and pg_dump refuses a server newer than itself): every table of the `public` schema
 * as JSON lines (`<table>.jsonl`, one `row_to_json` per row, generated columns left out) and
 * every sequence's position, all read in one REPEATABLE READ snapshot, as pg_dump would. The
 * schema is not dumped: a restore rebuilds it from this release's migrations, up to the
 * migrations the dump was taken at (docs/self-hosting.md).
 */
export interface TableDump {
  name: string;
  columns: string[];
  rows: number;
}

export interface SequenceDump {
  name: string;
  lastValue: string;
  isCalled: boolean;
}

export interface LogicalDump {
  tables: TableDump[];
  sequences: SequenceDump[];
}

const FETCH_ROWS = 1000;
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The tables of `public` (without the migrations' own bookkeeping), sorted by name. */
async function listTables(client: pg.ClientBase): Promise<{ name: string; columns: string[] }[]> {
  const { rows } = await client.query<{ name: string; columns: string[] }>(`
    SELECT c.relname AS name,
      array_agg(a.attname::text ORDER BY a.attnum) AS columns
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attgenerated = ''
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    GROUP BY c.relname ORDER BY c.relname`);
  return rows;
}

/**
 * Writes the dump into `dir` within an open REPEATABLE READ transaction on `client` (the
 * caller's snapshot: the same one its row counts and its file copy start from).
 */
export async function dumpTables(client: pg.ClientBase, dir: string): Promise<LogicalDump> {
  const tables: TableDump[] = [];
  for (const table of await listTables(client)) {
    const out = createWriteStream(path.join(dir, `${table.name}.jsonl`));
    const cols = table.columns.map(ident).join(', ');
    await client.query(
      `DECLARE ons_dump NO SCROLL CURSOR FOR
       SELECT row_to_json(r)::text AS j FROM (SELECT ${cols} FROM ${ident(table.name)}) r`,
    );
    let count = 0;
    for (;;) {
      const { rows } = await client.query<{ j: string }>(`FETCH ${FETCH_ROWS} FROM ons_dump`);
      if (rows.length === 0) break;
      count += rows.length;
      if (!out.write(rows.map((r) => r.j).join('\n') + '\n')) await once(out, 'drain');
    }
    await client.query('CLOSE ons_dump');
    out.end();
    await once(out, 'finish');
    tables.push({ name: table.name, columns: table.columns, rows: count });
  }
  const { rows: seqs } = await client.query<{ name: string }>(
    `SELECT sequencename AS name FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`,
  );
  const sequences: SequenceDump[] = [];
  for (const { name } of seqs) {
    const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
      `SELECT last_value::text, is_called FROM ${ident(name)}`,
    );
    sequences.push({ name, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called });
  }
  return { tables, sequences };
}

/**
 * Loads a dump written by dumpTables into a database whose schema the migrations have just
 * built, in one transaction on `client` (the caller's): every table emptied first (the
 * migrations may seed rows), triggers and foreign-key checks off while rows are copied
 * (`session_replication_role = replica`: the rows are the ones the triggers already made),
 * then each sequence set where it was. Needs a superuser, as the embedded server's user is.
 */
export async function loadTables(
  client: pg.ClientBase,
  dir: string,
  dump: LogicalDump,
): Promise<void> {
  await client.query(`SET LOCAL session_replication_role = replica`);
  if (dump.tables.length > 0) {
    await client.query(`TRUNCATE ${dump.tables.map((t) => ident(t.name)).join(', ')}`);
  }
  for (const table of dump.tables) {
    const cols = table.columns.map(ident).join(', ');
    const insert = `INSERT INTO ${ident(table.name)} (${cols}) OVERRIDING SYSTEM VALUE
      SELECT ${cols} FROM json_populate_recordset(NULL::${ident(table.name)}, $1::json)`;
    const lines = createInterface({
      input: createReadStream(path.join(dir, `${table.name}.jsonl`)),
      crlfDelay: Infinity,
    });
    let batch: string[] = [];
    let count = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      await client.query(insert, [`[${batch.join(',')}]`]);
      count += batch.length;
      batch = [];
    };
    for await (const line of lines) {
      if (line === '') continue;
      batch.push(line);
      if (batch.length >= FETCH_ROWS) await flush();
    }
    await flush();
    if (count !== table.rows) {
      throw new Error(
        `${table.name}: the archive holds ${count} rows, its manifest says ${table.rows}`,
      );
    }
  }
  for (const s of dump.sequences) {
    await client.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [
      ident(s.name),
      s.lastValue,
      s.isCalled,
    ]);
  }
}
