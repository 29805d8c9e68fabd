import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookDeliveryWorker } from '../../src/workers/webhook-delivery.js';
import { signEoa, type EoaSigner } from '../helpers/ebus.js';
import type { TestService } from '../helpers/service.js';
import type { Receiver } from '../helpers/webhook-receiver.js';
import { webhookSuite } from '../helpers/webhook-suite.js';
import {
  call,
  createWebhook,
  execute,
  expectRotationSignatures,
  signerWithTemplate,
} from '../helpers/webhooks.js';

/**
 * The fast lane (src/modules/webhooks/handoff.ts): while this process's delivery worker runs,
 * the deliveries a group writes are written claimed for it and sent as soon as the group has
 * committed, with no claim query; the outbox stays the record, and what the worker cannot
 * take is released for a later claim.
 */
const suite = webhookSuite();
const MINUTE = 60_000;
const workers: WebhookDeliveryWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

/** A running worker that takes handed deliveries and claims only once, when it starts. */
function handoffWorker(svc: TestService, perWebhook = 32): WebhookDeliveryWorker {
  const w = new WebhookDeliveryWorker(svc.container.webhooks.runner, svc.container.logger, {
    handoff: svc.container.webhooks.handoff,
    idlePollMs: 3_600_000,
    perWebhook,
    flushMs: 1,
  });
  workers.push(w);
  w.start();
  return w;
}

async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const rows = async (svc: TestService, webhookId: string) =>
  (
    await svc.container.db.execute<{
      id: string;
      status: string;
      claim_id: string | null;
      leased_until: string | null;
      n: number;
    }>(sql`SELECT id, status, claim_id, leased_until::text, jsonb_array_length(attempts) AS n
      FROM webhook_deliveries WHERE webhook_id = ${webhookId} ORDER BY id`)
  ).rows;

/** Several actions of one signer in one request: they apply as one group. */
async function mintMany(
  svc: TestService,
  signer: EoaSigner,
  templateId: string,
  from: number,
  n: number,
) {
  const actions = [];
  for (let i = 0; i < n; i++) {
    actions.push(
      await signEoa(svc, signer, {
        name: 'mint',
        params: { template_id: templateId },
        nonce: from + i,
      }),
    );
  }
  const body = await call(svc, signer, 'POST', '/ebus/actions/batch', { actions });
  expect((body.results as { status: string }[]).every((r) => r.status === 'applied')).toBe(true);
}

describe('handed deliveries', () => {
  it('are sent as soon as the action commits, without a claim, and recorded once', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r: Receiver = await suite.receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    handoffWorker(svc);
    // The worker's one claim (at start) has found nothing; it does not claim again.
    await new Promise((res) => setTimeout(res, 100));
    const applied = await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await eventually(() => r.received.length === 1);
    const body = JSON.parse(r.received[0]!.body);
    expect(body.event.action.id).toBe(applied.action.id);
    await eventually(async () => (await rows(svc, hook.id))[0]?.status === 'done');
    expect(await rows(svc, hook.id)).toEqual([
      { id: body.id, status: 'done', claim_id: null, leased_until: null, n: 1 },
    ]);
  });

  it('are signed with the key as the group statement read it, the previous one for 24 hours', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const rotated = await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    handoffWorker(svc);
    await expectRotationSignatures(
      svc,
      r,
      { signer, templateId },
      { old: hook.signing_key, rotated: rotated.signing_key },
      (n) => eventually(() => r.received.length === n),
    );
    // Switched off: the next action is not matched, so nothing is handed or sent.
    await call(svc, signer, 'PUT', `/webhooks/${hook.id}`, { is_active: false });
    await execute(svc, signer, 'mint', { template_id: templateId }, 2);
    await new Promise((res) => setTimeout(res, 200));
    expect(r.received).toHaveLength(2);
  });

  it('carry the same body bytes as a retry read back from the outbox', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver(() => ({ status: 503 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const worker = handoffWorker(svc);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await eventually(async () => (await rows(svc, hook.id))[0]?.status === 'retrying');
    await worker.stop();
    r.answer = () => ({ status: 200 });
    svc.clock.advance(3 * MINUTE);
    await suite.deliver();
    expect(r.received).toHaveLength(2);
    const [handed, retried] = r.received;
    expect(retried!.body).toBe(handed!.body);
    expect(retried!.headers['x-event-id']).toBe(handed!.headers['x-event-id']);
    expect((await rows(svc, hook.id))[0]).toMatchObject({ status: 'done', n: 2 });
  });

  it('beyond the webhook room are released for a later claim, and all arrive', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver(() => ({ status: 200, delayMs: 300 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const worker = handoffWorker(svc, 1);
    await mintMany(svc, signer, templateId, 0, 3);
    // One goes at once; the two beyond the room of one are released, not held.
    await eventually(async () => {
      const now = await rows(svc, hook.id);
      return now.length === 3 && now.filter((x) => x.claim_id === null).length === 2;
    });
    expect(r.received.length).toBeLessThanOrEqual(1);
    await worker.stop();
    await suite.deliver();
    expect(new Set(r.received.map((g) => g.headers['x-event-id'])).size).toBe(3);
    expect((await rows(svc, hook.id)).map((x) => x.status)).toEqual(['done', 'done', 'done']);
  });

  it('are due only when their lease ends, so the due range holds none in flight', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver(() => ({ status: 200, delayMs: 2_000 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    handoffWorker(svc);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await eventually(() => r.received.length === 1);
    // In flight: due when the lease ends (should this process die now), not at creation.
    const dueRange = async (at: Date) =>
      (
        await svc.container.db.execute<{ lease: string; n: number }>(sql`
          SELECT (leased_until - created_at)::text AS lease,
            (next_attempt_at <= ${at})::int AS n
          FROM webhook_deliveries
          WHERE webhook_id = ${hook.id} AND next_attempt_at = leased_until`)
      ).rows;
    const now = svc.clock.now();
    expect(await dueRange(now)).toEqual([{ lease: '00:01:00', n: 0 }]);
    expect(await dueRange(new Date(now.getTime() + MINUTE))).toEqual([{ lease: '00:01:00', n: 1 }]);
    await eventually(async () => (await rows(svc, hook.id))[0]?.status === 'done');
  });

  it('are not claimed while no worker takes them (a worker stopped at once)', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const worker = handoffWorker(svc);
    await worker.stop();
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    expect(await rows(svc, hook.id)).toMatchObject([
      { status: 'pending', claim_id: null, leased_until: null, n: 0 },
    ]);
    expect(r.received).toHaveLength(0);
    await suite.deliver();
    expect(r.received).toHaveLength(1);
  });
});
