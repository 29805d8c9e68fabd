import { createHash } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import type { Executor } from './pool.js';

/** How a runner should run one query. */
export interface RunOptions {
  /**
   * The query's best plan depends on its parameters' values (a LIKE prefix, a range bound):
   * run it unnamed, planned for its values on every run. A named statement is planned for
   * its values five times; after that PostgreSQL may keep a generic plan, made for no value,
   * and use it for every value (docs/decisions.md, "The public list plans a prefix or date
   * filter for its values").
   */
  planForValues?: boolean;
}

/** Runs a query and answers its rows: how hot-path repos take their database. */
export type RowRunner = <T>(query: SQL, opts?: RunOptions) => Promise<T[]>;

const dialect = new PgDialect();

/** Rows through an Executor (the database or a transaction): the ordinary path. */
export function rowsVia(exec: Executor): RowRunner {
  return async <T>(query: SQL) => (await exec.execute(query)).rows as T[];
}

/**
 * Rows through a named prepared statement on the pool: each connection parses a query
 * shape once and PostgreSQL may reuse its plan. For hot paths whose SQL takes a bounded
 * number of shapes (the name is a digest of the text). A named statement stays on each
 * connection that ran it for the connection's life (~40 KB of the server's memory each), so
 * a runner whose callers choose the shape (the public list's filters combine into ~10⁵)
 * gives `maxShapes`: the first that many shapes are named, any other runs unnamed (parsed
 * each time, kept nowhere). A query run with `planForValues` is never named.
 */
export function preparedRows(pool: pg.Pool, maxShapes = Infinity): RowRunner {
  const named = new Set<string>();
  return async <T>(query: SQL, opts?: RunOptions) => {
    const { sql: text, params } = dialect.sqlToQuery(query);
    const name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    const nameIt = opts?.planForValues !== true;
    if (nameIt && !named.has(name) && named.size < maxShapes) named.add(name);
    try {
      const res =
        nameIt && named.has(name)
          ? await pool.query({ name, text, values: params })
          : await pool.query({ text, values: params });
      return res.rows as T[];
    } catch (err) {
      throw new StatementFailed(name, err);
    }
  };
}

/**
 * A named statement's failure: names the statement so the log can say which one failed
 * without its parameters (src/http/logger.ts); the driver's error is the cause.
 */
export class StatementFailed extends Error {
  constructor(
    readonly statement: string,
    cause: unknown,
  ) {
    super(`statement ${statement} failed`, { cause });
    this.name = 'StatementFailed';
  }
}
