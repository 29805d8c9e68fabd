import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { PgTransaction } from 'drizzle-orm/pg-core';
import type { NodePgQueryResultHKT } from 'drizzle-orm/node-postgres';
import { tracing } from '../lib/tracing.js';
import { keepContextAcrossConnect, traceClientQueries } from './traced-queries.js';

export type Db = NodePgDatabase;
export type Tx = PgTransaction<NodePgQueryResultHKT>;
/** Anything that runs a query: the database or an open transaction. Repos take this. */
export type Executor = Pick<Db, 'execute'>;

export interface Database {
  pool: pg.Pool;
  db: Db;
  /** The connection string it was opened with (for a thread that opens its own connection). */
  url: string;
  close(): Promise<void>;
}

// int8 (counts, nonces) as JS numbers; numeric (wei) stays a string so money never
// touches a float. Only queries sent with `pool.query` see this: drizzle's `db.execute`
// replaces the parsers per query (see src/db/values.ts). The one such caller is
// src/db/prepared.ts (`preparedRows`, the public object list's named statements), which
// reads no int8 column today; this keeps any it reads later a number, as repos promise.
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format) as unknown;
  }) as pg.CustomTypesConfig['getTypeParser'],
};

export interface DatabaseOptions {
  /**
   * For a pool that runs only named statements whose plan does not depend on their
   * parameters (the event bus's group statements): PostgreSQL plans each once per connection
   * (`plan_cache_mode=force_generic_plan`) instead of five times before it settles on that
   * plan, and the connections stay open, so their plans do too.
   */
  genericPlans?: boolean;
  /**
   * PostgreSQL cancels any statement of the pool's connections that runs longer than this
   * (ms; `statement_timeout`, which counts lock waits): it answers SQLSTATE 57014. Set with the
   * connection's start-up options, so it costs no round trip. Unset: no limit.
   */
  statementTimeoutMs?: number;
  /** How long a query waits for a connection (a free one, or a new one's connect); 10 s. */
  connectionTimeoutMs?: number;
  /** The connections' `application_name` (pg_stat_activity); 'ons'. */
  applicationName?: string;
}

/** The application_name of the public reads' pool (createPublicDatabase). */
export const PUBLIC_APPLICATION_NAME = 'ons-public';
/** The application_name of the reports' pool (createReportsDatabase). */
export const REPORTS_APPLICATION_NAME = 'ons-reports';

/** The settings of a bounded pool (config.publicDb, config.reportsDb). */
export interface BoundedDatabaseSettings {
  poolSize: number;
  statementTimeoutMs: number;
  waitMs: number;
}

/**
 * A pool apart from the main one, for reads whose cost its callers can drive up: at most
 * `poolSize` connections, every statement on them cancelled by PostgreSQL past
 * `statementTimeoutMs` (57014), a connection waited for at most `waitMs`. Either refusal
 * answers 503 code 14 with Retry-After (src/http/errors.ts), and the main pool's connections
 * are never taken (docs/architecture.md, "Pools").
 */
export function createBoundedDatabase(
  connectionString: string,
  settings: BoundedDatabaseSettings,
  applicationName: string,
): Database {
  return createDatabase(connectionString, settings.poolSize, {
    statementTimeoutMs: settings.statementTimeoutMs,
    connectionTimeoutMs: settings.waitMs,
    applicationName,
  });
}

/**
 * The pool of anonymous public reads (GET /public/*, the batch explorer, the transparency
 * log): reads that anyone can make slow hold at most `poolSize` connections, each for a
 * bounded time, and never the main pool's (docs/decisions.md, "Anonymous public reads run on
 * a pool of their own").
 */
export function createPublicDatabase(
  connectionString: string,
  settings: BoundedDatabaseSettings,
): Database {
  return createBoundedDatabase(connectionString, settings, PUBLIC_APPLICATION_NAME);
}

/**
 * The pool of authenticated reads whose cost grows with an organization's data (the balance
 * history, the indexer's searches): bounded like the public one, with settings of its own, so
 * a member's slow reports never hold the main pool's connections (docs/self-hosting.md,
 * "Reports"). Who may hold how many of its connections: src/db/reports.ts.
 */
export function createReportsDatabase(
  connectionString: string,
  settings: BoundedDatabaseSettings,
): Database {
  return createBoundedDatabase(connectionString, settings, REPORTS_APPLICATION_NAME);
}

export function createDatabase(
  connectionString: string,
  max = 20,
  opts: DatabaseOptions = {},
): Database {
  // No JIT: the service's statements are short, and a statement whose row estimate is
  // large only because its ranges arrive as parameters (a log proof's leaf ranges) paid
  // ~20 ms of JIT compilation to run in ~1 ms (docs/performance.md, "Transparency log
  // proofs").
  const options = ['-c jit=off'];
  if (opts.genericPlans) options.push('-c plan_cache_mode=force_generic_plan');
  if (opts.statementTimeoutMs !== undefined) {
    options.push(`-c statement_timeout=${Math.trunc(opts.statementTimeoutMs)}`);
  }
  const pool = new pg.Pool({
    connectionString,
    max,
    types,
    // Kept: a new connection plans every named statement again.
    idleTimeoutMillis: opts.genericPlans ? 0 : 30_000,
    allowExitOnIdle: opts.genericPlans === true,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 10_000,
    application_name: opts.applicationName ?? 'ons',
    options: options.join(' '),
  });
  // An idle client that errors (server restart) must not crash the process.
  pool.on('error', () => undefined);
  // With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT), each statement gets a span; off, nothing.
  const t = tracing();
  if (t) {
    pool.on('connect', (client) => traceClientQueries(client, t));
    keepContextAcrossConnect(pool);
  }
  const db = drizzle(pool);
  return {
    pool,
    db,
    url: connectionString,
    close: () => pool.end(),
  };
}
