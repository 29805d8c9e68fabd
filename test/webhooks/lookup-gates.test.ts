import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError, Code } from '../../src/lib/errors.js';
import { BUSY_LOOKUP_SHARE } from '../../src/modules/webhooks/http-client/delivery-client.js';
import { dnsResolver } from '../../src/modules/webhooks/http-client/dns-resolver.js';
import {
  gatedResolver,
  LOOKUP_SLOTS,
  SAVE_LOOKUP_QUEUE,
  SAVE_LOOKUP_SLOTS,
} from '../../src/modules/webhooks/http-client/lookup-gate.js';
import { createWebhooks, type Webhooks } from '../../src/modules/webhooks/wiring.js';
import { WebhookDeliveryWorker } from '../../src/workers/webhook-delivery.js';
import { startNameServer, type TestNameServer } from '../helpers/name-server.js';
import { webhookSuite } from '../helpers/webhook-suite.js';
import { execute, ownerAuthOf, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * Host lookups of saves and of deliveries (docs/webhooks.md, "Addresses" and "Answers,
 * retries and statuses"; security review of src/modules/webhooks, 2026-11-29): callers'
 * saves whose names answer slowly must not make other organizations' deliveries wait, and a
 * delivery whose time went to waiting for a lookup is not counted against its receiver.
 * Through the service's own resolver and gates, against a name server of the test's own.
 */
const suite = webhookSuite();
let ns: TestNameServer;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  ns = await startNameServer();
});
beforeEach(() => {
  ns.hold();
});
afterEach(async () => {
  ns.release();
  for (const close of closers.splice(0)) await close();
});
afterAll(async () => {
  await ns.close();
});

function webhooksWith(opts: Partial<Parameters<typeof createWebhooks>[0]>): Webhooks {
  const svc = suite.svc;
  const hooks = createWebhooks({
    db: svc.container.db,
    clock: svc.clock,
    config: svc.config,
    logger: svc.container.logger,
    sessions: svc.container.identity.sessions,
    ...opts,
  });
  closers.push(() => hooks.client.close());
  return hooks;
}

async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
}

const deliveriesOf = async (webhookId: string) =>
  (
    await suite.svc.container.db.execute<{ status: string; round_attempts: number; n: number }>(
      sql`SELECT status, round_attempts, jsonb_array_length(attempts) AS n
        FROM webhook_deliveries WHERE webhook_id = ${webhookId}`,
    )
  ).rows;

describe('saves and deliveries', () => {
  it('have lookup gates of their own: saves whose names never answer, more than every delivery slot, delay no delivery', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver();
    const hooks = webhooksWith({ nameServers: ns.servers, timeoutMs: 2_000 });
    const hook = await hooks.service.create(ownerAuthOf(signer), {
      url: `https://victim.ok.test:${r.port}/hook`,
      rules: [{ template_id: templateId }],
    });
    // More saves at once than the deliveries' gate has slots, each naming a host whose name
    // server does not answer (as many callers' keys could send, each within its rate limit).
    const saves = Array.from({ length: LOOKUP_SLOTS + 1 }, (_, i) =>
      hooks.service.update(ownerAuthOf(signer), hook.id, { url: `https://n${i}.hang.test/h` }).then(
        () => 'saved',
        (err: unknown) =>
          err instanceof AppError && err.code === Code.UNAVAILABLE ? 'busy' : 'refused',
      ),
    );
    await eventually(() => ns.held().size >= SAVE_LOOKUP_SLOTS);
    await new Promise((r) => setTimeout(r, 100));

    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    // Delivered within its 2 s: its lookup did not wait behind the saves'.
    await new WebhookDeliveryWorker(hooks.runner, svc.container.logger).runOnce();
    expect(r.received).toHaveLength(1);
    expect((await deliveriesOf(hook.id)).map((d) => d.status)).toEqual(['done']);

    // The saves' own gate: its slots run, its queue waits, the rest are answered 503 at once.
    ns.release();
    const outcomes = await Promise.all(saves);
    expect(outcomes.filter((o) => o === 'busy')).toHaveLength(
      LOOKUP_SLOTS + 1 - SAVE_LOOKUP_SLOTS - SAVE_LOOKUP_QUEUE,
    );
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(
      SAVE_LOOKUP_SLOTS + SAVE_LOOKUP_QUEUE,
    );
  }, 30_000);
});

describe('an attempt whose time went to its host lookup', () => {
  /**
   * A delivery whose receiver answers in `answerMs`, in a process whose one lookup slot is
   * held by a name that does not answer until `releaseMs`: the delivery's lookup waits that
   * long for the slot, then the rest of the attempt runs.
   */
  async function attemptAfterWait(releaseMs: number, answerMs: number, timeoutMs: number) {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver(() => ({ status: 200, delayMs: answerMs }));
    const gate = gatedResolver(dnsResolver({ servers: ns.servers }), 1);
    const hooks = webhooksWith({ resolve: gate, timeoutMs });
    const hook = await hooks.service.create(ownerAuthOf(signer), {
      url: `https://victim.ok.test:${r.port}/hook`,
      rules: [{ template_id: templateId }],
    });
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    const holding = gate('slot.hang.test').catch(() => undefined);
    const release = setTimeout(() => ns.release(), releaseMs);
    await new WebhookDeliveryWorker(hooks.runner, svc.container.logger).runOnce();
    clearTimeout(release);
    await holding;
    return { r, deliveries: await deliveriesOf(hook.id) };
  }

  it(`is not counted when more than ${BUSY_LOOKUP_SHARE * 100} % of its time went to waiting for a lookup slot`, async () => {
    // 4 s to answer; the lookup waits 3 s (75 %), then the receiver takes 2 s: out of time.
    const { r, deliveries } = await attemptAfterWait(3_000, 2_000, 4_000);
    expect(r.received).toHaveLength(1);
    expect(deliveries).toEqual([{ status: 'pending', round_attempts: 0, n: 0 }]);
  }, 30_000);

  it('still counts when the wait was short and the receiver took the rest', async () => {
    // The lookup waits 0.5 s (12.5 %); the receiver does not answer within the 4 s.
    const { deliveries } = await attemptAfterWait(500, 6_000, 4_000);
    expect(deliveries).toEqual([{ status: 'retrying', round_attempts: 1, n: 1 }]);
  }, 30_000);
});
