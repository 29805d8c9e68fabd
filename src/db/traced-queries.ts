import { AsyncResource } from 'node:async_hooks';
import type pg from 'pg';
import type { SpanHandle, Tracing } from '../lib/tracing.js';

type QueryFn = (...args: unknown[]) => unknown;

/** The text and name of a query as `client.query` takes it (text, or a config object). */
function describe(first: unknown): { text: string; name: string | undefined } | null {
  if (typeof first === 'string') return { text: first, name: undefined };
  if (first !== null && typeof first === 'object') {
    const q = first as { text?: unknown; name?: unknown; submit?: unknown };
    // A submittable (cursor, stream) reports its end through its own events: not traced.
    if (typeof q.submit === 'function' || typeof q.text !== 'string') return null;
    return { text: q.text, name: typeof q.name === 'string' ? q.name : undefined };
  }
  return null;
}

/**
 * Gives each statement a connection runs a span (a child of the active one: the request's,
 * or the group commit's; none outside a trace), whichever way it is sent — `pool.query`,
 * drizzle's `db.execute`, a transaction's client, a named prepared statement — since all of
 * them end in `client.query`. Installed on each new connection of the pool, and only when
 * tracing is on (src/db/pool.ts); the statement's text is recorded (cut at 2,000
 * characters), never its parameters.
 */
export function traceClientQueries(client: pg.PoolClient, t: Tracing): void {
  const query = client.query.bind(client) as QueryFn;
  const traced: QueryFn = (...args) => {
    const q = describe(args[0]);
    const span = q ? t.startQuery(q.text, q.name) : null;
    if (!span) return query(...args);
    const at = args.findIndex((a) => typeof a === 'function');
    if (at >= 0) {
      const callback = args[at] as (err: unknown, res: unknown) => void;
      args[at] = (err: unknown, res: unknown) => {
        span.end(err ?? undefined);
        callback(err, res);
      };
      return query(...args);
    }
    return settle(query(...args), span);
  };
  (client as unknown as { query: QueryFn }).query = traced;
}

function settle(result: unknown, span: SpanHandle): unknown {
  if (result instanceof Promise) {
    return result.then(
      (res: unknown) => {
        span.end();
        return res;
      },
      (err: unknown) => {
        span.end(err);
        throw err;
      },
    );
  }
  span.end();
  return result;
}

/**
 * A caller that waits for a free connection is called back from whichever query released
 * one: bound here to its own context, so its statement's span joins its own trace.
 */
export function keepContextAcrossConnect(pool: pg.Pool): void {
  type Connect = (cb?: (...args: unknown[]) => void) => unknown;
  const connect = pool.connect.bind(pool) as Connect;
  (pool as unknown as { connect: Connect }).connect = (cb) =>
    cb ? connect(AsyncResource.bind(cb)) : connect();
}
