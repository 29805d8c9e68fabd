import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { requestsTo } from '../helpers/harness.js';
import { connect, started, waitsOrDone } from '../helpers/locks.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Anonymous public reads run on a pool of their own (src/db/pool.ts, createPublicDatabase):
 * PUBLIC_DB_POOL_SIZE connections, named `ons-public`, on which PostgreSQL cancels every
 * statement past PUBLIC_STATEMENT_TIMEOUT_MS; a read that waits longer than PUBLIC_DB_WAIT_MS
 * for one of them is refused. Either answers 503 code 14 with Retry-After, never a 500, and
 * the main pool (callers with a credential) is untouched. A read is made slow the way
 * statement_timeout counts it too: a client of the test's own holds an ACCESS EXCLUSIVE lock
 * on a table the read needs.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ZERO_HASH = `0x${'0'.repeat(64)}`;
const ADDRESS = `0x${'1'.repeat(40)}`;

/** Holds `table` locked while `request` runs, for at most `maxMs`; then lets go. */
async function whileLocked<T>(
  hold: pg.Client,
  table: string,
  request: () => Promise<T>,
  maxMs = 5_000,
): Promise<{ answer: T; answeredWhileLocked: boolean }> {
  await hold.query('BEGIN');
  await hold.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  const pending = started(request());
  for (let waited = 0; !pending.settled && waited < maxMs; waited += 10) await sleep(10);
  const answeredWhileLocked = pending.settled;
  await hold.query('ROLLBACK');
  return { answer: await pending, answeredWhileLocked };
}

/** Connections of the public pool open on the service's database. */
async function publicConnections(probe: pg.Client): Promise<number> {
  const { rows } = await probe.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = 'ons-public'`,
  );
  return rows[0]!.n;
}

describe('a public read past PUBLIC_STATEMENT_TIMEOUT_MS', () => {
  let svc: TestService;
  let hold: pg.Client;
  let probe: pg.Client;
  let member: TestMember;
  const { get } = requestsTo(() => svc);

  beforeAll(async () => {
    svc = await startTestService({ env: { PUBLIC_STATEMENT_TIMEOUT_MS: '100' } });
    [hold, probe] = await Promise.all([connect(svc), connect(svc)]);
    member = await createMember(svc, { role: 'member' });
  });
  afterEach(async () => {
    await hold.query('ROLLBACK');
  });
  afterAll(async () => {
    await Promise.all([hold?.end(), probe?.end()]);
    await svc?.stop();
  });

  it('answers at once when the read is quick', async () => {
    const res = await get('/public/objects');
    expect(res.statusCode, res.body).toBe(200);
  });

  // Every anonymous read, and the table its first statement reads.
  it.each([
    ['/public/objects', 'objects'],
    ['/public/objects?owner=someone&include_faces=true', 'objects'],
    [`/public/objects/${newId('object')}/history`, 'objects'],
    [`/public/templates/${newId('template')}`, 'templates'],
    [`/public/templates/${newId('template')}/versions/1`, 'template_versions'],
    ['/public/credentials/AAAA', 'credentials'],
    [`/public/wallets/${ADDRESS}/signers/${ADDRESS}`, 'wallets'],
    ['/batches', 'batches'],
    [`/batches/${newId('batch')}`, 'batches'],
    [`/batches/${newId('batch')}/content`, 'batches'],
    [`/batches/${newId('batch')}/proofs/${newId('action')}`, 'batches'],
    ['/log/checkpoint', 'log_checkpoints'],
    ['/log/tile/0/000.p/1', 'log_checkpoints'],
    ['/log/tile/entries/000.p/1', 'log_checkpoints'],
    [`/log/proof/inclusion?hash=${ZERO_HASH}&size=1`, 'log_entries'],
    ['/log/proof/consistency?from=1&to=1', 'log_checkpoints'],
    [`/ebus/action-logs/${newId('action')}/receipt`, 'action_logs'],
  ])('GET %s (%s locked) is cancelled: 503 code 14 with Retry-After', async (url, table) => {
    const { answer: res, answeredWhileLocked } = await whileLocked(hold, table, () => get(url));
    expect(answeredWhileLocked, 'answered before the lock was let go').toBe(true);
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toEqual({
      code: 14,
      message: expect.stringMatching(/took longer than allowed/),
      details: { retry_after_seconds: 5 },
    });
    expect(res.headers['retry-after']).toBe('5');
    const line = svc.logs.find((l) => l.msg === 'statement cancelled: past its time limit');
    expect(line?.level).toBe(40);
  });

  it.each([
    ['/objects', 'objects', 200],
    // The receipt route takes an optional credential: with one, it reads on the main pool.
    [`/ebus/action-logs/${newId('action')}/receipt`, 'action_logs', 404],
  ])(
    'GET %s with a credential (%s locked) waits for the lock, past that limit',
    async (url, table, status) => {
      await hold.query('BEGIN');
      await hold.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const reading = started(get(url, member.headers));
      // It reached the table and waits there …
      expect(await waitsOrDone(probe, table, reading)).not.toBeNull();
      // … for ten times the public reads' limit, and is not cut.
      await sleep(1_000);
      expect(reading.settled).toBe(false);
      await hold.query('ROLLBACK');
      const res = await reading;
      expect(res.statusCode, res.body).toBe(status);
    },
  );
});

describe('the public pool under load', () => {
  let svc: TestService;
  let hold: pg.Client;
  let probe: pg.Client;
  let member: TestMember;
  const { get } = requestsTo(() => svc);

  beforeAll(async () => {
    svc = await startTestService({
      env: {
        PUBLIC_DB_POOL_SIZE: '2',
        PUBLIC_STATEMENT_TIMEOUT_MS: '10000',
        PUBLIC_DB_WAIT_MS: '300',
      },
    });
    [hold, probe] = await Promise.all([connect(svc), connect(svc)]);
    member = await createMember(svc, { role: 'member' });
  });
  afterAll(async () => {
    await hold?.query('ROLLBACK');
    await Promise.all([hold?.end(), probe?.end()]);
    await svc?.stop();
  });

  it('never holds more than PUBLIC_DB_POOL_SIZE connections; the rest wait a bounded time', async () => {
    await hold.query('BEGIN');
    await hold.query('LOCK TABLE objects IN ACCESS EXCLUSIVE MODE');
    const reads = Array.from({ length: 8 }, (_, i) =>
      started(get(`/public/objects?limit=${i + 1}`)),
    );
    let most = 0;
    // Two reads wait for the lock on the pool's two connections; the six others wait for a
    // connection, and are refused after PUBLIC_DB_WAIT_MS.
    for (let i = 0; i < 500 && reads.filter((r) => r.settled).length < 6; i++) {
      most = Math.max(most, await publicConnections(probe));
      await sleep(10);
    }
    most = Math.max(most, await publicConnections(probe));
    const refused = reads.filter((r) => r.settled);
    expect(refused).toHaveLength(6);
    for (const r of refused) {
      const res = await r;
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ code: 14, details: { retry_after_seconds: 5 } });
      expect(res.headers['retry-after']).toBe('5');
    }
    expect(most).toBe(2);
    // Meanwhile a caller with a credential is served on the main pool.
    const me = await get('/wallets/me', member.headers);
    expect(me.statusCode, me.body).toBe(200);
    await hold.query('ROLLBACK');
    // The two that held the connections finish once the lock is gone.
    for (const r of reads.filter((x) => !refused.includes(x))) {
      expect((await r).statusCode).toBe(200);
    }
    expect(await publicConnections(probe)).toBeLessThanOrEqual(2);
  });
});
