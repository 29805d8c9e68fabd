import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createDatabase, type Database } from '../../db/pool.js';
import { batchActions } from '../ebus/index.js';
import { computeHeader, type HeaderInput, type HeaderRequest } from './header.js';

/**
 * The batch header thread (header-pool.ts): computes each header it is sent and answers it,
 * or the error's message, under the request's number. A request without actions is read
 * here, on the thread's own connection (`workerData.databaseUrl`), opened at the first.
 */
const port = parentPort!;

// Headers are background work: nothing waits on one but the batch's `proven` status (the
// next close does not: workers/batch-sealer.ts). On Linux a thread has its own nice value;
// below normal (10) lets the event loop and the database's backends, which serve requests,
// go first whenever they compete for a core, while the thread still gets about a tenth of a
// core under full load, and every idle core (docs/performance.md, "Transaction batches").
try {
  setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
} catch {
  /* not allowed here: it runs at the process's priority */
}
const { databaseUrl } = workerData as { databaseUrl: string | null };
let database: Database | null = null;

async function header(m: { input?: HeaderInput; request?: HeaderRequest }) {
  if (m.input) return computeHeader(m.input);
  if (!databaseUrl) throw new Error('the header thread has no database');
  database ??= createDatabase(databaseUrl, 1);
  const actions = await batchActions(database.db, m.request!.batch.id);
  return computeHeader({ ...m.request!, actions });
}

/** An error's message and its causes' (a failed query's names the database's reason). */
function describe(err: unknown): string {
  const e = err as { message?: string; cause?: unknown };
  const cause = e.cause ? `: ${describe(e.cause)}` : '';
  return `${e.message ?? String(err)}${cause}`;
}

port.on(
  'message',
  (m: { n: number; input?: HeaderInput; request?: HeaderRequest; close?: true }) => {
    if (m.close) {
      const db = database;
      database = null;
      void (db?.close() ?? Promise.resolve()).finally(() => port.close());
      return;
    }
    header(m).then(
      (h) => port.postMessage({ n: m.n, header: h }),
      (err: unknown) => port.postMessage({ n: m.n, error: describe(err) }),
    );
  },
);
