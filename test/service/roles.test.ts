import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainProblems } from '../helpers/batches.js';
import { signEoa, type EoaSigner } from '../helpers/ebus.js';
import { sleep, spawnService } from '../helpers/processes.js';
import { exchange } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  makeTestCa,
  startReceiver,
  type Receiver,
  type TestCa,
} from '../helpers/webhook-receiver.js';
import { createWebhook, headersNow, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * Issue 31 item 3: ONS_ROLE. One `api` process and two `worker` processes (one started as
 * `npm run worker` does, one as `npm start` with ONS_ROLE=worker) share one database: the API
 * process runs no background loop, the workers answer nothing but /healthz, /readyz and
 * /metrics, and between them every webhook delivery arrives exactly once and the batches form
 * one unbroken chain. The processes run the built service (dist/) on the database of a test
 * service that made the fixtures.
 */
let helper: TestService;
let ca: TestCa;
let receiver: Receiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ca = await makeTestCa();
  helper = await startTestService({
    env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_CA_FILE: ca.caFile },
  });
  receiver = await startReceiver(ca);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await receiver.close();
  await helper.stop();
});

const COMMON = {
  WEBHOOK_ALLOW_LOOPBACK: 'true',
  BATCH_MAX_ACTIONS: '4',
  BATCH_MAX_SECONDS: '1',
  BATCH_PROVE_DELAY_MS: '0',
};

async function start(env: Record<string, string>, entry: 'main.js' | 'worker.js' = 'main.js') {
  const started = await spawnService(
    helper,
    { ...COMMON, WEBHOOK_CA_FILE: ca.caFile, ...env },
    undefined,
    entry,
  );
  children.push(started.child);
  return started;
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

async function eventually(check: () => boolean | Promise<boolean>, ms = 60_000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(200);
  }
}

interface Minter {
  signer: EoaSigner;
  templateId: string;
  nonce: number;
}

/** One mint through `url`; answers the applied action's id. */
async function mint(url: string, m: Minter): Promise<string> {
  const body = await signEoa(helper, m.signer, {
    name: 'mint',
    params: { template_id: m.templateId },
    nonce: m.nonce++,
  });
  const res = await fetch(`${url}/ebus/execute`, {
    method: 'POST',
    headers: { ...(await headersNow(helper, m.signer)), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { action: { id: string } }).action.id;
}

async function counts() {
  const { rows } = await helper.container.db.execute<{
    sealed: number;
    pending: number;
    done: number;
    deliveries: number;
  }>(sql`
    SELECT (SELECT count(*)::int FROM batches WHERE status <> 'building') AS sealed,
      (SELECT count(*)::int FROM webhook_deliveries WHERE status <> 'done') AS pending,
      (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'done') AS done,
      (SELECT count(*)::int FROM webhook_deliveries) AS deliveries`);
  return rows[0]!;
}

/** Every action logged is in a batch that is sealed and proven. */
async function settled(): Promise<boolean> {
  const { rows } = await helper.container.db.execute<{ n: number }>(sql`
    SELECT (SELECT count(*)::int FROM action_logs WHERE batch_id IS NULL)
      + (SELECT count(*)::int FROM batches WHERE status = 'proving')
      + (SELECT count(*)::int FROM action_logs a JOIN batches b ON b.id = a.batch_id
          WHERE b.status = 'building') AS n`);
  return rows[0]!.n === 0;
}

describe('ONS_ROLE', () => {
  it('an api process runs no loops; two workers deliver every event once and build one chain', async () => {
    const minters: Minter[] = [];
    for (let i = 0; i < 2; i++) {
      const { signer, templateId } = await signerWithTemplate(helper);
      await createWebhook(helper, signer, receiver.url, [{ template_id: templateId }]);
      minters.push({ signer, templateId, nonce: 0 });
    }
    const applied: string[] = [];

    // 1. The API process alone: actions are applied and queued, nothing is sent or sealed.
    const api = await start({ ONS_ROLE: 'api' });
    for (const m of minters) for (let k = 0; k < 3; k++) applied.push(await mint(api.url, m));
    await sleep(2_500); // more than twice BATCH_MAX_SECONDS: a sealer would have sealed
    expect(receiver.received).toHaveLength(0);
    expect(await counts()).toMatchObject({ sealed: 0, done: 0, deliveries: 6 });

    // 2. Two workers: one as `npm run worker`, one as `npm start` with ONS_ROLE=worker.
    const [w1, w2] = await Promise.all([start({}, 'worker.js'), start({ ONS_ROLE: 'worker' })]);
    for (const w of [w1, w2]) {
      expect((await fetch(`${w.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${w.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
      const metrics = await fetch(`${w.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('db_pool_connections');
      for (const path of ['/openapi.json', '/ebus/execute', '/console/', '/docs', '/v3/objects']) {
        const res = await fetch(`${w.url}${path}`);
        expect(res.status, path).toBe(404);
        expect(((await res.json()) as { code: number }).code).toBe(5);
      }
      expect((await fetch(`${w.url}/ebus/execute`, { method: 'POST' })).status).toBe(404);
      // What Node answers itself, in the error shape as on the API (raw-http.test.ts).
      const port = Number(new URL(w.url).port);
      for (const [text, status, code] of [
        ['GET /healthz HTTP/1.1\r\n\r\n', 400, 3],
        ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n', 417, 3],
        ['CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n', 404, 5],
      ] as const) {
        const answer = await exchange(port, text);
        expect(answer.status, text).toBe(status);
        expect((JSON.parse(answer.body) as { code: number }).code, text).toBe(code);
      }
    }

    // 3. More actions, concurrently from both callers, while both workers run.
    await Promise.all(
      minters.map(async (m) => {
        for (let k = 0; k < 7; k++) applied.push(await mint(api.url, m));
      }),
    );
    expect(applied).toHaveLength(20);
    await eventually(async () => (await counts()).done === 20 && (await settled()));
    await sleep(1_000); // a second sending of any of them would arrive meanwhile
    const codes = await Promise.all([w1, w2, api].map((p) => stop(p.child)));
    expect(codes).toEqual([0, 0, 0]);

    // Every delivery arrived once: 20 requests, 20 distinct event ids, one per action.
    expect(receiver.received).toHaveLength(20);
    const eventIds = receiver.received.map((r) => r.headers['x-event-id']);
    expect(new Set(eventIds).size).toBe(20);
    const actionIds = receiver.received.map(
      (r) => (JSON.parse(r.body) as { event: { action: { id: string } } }).event.action.id,
    );
    expect([...actionIds].sort()).toEqual([...applied].sort());
    // One unbroken chain holding every action once.
    expect(await chainProblems(helper.container.db)).toEqual([]);
    const { rows } = await helper.container.db.execute<{ n: number }>(
      sql`SELECT count(DISTINCT id)::int AS n FROM action_logs WHERE batch_id IS NOT NULL`,
    );
    expect(rows[0]!.n).toBe(20);
    expect((await counts()).sealed).toBeGreaterThanOrEqual(5);
  }, 180_000);
});
