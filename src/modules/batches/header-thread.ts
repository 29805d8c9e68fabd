import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { HeaderPriority } from '../../config.js';
import { createDatabase, type Database } from '../../db/pool.js';
import { batchActionPages } from '../ebus/index.js';
import {
  computeHeader,
  HeaderBuilder,
  type ComputedHeader,
  type HeaderInput,
  type HeaderLeaves,
  type HeaderRequest,
} from './header.js';

/**
 * Actions read per statement: a whole batch at the default size (one statement, as fewer
 * statements cost PostgreSQL less), and at most this many rows held for a larger one.
 * Pages of 100, which keep the working set ~75 KB, measured no better for the event bus
 * (docs/performance.md, "Transaction batches", session 9).
 */
const READ_PAGE = 1_000;

/**
 * The batch header thread (header-pool.ts): computes each header it is sent and answers it,
 * or the error's message, under the request's number. A request without actions is read
 * here, on the thread's own connection (`workerData.databaseUrl`), opened at the first.
 */
const port = parentPort!;
const { databaseUrl, priority } = workerData as {
  databaseUrl: string | null;
  priority: HeaderPriority;
};

/** The thread's own id (Linux), or null where there is no /proc/thread-self. */
function threadId(): number | null {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return null;
  }
}

/**
 * Headers are background work: nothing waits on one but the batch's `proven` status (the
 * next close does not: workers/batch-sealer.ts). On Linux a thread has a scheduling policy
 * and a nice value of its own:
 * - `idle` puts it in SCHED_IDLE (through util-linux's `chrt`, as Node has no call for it):
 *   it runs on whatever core time nothing else wants, and a request's thread or a database
 *   backend that wakes takes the core from it at once. At nice 10 it also yields, but the
 *   kernel lets it finish its time slice first, which delays the woken event loop by up to
 *   a few milliseconds (docs/performance.md, "Transaction batches");
 * - `low` (and `idle` where `chrt` is missing) is nice 10;
 * - `normal` leaves it as the process.
 * Answers what it got.
 */
function lowerPriority(wanted: HeaderPriority, tid: number | null): HeaderPriority {
  if (wanted === 'normal') return 'normal';
  if (wanted === 'idle' && tid !== null) {
    try {
      execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], {
        stdio: 'ignore',
        timeout: 5_000,
      });
      return 'idle';
    } catch {
      /* no chrt here: nice 10 instead */
    }
  }
  try {
    setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
    return 'low';
  } catch {
    return 'normal';
  }
}

const tid = threadId();
port.postMessage({ started: { tid, priority: lowerPriority(priority, tid) } });

let database: Database | null = null;

async function header(m: {
  input?: HeaderInput;
  request?: HeaderRequest;
}): Promise<{ header: ComputedHeader; leaves?: HeaderLeaves }> {
  if (m.input) return { header: await computeHeader(m.input) };
  if (!databaseUrl) throw new Error('the header thread has no database');
  database ??= createDatabase(databaseUrl, 1);
  // A page at a time: the thread never holds the whole batch (header.ts, HeaderBuilder).
  const builder = new HeaderBuilder(m.request!);
  for await (const page of batchActionPages(database.db, m.request!.batch.id, READ_PAGE)) {
    builder.add(page);
  }
  // The leaves go back with the header, for the transparency log (sealed-leaves.ts).
  return builder.buildWithLeaves();
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
      (h) => port.postMessage({ n: m.n, ...h }),
      (err: unknown) => port.postMessage({ n: m.n, error: describe(err) }),
    );
  },
);
