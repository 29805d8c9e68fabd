import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTION_FEE, createSigner, createTemplate, fund, signEoa } from '../helpers/ebus.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { sleep, spawnService } from '../helpers/processes.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Idempotency across processes: two built services (dist/) on one database answer one
 * `Idempotency-Key` and one signed action as one request, whichever process each retry
 * reaches. A retry waiting for the other process's first request is woken by its notice
 * (migration 0044): the processes read a waited key again only every 5 s without one.
 */
let helper: TestService;
const children: ChildProcess[] = [];
let urls: string[] = [];

beforeAll(async () => {
  helper = await startTestService();
  for (let i = 0; i < 2; i++) {
    const started = await spawnService(helper, { IDEMPOTENCY_POLL_MS: '5000' });
    children.push(started.child);
    urls.push(started.url);
  }
}, 120_000);
afterAll(async () => {
  await Promise.all(
    children
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map((c) => {
        const exited = new Promise((resolve) => c.once('exit', resolve));
        c.kill('SIGTERM');
        return exited;
      }),
  );
  await helper.stop();
  urls = [];
});

async function send(url: string, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text,
    replayed: res.headers.get('idempotent-replayed'),
    /** When the whole answer had arrived (performance.now()). */
    at: performance.now(),
  };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within 10 s: ${what}`);
    await sleep(5);
  }
}

/**
 * A template created with `key` on A, held running (the test holds the organization's
 * template lock, which the creation waits for) while B receives the same request and waits for
 * it; then let go, at a random point of B's wait. Both answers, and whether B tried to take the
 * key again while it waited.
 */
async function heldOnAThenRetriedOnB(m: TestMember, key: string) {
  const headers = { ...m.headers, 'idempotency-key': key };
  const body = { name: key };
  const scope = `org:${m.orgId}/wallet:${m.walletId}`;
  // Each try to take the key locks its row (INSERT … ON CONFLICT DO UPDATE, even when its
  // WHERE keeps the row as it is): the row's xmax names the last one.
  const lastTry = async () => {
    const { rows } = await helper.container.db.execute<{ xmax: string }>(
      sql`SELECT xmax::text AS xmax FROM idempotency_keys WHERE scope = ${scope} AND status IS NULL`,
    );
    return rows[0]?.xmax ?? null;
  };
  const lock = await helper.database.pool.connect();
  let held = true;
  try {
    await lock.query('BEGIN');
    await lock.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`templates:${m.orgId}`]);
    const first = send(urls[0]!, '/templates', headers, body);
    await until(async () => (await lastTry()) !== null, 'A takes the key');
    const retry = send(urls[1]!, '/templates', headers, body);
    let tried: string | null = null;
    await until(async () => (tried = await lastTry()) !== '0', 'B tries to take it and waits');
    await sleep(100 + Math.random() * 50);
    const triedAgain = (await lastTry()) !== tried;
    await lock.query('COMMIT');
    held = false;
    const [a, b] = await Promise.all([first, retry]);
    return { a, b, triedAgain };
  } finally {
    // A connection left in the transaction (the test failed) is closed, not reused.
    lock.release(held);
  }
}

describe('two processes on one database', () => {
  it('answer 40 concurrent requests with one key as one request', async () => {
    const m = await createMember(helper, { role: 'owner' });
    const body = { name: 'across-processes' };
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send(urls[i % 2]!, '/templates', { ...m.headers, 'idempotency-key': 'k-1' }, body),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(39);
    const { rows } = await helper.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM templates WHERE organization_id = ${m.orgId}`,
    );
    expect(rows[0]!.n).toBe(1);
  });

  it("wake a retry on B when A's first request is answered, without polling", async () => {
    const m = await createMember(helper, { role: 'owner' });
    const late: number[] = [];
    for (let i = 0; i < 7; i++) {
      const { a, b, triedAgain } = await heldOnAThenRetriedOnB(m, `wake-${i}`);
      expect(a.status, a.body).toBe(200);
      expect(b.replayed).toBe('true');
      expect(b.body).toBe(a.body);
      // B asked nothing while it waited (it looked every 50 ms before the notice).
      expect(triedAgain, 'B looked at the key again while it waited').toBe(false);
      // Without the notice B would look again only after 5 s.
      expect(b.at - a.at, 'B answered long after A').toBeLessThan(250);
      late.push(b.at - a.at);
    }
    // The median: 4–8 ms on a quiet machine. Bounded loosely, for a loaded one: the look
    // above (xmax) and the 250 ms are what fail without the notice.
    late.sort((x, y) => x - y);
    expect(late[3], `B after A (ms): ${late.map((t) => t.toFixed(1)).join(', ')}`).toBeLessThan(
      100,
    );
  });

  it("answer a signed action applied by one with the other's replay", async () => {
    const owner = await createSigner(helper, { role: 'owner' });
    await fund(helper, owner.orgId, ACTION_FEE * 5n);
    const templateId = await createTemplate(helper, owner.orgId);
    const action = await signEoa(helper, owner, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: 0,
    });
    const first = await send(urls[0]!, '/ebus/execute', owner.headers, action);
    expect(first.status, first.body).toBe(200);
    const again = await send(urls[1]!, '/ebus/execute', owner.headers, action);
    expect(again.status, again.body).toBe(200);
    expect(again.replayed).toBe('true');
    expect(JSON.parse(again.body)).toEqual(JSON.parse(first.body));
  });
});
