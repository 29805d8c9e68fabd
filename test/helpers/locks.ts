import pg from 'pg';
import type { TestService } from './service.js';

// For tests that stop the service at a chosen point by holding a lock from a client of their
// own, then look at who waits for it (pg_stat_activity).

/** A client of the test's own on the service's database. */
export async function connect(svc: TestService): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: svc.config.databaseUrl! });
  await c.connect();
  return c;
}

/** The backend pid of a client. */
export const pidOf = async (c: pg.Client): Promise<number> =>
  (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

/** A started request that says when it has settled. */
export function started<T>(p: Promise<T>): Promise<T> & { settled: boolean } {
  const s = p.finally(() => (s.settled = true)) as Promise<T> & { settled: boolean };
  s.settled = false;
  return s;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once a backend running a query that matches `pattern` waits for a lock held by
 * `blocker` (a pid; any holder when omitted), or once `done` has settled (the code under
 * test did not wait: the test goes on and the end state decides). Answers the waiting
 * backend's pid, or null when it did not wait. `probe` is a client that holds nothing.
 */
export async function waitsOrDone(
  probe: pg.Client,
  pattern: string,
  done: { settled: boolean },
  blocker?: number,
): Promise<number | null> {
  for (let i = 0; i < 1_000; i++) {
    if (done.settled) return null;
    const { rows } = await probe.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND query ~ $1
         AND ${blocker === undefined ? 'cardinality(pg_blocking_pids(pid)) > 0' : '$2 = ANY(pg_blocking_pids(pid))'}`,
      blocker === undefined ? [pattern] : [pattern, blocker],
    );
    if (rows.length > 0) return rows[0]!.pid;
    await sleep(10);
  }
  throw new Error(`nothing running /${pattern}/ waited and nothing finished`);
}
