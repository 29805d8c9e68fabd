import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWebhooks, type Webhooks } from '../../src/modules/webhooks/wiring.js';
import { WebhookDeliveryWorker } from '../../src/workers/webhook-delivery.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  makeTestCa,
  startReceiver,
  type Receiver,
  type TestCa,
} from '../helpers/webhook-receiver.js';
import { call, execute, ownerAuthOf, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * Issue 20 items 5 and 8: addresses are checked again when connecting (a name that resolved
 * to a public address when saved and to loopback now gets no connection), answers have 10 s
 * (shortened here), and a hanging receiver does not hold up the others.
 */
let svc: TestService;
let ca: TestCa;
const receivers: Receiver[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  ca = await makeTestCa();
  svc = await startTestService({
    env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_CA_FILE: ca.caFile },
  });
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await svc.stop();
});

async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
  const r = await startReceiver(ca, answer);
  receivers.push(r);
  return r;
}

/** The webhooks feature on the test's database with its own resolver and settings. */
function webhooksWith(opts: {
  allowLoopback: boolean;
  resolve?: (host: string) => Promise<string[]>;
  timeoutMs?: number;
}): Webhooks {
  const hooks = createWebhooks({
    db: svc.container.db,
    clock: svc.clock,
    config: {
      ...svc.config,
      webhooks: { ...svc.config.webhooks, allowLoopback: opts.allowLoopback },
    },
    logger: svc.container.logger,
    sessions: svc.container.identity.sessions,
    resolve: opts.resolve,
    timeoutMs: opts.timeoutMs,
  });
  closers.push(() => hooks.client.close());
  return hooks;
}

describe('the connect-time address check', () => {
  it('makes no connection when a name saved as public resolves to loopback when delivering', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    let answer = '93.184.215.14';
    const hooks = webhooksWith({ allowLoopback: false, resolve: async () => [answer] });
    const hook = await hooks.service.create(ownerAuthOf(signer), {
      url: `https://rebind.example:${r.port}/hook`,
      rules: [{ template_id: templateId }],
    });
    answer = '127.0.0.1';
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await new WebhookDeliveryWorker(hooks.runner, svc.container.logger).runOnce();
    expect(r.connections).toBe(0);
    const [d] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(d.status).toBe('retrying');
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0].status_code).toBeNull();
    // The delivery log names no address: it is the service's network's, not the receiver's.
    expect(d.attempts[0].error).toBe(
      'rebind.example resolves to a non-public address; not connected',
    );
  });

  it('connects to the checked address when the policy allows it (the same name, loopback allowed)', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hooks = webhooksWith({ allowLoopback: true, resolve: async () => ['127.0.0.1'] });
    await hooks.service.create(ownerAuthOf(signer), {
      url: `https://rebind.example:${r.port}/hook`,
      rules: [{ template_id: templateId }],
    });
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await new WebhookDeliveryWorker(hooks.runner, svc.container.logger).runOnce();
    expect(r.received).toHaveLength(1);
  });

  it('refuses a literal private address saved before a policy change without connecting', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    // Saved while loopback was allowed, delivered by a worker that does not allow it.
    const hook = await call(svc, signer, 'POST', '/webhooks', {
      url: r.url,
      rules: [{ template_id: templateId }],
    });
    const strict = webhooksWith({ allowLoopback: false });
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await new WebhookDeliveryWorker(strict.runner, svc.container.logger).runOnce();
    expect(r.connections).toBe(0);
    const [d] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(d.attempts[0].error).toBe('127.0.0.1 is loopback; not connected');
  });
});

describe('the answer time', () => {
  it('is a failure when a receiver does not answer in time, answers too late, or never finishes its body', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const hanging = await receiver(() => 'hang');
    // Generous against a loaded machine: the request must reach the receiver within the limit.
    const late = await receiver(() => ({ status: 200, delayMs: 4000 }));
    // Headers at once, then a byte every 200 ms: no gap reaches the body's idle limit, but the
    // whole answer never completes within the attempt's time.
    const dripping = await receiver(() => 'drip');
    const hooks = webhooksWith({ allowLoopback: true, timeoutMs: 2000 });
    const a = await hooks.service.create(ownerAuthOf(signer), {
      url: hanging.url,
      rules: [{ template_id: templateId }],
    });
    const b = await hooks.service.create(ownerAuthOf(signer), {
      url: late.url,
      rules: [{ template_id: templateId }],
    });
    const c = await hooks.service.create(ownerAuthOf(signer), {
      url: dripping.url,
      rules: [{ template_id: templateId }],
    });
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    const started = performance.now();
    await new WebhookDeliveryWorker(hooks.runner, svc.container.logger).runOnce();
    // Every attempt ended at its deadline, not at the receivers' pace (the drip never ends).
    expect(performance.now() - started).toBeLessThan(6000);
    for (const [hook, r] of [
      [a, hanging],
      [b, late],
      [c, dripping],
    ] as const) {
      expect(r.received).toHaveLength(1);
      const [d] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
      expect(d.status).toBe('retrying');
      expect(d.attempts[0]).toMatchObject({
        status_code: null,
        error: 'no complete answer within 2 s',
      });
    }
  });
});

describe('isolation', () => {
  it('lets a fast receiver get everything while a hanging one holds only its own few connections', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const hanging = await receiver(() => 'hang');
    const fast = await receiver();
    const timeoutMs = 4000;
    const hooks = webhooksWith({ allowLoopback: true, timeoutMs });
    const rules = [{ template_id: templateId }];
    await hooks.service.create(ownerAuthOf(signer), { url: hanging.url, rules });
    await hooks.service.create(ownerAuthOf(signer), { url: fast.url, rules });
    const count = 30;
    for (let nonce = 0; nonce < count; nonce++) {
      await execute(svc, signer, 'mint', { template_id: templateId }, nonce);
    }
    const worker = new WebhookDeliveryWorker(hooks.runner, svc.container.logger, {
      perWebhook: 4,
      idlePollMs: 20,
    });
    const started = performance.now();
    worker.start();
    try {
      while (fast.received.length < count && performance.now() - started < timeoutMs) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const elapsed = performance.now() - started;
      // All of the fast receiver's deliveries arrived before the hanging one's first time-out:
      // nothing of it waited behind the hanging receiver.
      expect(fast.received).toHaveLength(count);
      expect(elapsed).toBeLessThan(timeoutMs);
      expect(hanging.inFlight).toBe(4);
      expect(hanging.maxInFlight).toBe(4);
    } finally {
      await worker.stop();
    }
  });
});
