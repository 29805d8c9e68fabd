import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signEoa } from '../helpers/ebus.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  makeTestCa,
  startReceiver,
  type Receiver,
  type TestCa,
} from '../helpers/webhook-receiver.js';
import { createWebhook, headersNow, signerWithTemplate } from '../helpers/webhooks.js';
import { freePort, spawnService } from '../helpers/processes.js';

/**
 * Issue 20 item 7: a service killed with SIGKILL right after an action commits, and again
 * while a delivery waits for its retry, loses no delivery: after a restart each arrives,
 * with the same X-Event-ID. The service runs as a real process (node, not tsx's wrapper, so
 * the SIGKILL reaches it) on the database of a test service that made the fixtures.
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
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await receiver.close();
  await helper.stop();
});

async function startService(port: number, deliver: boolean): Promise<ChildProcess> {
  const { child } = await spawnService(
    helper,
    {
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: ca.caFile,
      WEBHOOK_DELIVERY: String(deliver),
    },
    port,
  );
  children.push(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function eventually(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a service killed with SIGKILL', () => {
  it('delivers after a restart what was committed before the kill, and what waited for a retry', async () => {
    const { signer, templateId } = await signerWithTemplate(helper);
    const hook = await createWebhook(helper, signer, receiver.url, [{ template_id: templateId }]);
    const port = await freePort();

    // 1. The action commits; the process dies before any delivery (it was not delivering).
    const first = await startService(port, false);
    const body = await signEoa(helper, signer, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: 0,
    });
    const res = await fetch(`http://127.0.0.1:${port}/ebus/execute`, {
      method: 'POST',
      headers: { ...(await headersNow(helper, signer)), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const applied = (await res.json()) as { action: { id: string } };
    await kill(first);
    expect(receiver.received).toHaveLength(0);

    // 2. After a restart the delivery arrives; the receiver fails it, so it waits for a retry.
    receiver.answer = () => ({ status: 503 });
    const second = await startService(port, true);
    await eventually(() => receiver.received.length === 1);
    const deliveryOf = async () =>
      (
        await helper.container.db.execute<{ id: string; status: string; n: number }>(sql`
          SELECT id, status, jsonb_array_length(attempts) AS n FROM webhook_deliveries
          WHERE webhook_id = ${hook.id}`)
      ).rows;
    await eventually(async () => (await deliveryOf())[0]?.status === 'retrying');
    await kill(second);

    // 3. The retry wait (about 2 minutes) passes while the service is down.
    await helper.container.db.execute(
      sql`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE webhook_id = ${hook.id}`,
    );
    receiver.answer = () => ({ status: 200 });
    const third = await startService(port, true);
    await eventually(async () => (await deliveryOf())[0]?.status === 'done');
    await kill(third);

    expect(receiver.received).toHaveLength(2);
    const [a, b] = receiver.received.map((g) => g.headers['x-event-id']);
    expect(a).toBe(b);
    expect(JSON.parse(receiver.received[1]!.body).event.action.id).toBe(applied.action.id);
    expect(await deliveryOf()).toEqual([{ id: a, status: 'done', n: 2 }]);
  }, 120_000);

  it('sends again, with the same X-Event-ID, a delivery it was in the middle of sending', async () => {
    const { signer, templateId } = await signerWithTemplate(helper);
    const r = await startReceiver(ca, () => 'hang');
    try {
      const hook = await createWebhook(helper, signer, r.url, [{ template_id: templateId }]);
      const port = await freePort();
      const first = await startService(port, true);
      const body = await signEoa(helper, signer, {
        name: 'mint',
        params: { template_id: templateId },
        nonce: 0,
      });
      const res = await fetch(`http://127.0.0.1:${port}/ebus/execute`, {
        method: 'POST',
        headers: { ...(await headersNow(helper, signer)), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await eventually(() => r.received.length === 1);
      await kill(first);
      // Handed to the worker as it was written: claimed, and due when its 60 s lease ends.
      // That lease runs out while the service is down.
      const { rows: leased } = await helper.container.db.execute<{ n: number }>(
        sql`UPDATE webhook_deliveries SET leased_until = now(), next_attempt_at = now()
          WHERE webhook_id = ${hook.id} AND leased_until > now()
            AND next_attempt_at = leased_until RETURNING 1 AS n`,
      );
      expect(leased).toHaveLength(1);
      r.answer = () => ({ status: 200 });
      const second = await startService(port, true);
      await eventually(() => r.received.length === 2);
      const status = async () =>
        (
          await helper.container.db.execute<{ status: string }>(
            sql`SELECT status FROM webhook_deliveries WHERE webhook_id = ${hook.id}`,
          )
        ).rows[0]?.status;
      await eventually(async () => (await status()) === 'done');
      await kill(second);
      const [a, b] = r.received.map((g) => g.headers['x-event-id']);
      expect(a).toBe(b);
    } finally {
      await r.close();
    }
  }, 120_000);
});
