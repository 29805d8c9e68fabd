import type pg from 'pg';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { requestsTo } from '../helpers/harness.js';
import { connect, started } from '../helpers/locks.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Members' reports — authenticated reads whose cost grows with an organization's data (the
 * balance history, the indexer's searches) — run on a pool of their own (src/db/pool.ts,
 * createReportsDatabase): REPORTS_DB_POOL_SIZE connections named `ons-reports`, each statement
 * cancelled past REPORTS_STATEMENT_TIMEOUT_MS, a wait bounded by REPORTS_DB_WAIT_MS, and at most
 * REPORTS_PER_ORGANIZATION of them held by one organization (src/db/reports.ts). A report made
 * slow answers 503 code 14 with Retry-After while the main pool (GET /templates) answers at
 * once. A report is made slow the way statement_timeout counts it too: a client of the test's
 * own holds an ACCESS EXCLUSIVE lock on a table it reads.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Connections of the reports' pool running a statement on the service's database. */
async function reportConnections(probe: pg.Client): Promise<number> {
  const { rows } = await probe.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = 'ons-reports'
       AND state <> 'idle'`,
  );
  return rows[0]!.n;
}

/** Backends of a pool (its application_name) that wait for a lock. */
async function waitingIn(probe: pg.Client, pool: 'ons' | 'ons-reports'): Promise<number> {
  const { rows } = await probe.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = $1
       AND cardinality(pg_blocking_pids(pid)) > 0`,
    [pool],
  );
  return rows[0]!.n;
}

function expectRefused(res: LightMyRequestResponse, message: RegExp) {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.json()).toEqual({
    code: 14,
    message: expect.stringMatching(message),
    details: { retry_after_seconds: 5 },
  });
  expect(res.headers['retry-after']).toBe('5');
}

const history = (m: TestMember, qs = 'interval=month&time-range=year') =>
  `/organizations/${m.orgId}/balance/history?${qs}`;

// Every report, and the table its statement needs.
const REPORTS: [string, (m: TestMember) => string, string][] = [
  ['balance history by month', (m) => history(m), 'ledger_entries'],
  ['balance history by hour', (m) => history(m, 'interval=hour&time-range=day'), 'ledger_entries'],
  [
    'balance history, all of it',
    (m) => history(m, 'interval=day&time-range=all'),
    'ledger_entries',
  ],
  ['indexer search', () => '/indexer/search?q=sword', 'objects'],
  ['indexer query by template', () => `/indexer/query?template_id=${newId('template')}`, 'objects'],
  ['indexer query by custom field', () => '/indexer/query?custom.color=red', 'objects'],
];

describe('a report past REPORTS_STATEMENT_TIMEOUT_MS', () => {
  let svc: TestService;
  let hold: pg.Client;
  let probe: pg.Client;
  let viewer: TestMember;
  let other: TestMember;
  const { get } = requestsTo(() => svc);

  beforeAll(async () => {
    svc = await startTestService({ env: { REPORTS_STATEMENT_TIMEOUT_MS: '200' } });
    [hold, probe] = await Promise.all([connect(svc), connect(svc)]);
    viewer = await createMember(svc, { role: 'viewer' });
    other = await createMember(svc, { role: 'member' });
  });
  afterEach(async () => {
    await hold.query('ROLLBACK');
  });
  afterAll(async () => {
    await Promise.all([hold?.end(), probe?.end()]);
    await svc?.stop();
  });

  it.each(REPORTS)('%s answers at once when nothing is slow', async (_name, url) => {
    const res = await get(url(viewer), viewer.headers);
    expect(res.statusCode, res.body).toBe(200);
  });

  it.each(REPORTS)(
    '%s, its table locked, is cancelled: 503 code 14 with Retry-After, the main pool free meanwhile',
    async (_name, url, table) => {
      await hold.query('BEGIN');
      await hold.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      // More reports than the main pool has connections (10 in tests), all waiting on the lock.
      const reports = Array.from({ length: 12 }, () => started(get(url(viewer), viewer.headers)));
      // A main-pool read of another organization answers while they wait.
      const t0 = Date.now();
      const templates = await get('/templates', other.headers);
      expect(templates.statusCode, templates.body).toBe(200);
      expect(Date.now() - t0).toBeLessThan(1_000);
      expect(await waitingIn(probe, 'ons')).toBe(0);
      for (let waited = 0; reports.some((r) => !r.settled) && waited < 5_000; waited += 10) {
        await sleep(10);
      }
      const answeredWhileLocked = reports.every((r) => r.settled);
      await hold.query('ROLLBACK');
      expect(answeredWhileLocked, 'answered before the lock was let go').toBe(true);
      const answers = await Promise.all(reports);
      // Two held the organization's turns and were cancelled; the others were refused their turn.
      const cancelled = answers.filter((r) => /took longer than allowed/.test(r.body));
      expect(cancelled.length).toBeGreaterThanOrEqual(2);
      for (const res of answers) expectRefused(res, /took longer than allowed|still running/);
      expect(await reportConnections(probe)).toBeLessThanOrEqual(4);
    },
  );
});

describe('one organization on the reports pool', () => {
  let svc: TestService;
  let hold: pg.Client;
  let probe: pg.Client;
  let a: TestMember;
  let b: TestMember;
  const { get } = requestsTo(() => svc);

  beforeAll(async () => {
    svc = await startTestService({
      env: {
        REPORTS_DB_POOL_SIZE: '4',
        REPORTS_PER_ORGANIZATION: '2',
        REPORTS_STATEMENT_TIMEOUT_MS: '20000',
        REPORTS_DB_WAIT_MS: '300',
      },
    });
    [hold, probe] = await Promise.all([connect(svc), connect(svc)]);
    a = await createMember(svc, { role: 'viewer' });
    b = await createMember(svc, { role: 'viewer' });
  });
  afterEach(async () => {
    await hold.query('ROLLBACK');
  });
  afterAll(async () => {
    await Promise.all([hold?.end(), probe?.end()]);
    await svc?.stop();
  });

  it.each(REPORTS.filter(([, , table]) => table !== 'organizations'))(
    "%s: holds at most REPORTS_PER_ORGANIZATION connections; another organization's report still runs",
    async (_name, url, table) => {
      await hold.query('BEGIN');
      await hold.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const ofA = Array.from({ length: 8 }, () => started(get(url(a), a.headers)));
      // Two of A's reports wait for the lock on two connections; its six others wait for its
      // turn and are refused after REPORTS_DB_WAIT_MS.
      for (let i = 0; i < 500 && ofA.filter((r) => r.settled).length < 6; i++) await sleep(10);
      const refused = ofA.filter((r) => r.settled);
      expect(refused).toHaveLength(6);
      for (const r of refused) expectRefused(await r, /still running/);
      expect(await reportConnections(probe)).toBe(2);
      // B's report gets a connection of its own: it reaches the table and waits there, past
      // the wait bound, not refused.
      expect(await waitingIn(probe, 'ons-reports')).toBe(2);
      const ofB = started(get(url(b), b.headers));
      for (let i = 0; i < 300 && !ofB.settled && (await waitingIn(probe, 'ons-reports')) < 3; i++) {
        await sleep(10);
      }
      expect(ofB.settled, (ofB.settled && (await ofB).body) || '').toBe(false);
      expect(await waitingIn(probe, 'ons-reports')).toBe(3);
      await sleep(600);
      expect(ofB.settled).toBe(false);
      // The main pool answers meanwhile.
      const templates = await get('/templates', b.headers);
      expect(templates.statusCode, templates.body).toBe(200);
      await hold.query('ROLLBACK');
      expect((await ofB).statusCode).toBe(200);
      for (const r of ofA.filter((x) => !refused.includes(x)))
        expect((await r).statusCode).toBe(200);
      // Done: A's turns are free again.
      expect((await get(url(a), a.headers)).statusCode).toBe(200);
    },
  );

  it('refuses a report that waits REPORTS_DB_WAIT_MS for a connection when other organizations hold them all', async () => {
    const c = await createMember(svc, { role: 'viewer' });
    await hold.query('BEGIN');
    await hold.query('LOCK TABLE ledger_entries IN ACCESS EXCLUSIVE MODE');
    // A and B hold two connections each: the pool's four.
    const holding = [a, a, b, b].map((m) => started(get(history(m), m.headers)));
    for (let i = 0; i < 300 && (await waitingIn(probe, 'ons-reports')) < 4; i++) await sleep(10);
    expect(await waitingIn(probe, 'ons-reports')).toBe(4);
    const t0 = Date.now();
    const res = await get(history(c), c.headers);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expectRefused(res, /temporarily unavailable/);
    expect(holding.every((r) => !r.settled)).toBe(true);
    await hold.query('ROLLBACK');
    for (const r of holding) expect((await r).statusCode).toBe(200);
  });
});
