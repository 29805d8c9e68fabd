import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { BUSY_RETRY_MS, RETRY_JITTER } from '../../src/modules/webhooks/delivery-runner.js';
import type { HostResolver } from '../../src/modules/webhooks/http-client/address-policy.js';
import { gatedResolver, LookupsBusy } from '../../src/modules/webhooks/http-client/lookup-gate.js';
import { createWebhooks, type Webhooks } from '../../src/modules/webhooks/wiring.js';
import { WebhookDeliveryWorker } from '../../src/workers/webhook-delivery.js';
import type { Receiver } from '../helpers/webhook-receiver.js';
import { webhookSuite } from '../helpers/webhook-suite.js';
import {
  call,
  createWebhook,
  execute,
  ownerAuthOf,
  signerWithTemplate,
} from '../helpers/webhooks.js';

/**
 * One organization cannot hold up another's deliveries (docs/webhooks.md, "Where deliveries
 * are sent from"; security review of wave 3, session 25): its attempts in flight in a process
 * are capped per organization, lookups of one host name share one lookup slot, and an attempt
 * this process could not make for its own reasons (its lookups were busy) does not count
 * against the receiver.
 */
const suite = webhookSuite();
const workers: WebhookDeliveryWorker[] = [];
/** What ends the test's hanging (receivers, name servers): before the workers are waited for. */
const releases: (() => unknown)[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  // Stopping takes no new work at once; the attempts in flight end with the releases.
  const stopping = workers.splice(0).map((w) => w.stop());
  for (const release of releases.splice(0)) await release();
  await Promise.all(stopping);
  for (const close of closers.splice(0)) await close();
});

/** The webhooks feature on the test's database with its own resolver and answer time. */
function webhooksWith(opts: { resolve?: HostResolver; timeoutMs?: number } = {}): Webhooks {
  const svc = suite.svc;
  const hooks = createWebhooks({
    db: svc.container.db,
    clock: svc.clock,
    config: svc.config,
    logger: svc.container.logger,
    sessions: svc.container.identity.sessions,
    resolve: opts.resolve,
    timeoutMs: opts.timeoutMs,
  });
  closers.push(() => hooks.client.close());
  return hooks;
}

/** A started worker, stopped after the test (with default settings unless given). */
function started(
  hooks: Webhooks,
  opts: ConstructorParameters<typeof WebhookDeliveryWorker>[2] = {},
): WebhookDeliveryWorker {
  const w = new WebhookDeliveryWorker(hooks.runner, suite.svc.container.logger, opts);
  w.start();
  workers.push(w);
  return w;
}

async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Makes each of the organization's queued deliveries due `times` more times (as a replay
 * would, all at once): copies with ids of their own.
 */
async function multiply(orgId: string, times: number): Promise<void> {
  await suite.svc.container.db.execute(sql`
    INSERT INTO webhook_deliveries (id, organization_id, webhook_id, action_id, event, status,
      next_attempt_at, created_at, updated_at)
    SELECT d.id || '_' || g, d.organization_id, d.webhook_id, d.action_id, d.event, 'pending',
      d.created_at, d.created_at, d.created_at
    FROM webhook_deliveries d CROSS JOIN generate_series(1, ${times}) g
    WHERE d.organization_id = ${orgId}`);
}

const deliveriesOf = async (webhookId: string) =>
  (
    await suite.svc.container.db.execute<{
      status: string;
      round_attempts: number;
      n: number;
      due_in_ms: number | null;
    }>(sql`
      SELECT status, round_attempts, jsonb_array_length(attempts) AS n,
        (extract(epoch FROM next_attempt_at - ${suite.svc.clock.now()}) * 1000)::int AS due_in_ms
      FROM webhook_deliveries WHERE webhook_id = ${webhookId}`)
  ).rows;

describe('attempts in flight per organization', () => {
  it('an organization whose five webhooks all hang holds 64 attempts; another organization is delivered within a second', async () => {
    const svc = suite.svc;
    const x = await signerWithTemplate(svc);
    const y = await signerWithTemplate(svc);
    const hanging: Receiver[] = [];
    for (let i = 0; i < 5; i++) hanging.push(await suite.receiver(() => 'hang'));
    const fast = await suite.receiver();
    // Default settings throughout: 256 in flight, 64 per webhook, 10 s to answer.
    const hooks = webhooksWith();
    for (const r of hanging) {
      await hooks.service.create(ownerAuthOf(x.signer), {
        url: r.url,
        rules: [{ template_id: x.templateId }],
      });
    }
    await hooks.service.create(ownerAuthOf(y.signer), {
      url: fast.url,
      rules: [{ template_id: y.templateId }],
    });
    await execute(svc, x.signer, 'mint', { template_id: x.templateId }, 0);
    // 5 × 80 = 400 deliveries due at once: more than the 5 × 64 the webhooks' rooms allow.
    await multiply(x.signer.orgId, 79);
    releases.push(() => Promise.all(hanging.map((r) => r.close())));
    const holding = () => hanging.reduce((n, r) => n + r.inFlight, 0);
    started(hooks);
    await eventually(() => holding() >= 64);
    // Whatever more the worker takes of it, it has taken once the count stays put.
    for (let last = -1; holding() !== last;) {
      last = holding();
      await new Promise((r) => setTimeout(r, 300));
    }

    const sent = performance.now();
    await execute(svc, y.signer, 'mint', { template_id: y.templateId }, 0);
    await eventually(() => fast.received.length > 0, 3_000);
    expect(fast.received).toHaveLength(1);
    expect(fast.received[0]!.at - sent).toBeLessThan(1_000);
    expect(holding()).toBe(64);
  });

  it('caps handed deliveries too: those beyond the organization room are released for a claim', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const slow = [
      await suite.receiver(() => ({ status: 200, delayMs: 300 })),
      await suite.receiver(() => ({ status: 200, delayMs: 300 })),
    ];
    const hooks = await Promise.all(
      slow.map((r) => createWebhook(svc, signer, r.url, [{ template_id: templateId }])),
    );
    // The service's own handoff (its group statements write for it); one claim, at start.
    const worker = started(svc.container.webhooks, {
      handoff: svc.container.webhooks.handoff,
      idlePollMs: 3_600_000,
      perOrganization: 1,
    });
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    const claims = async () =>
      (
        await svc.container.db.execute<{ claimed: number }>(sql`
          SELECT count(claim_id)::int AS claimed FROM webhook_deliveries
          WHERE organization_id = ${signer.orgId}`)
      ).rows[0]!.claimed;
    // Two handed, one per webhook: one is sent, the one beyond the organization's room released.
    let claimed = 2;
    const until = Date.now() + 5_000;
    while (claimed !== 1 && Date.now() < until) claimed = await claims();
    expect(claimed).toBe(1);
    expect(slow.reduce((n, r) => n + r.inFlight, 0)).toBeLessThanOrEqual(1);
    await worker.stop();
    await suite.deliver();
    expect(slow.map((r) => r.received.length)).toEqual([1, 1]);
    for (const h of hooks) {
      expect((await deliveriesOf(h.id)).map((d) => d.status)).toEqual(['done']);
    }
  });
});

/**
 * A resolver like a name server that answers when a webhook is saved and then stops
 * answering for `hang.example`; any other name answers loopback at once.
 */
function stallingResolver() {
  const requests = new Map<string, number>();
  let stalled = false;
  const stuck: ((err: Error) => void)[] = [];
  const resolve: HostResolver = (hostname) => {
    requests.set(hostname, (requests.get(hostname) ?? 0) + 1);
    if (hostname !== 'hang.example' || !stalled) return Promise.resolve(['127.0.0.1']);
    return new Promise((_answer, fail) => stuck.push(fail));
  };
  return {
    resolve,
    requests,
    stall: () => {
      stalled = true;
    },
    /** The system resolver gives up at last. */
    giveUp: () => {
      for (const fail of stuck.splice(0)) fail(new Error('EAI_AGAIN'));
    },
  };
}

describe('host lookups of one name', () => {
  it('share one slot: a name that stopped answering for one organization does not delay another organization’s lookup', async () => {
    const svc = suite.svc;
    const x = await signerWithTemplate(svc);
    const y = await signerWithTemplate(svc);
    const xr = await suite.receiver();
    const fast = await suite.receiver();
    const names = stallingResolver();
    // Counts the requests that reach the gate: one per connection undici opens.
    const gateRequests = new Map<string, number>();
    const gate = gatedResolver(names.resolve);
    const counted: HostResolver = (hostname, signal) => {
      gateRequests.set(hostname, (gateRequests.get(hostname) ?? 0) + 1);
      return gate(hostname, signal);
    };
    const hooks = webhooksWith({ resolve: counted });
    releases.push(() => names.giveUp());
    await hooks.service.create(ownerAuthOf(x.signer), {
      url: `https://hang.example:${xr.port}/hook`,
      rules: [{ template_id: x.templateId }],
    });
    await hooks.service.create(ownerAuthOf(y.signer), {
      url: `https://rebind.example:${fast.port}/hook`,
      rules: [{ template_id: y.templateId }],
    });
    names.stall();
    await execute(svc, x.signer, 'mint', { template_id: x.templateId }, 0);
    await multiply(x.signer.orgId, 99);
    started(hooks);
    // One connection per attempt in flight (64), each asking for the name.
    await eventually(() => (gateRequests.get('hang.example') ?? 0) >= 64);
    await new Promise((r) => setTimeout(r, 200));

    const sent = performance.now();
    await execute(svc, y.signer, 'mint', { template_id: y.templateId }, 0);
    await eventually(() => fast.received.length > 0, 3_000);
    expect(fast.received).toHaveLength(1);
    expect(fast.received[0]!.at - sent).toBeLessThan(1_000);
    expect(xr.received).toHaveLength(0);
    // The save's request for the name, then one per connection…
    expect(gateRequests.get('hang.example')).toBeGreaterThanOrEqual(65);
    // …joined one lookup: the resolver was asked once more than when saving.
    expect(names.requests.get('hang.example')).toBe(2);
  });
});

describe('an attempt this process could not make', () => {
  it('refused by the lookup gate (LookupsBusy) is retried later without counting', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver();
    let busy = false;
    const hooks = webhooksWith({
      resolve: async () => {
        if (busy) throw new LookupsBusy();
        return ['127.0.0.1'];
      },
    });
    const hook = await hooks.service.create(ownerAuthOf(signer), {
      url: `https://rebind.example:${r.port}/hook`,
      rules: [{ template_id: templateId }],
    });
    busy = true;
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    const worker = new WebhookDeliveryWorker(hooks.runner, svc.container.logger);
    // Far more tries than the four attempts that would make it `failed`.
    for (let i = 0; i < 6; i++) {
      await worker.runOnce();
      const [d] = await deliveriesOf(hook.id);
      expect(d).toMatchObject({ status: 'pending', round_attempts: 0, n: 0 });
      expect(d!.due_in_ms).toBeGreaterThanOrEqual(BUSY_RETRY_MS * (1 - RETRY_JITTER));
      expect(d!.due_in_ms).toBeLessThanOrEqual(BUSY_RETRY_MS * (1 + RETRY_JITTER));
      svc.clock.advance(BUSY_RETRY_MS * 2);
    }
    expect(r.connections).toBe(0);
    busy = false;
    await worker.runOnce();
    expect(r.received).toHaveLength(1);
    const [d] = await deliveriesOf(hook.id);
    expect(d).toMatchObject({ status: 'done', round_attempts: 1, n: 1 });
    const got = await call(svc, signer, 'GET', `/webhooks/${hook.id}`);
    expect(got.is_active).toBe(true);
  });

  it('still waiting for a lookup slot at its deadline is retried later without counting', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver();
    const names = stallingResolver();
    releases.push(() => names.giveUp());
    // One slot, held by another name that stopped answering.
    const gate = gatedResolver(names.resolve, 1);
    const hooks = webhooksWith({ resolve: gate, timeoutMs: 1_000 });
    const hook = await hooks.service.create(ownerAuthOf(signer), {
      url: `https://rebind.example:${r.port}/hook`,
      rules: [{ template_id: templateId }],
    });
    names.stall();
    void gate('hang.example').catch(() => undefined);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await new WebhookDeliveryWorker(hooks.runner, svc.container.logger).runOnce();
    const [d] = await deliveriesOf(hook.id);
    expect(d).toMatchObject({ status: 'pending', round_attempts: 0, n: 0 });
    expect(r.connections).toBe(0);
  });

  it('a lookup of its own name that does not answer in time still counts', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver();
    const names = stallingResolver();
    releases.push(() => names.giveUp());
    const hooks = webhooksWith({ resolve: gatedResolver(names.resolve, 1), timeoutMs: 1_000 });
    const hook = await hooks.service.create(ownerAuthOf(signer), {
      url: `https://hang.example:${r.port}/hook`,
      rules: [{ template_id: templateId }],
    });
    names.stall();
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await new WebhookDeliveryWorker(hooks.runner, svc.container.logger).runOnce();
    const [d] = await deliveriesOf(hook.id);
    expect(d).toMatchObject({ status: 'retrying', round_attempts: 1, n: 1 });
  });
});
