import { beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@ons/sdk';
import { createSigner, signEoa } from '../helpers/ebus.js';
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
import type { TestMember } from '../helpers/fixtures.js';

/**
 * Issue 20 items 3, 4 and 9: deliveries queued with the action, sent signed to real HTTPS
 * receivers (a CA made here, trusted through WEBHOOK_CA_FILE), retried with the fake clock.
 */
const suite = webhookSuite();
let svc: TestService;
const MINUTE = 60_000;
beforeAll(() => {
  svc = suite.svc;
});
const receiver = (answer?: Receiver['answer']) => suite.receiver(answer);
const deliver = () => suite.deliver();

async function events(m: TestMember, webhookId: string, query = '') {
  const body = await call(svc, m, 'GET', `/webhooks/${webhookId}/events${query}`);
  return body.events as {
    id: string;
    action_id: string;
    status: string;
    attempts: {
      when_created: string;
      status_code: number | null;
      duration_ms: number;
      error: string | null;
    }[];
    next_attempt_at: string | null;
  }[];
}

describe('the test-only settings', () => {
  it('are announced as warnings when the service starts with them on', () => {
    const warnings = svc.logs.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toContain(
      'WEBHOOK_ALLOW_LOOPBACK is on: webhooks may target loopback addresses (tests only)',
    );
    expect(warnings).toContain(
      'WEBHOOK_CA_FILE is set: webhook deliveries trust an extra CA (tests only)',
    );
  });
});

describe('a delivery', () => {
  it('is sent once per matching action, signed, with the body and headers of docs/webhooks.md', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const applied = await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await deliver();
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    const body = JSON.parse(got.body);
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      type: 'action.executed',
      event: applied,
      when_created: applied.action.when_created,
    });
    expect(Object.keys(body)).toEqual(['id', 'type', 'event', 'when_created']);
    // Compact JSON, as JSON.stringify writes it.
    expect(got.body).toBe(JSON.stringify(body));
    expect(got.headers['x-webhook-id']).toBe(hook.id);
    expect(got.headers['x-event-id']).toBe(body.id);
    expect(got.headers['content-type']).toBe('application/json');
    const header = got.headers['x-webhook-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(
      await verifyWebhook(got.headers, got.body, hook.signing_key, { now: svc.clock.now() }),
    ).toMatchObject({ ok: true });
    const log = await events(signer, hook.id);
    expect(log).toEqual([
      {
        id: body.id,
        webhook_id: hook.id,
        action_id: applied.action.id,
        status: 'done',
        attempts: [
          {
            when_created: svc.clock.now().toISOString(),
            status_code: 200,
            duration_ms: expect.any(Number),
            error: null,
          },
        ],
        next_attempt_at: null,
        when_created: applied.action.when_created,
      },
    ]);
    // Nothing more is due.
    await deliver();
    expect(r.received).toHaveLength(1);
  });

  it('carries each action of one group with its own event, whatever characters its JSON escapes', async () => {
    // The outbox statement receives the events' JSON texts joined by U+0001 (outbox.ts): text
    // with quotes, backslashes, line breaks, U+0001 itself and characters beyond ASCII must
    // come back whole, each delivery with its own action's event. One request of four
    // wallets' mints: one group statement.
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const notes = [
      '"quoted" \\ and \\"',
      'line\nbreak\ttab \u0001 one',
      'é 🎉 \u2028 done',
      '{"a":1}',
    ];
    const wallets = [signer];
    for (let i = 1; i < notes.length; i++)
      wallets.push(await createSigner(svc, { orgId: signer.orgId }));
    const actions = await Promise.all(
      notes.map((note, i) =>
        signEoa(svc, wallets[i]!, {
          name: 'mint',
          params: { template_id: templateId, custom: { note }, metadata: { name: note } },
          nonce: 0,
        }),
      ),
    );
    const answer = await call(svc, signer, 'POST', '/ebus/actions/batch', { actions });
    const applied = answer.results as { status: string; action: { id: string }; object: unknown }[];
    expect(applied.map((x) => x.status)).toEqual(notes.map(() => 'applied'));
    await deliver();
    expect(r.received).toHaveLength(notes.length);
    // Each delivery's record names the action its body carries.
    const logged = new Map((await events(signer, hook.id)).map((e) => [e.id, e.action_id]));
    const byAction = new Map(r.received.map((got) => [JSON.parse(got.body).event.action.id, got]));
    for (const [action, got] of byAction) {
      expect(logged.get(JSON.parse(got.body).id)).toBe(action);
    }
    for (const [i, x] of applied.entries()) {
      const got = byAction.get(x.action.id)!;
      const body = JSON.parse(got.body);
      expect(body.event).toEqual({ action: x.action, object: x.object });
      expect(body.event.object.custom).toEqual({ note: notes[i] });
      expect(got.body).toBe(JSON.stringify(body));
    }
  });

  it('follows the rules: ORed rules, ANDed fields, one delivery per webhook even when two rules match', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const other = await createSigner(svc, { orgId: signer.orgId });
    const r = await receiver();
    const mintsOnly = await createWebhook(svc, signer, r.url, [
      { template_id: templateId, actions: ['mint'] },
    ]);
    const twoRules = await createWebhook(svc, signer, r.url, [
      { template_id: templateId, actions: ['mint'] },
      { template_id: templateId, addresses: [signer.address] },
    ]);
    const otherSigner = await createWebhook(svc, signer, r.url, [
      { template_id: templateId, actions: ['transfer'], addresses: [other.address] },
    ]);
    const minted = await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await execute(svc, signer, 'transfer', { object_id: minted.object.id, to: other.address }, 1);
    await deliver();
    const byWebhook = (id: string) =>
      r.received
        .filter((g) => g.headers['x-webhook-id'] === id)
        .map((g) => JSON.parse(g.body).event.action.name);
    expect(byWebhook(mintsOnly.id)).toEqual(['mint']);
    expect(byWebhook(twoRules.id).sort()).toEqual(['mint', 'transfer']);
    // The transfer is the signer's, not `other`'s: the rule's fields are ANDed.
    expect(byWebhook(otherSigner.id)).toEqual([]);
    const ids = r.received.map((g) => g.headers['x-event-id']);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is not made for another template, nor for another organization’s actions', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const otherTemplate = (await signerWithTemplate(svc)).templateId;
    await createWebhook(svc, signer, r.url, [{ template_id: otherTemplate }]);
    const stranger = await signerWithTemplate(svc);
    await createWebhook(svc, stranger.signer, r.url, [{ template_id: templateId }]);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await deliver();
    expect(r.received).toHaveLength(0);
  });
});

describe('retries', () => {
  it('follow a failure after about 2, 4 and 8 minutes with the same event id and a fresh t, then fail', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver(() => ({ status: 500 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await deliver();
    const waits = [2, 4, 8];
    for (const [i, minutes] of waits.entries()) {
      const [d] = await events(signer, hook.id);
      expect(d!.status).toBe('retrying');
      expect(d!.attempts).toHaveLength(i + 1);
      const wait = new Date(d!.next_attempt_at!).getTime() - svc.clock.now().getTime();
      expect(wait).toBeGreaterThanOrEqual(minutes * MINUTE * 0.9);
      expect(wait).toBeLessThanOrEqual(minutes * MINUTE * 1.1);
      // Not before its time.
      svc.clock.advance(minutes * MINUTE * 0.85);
      await deliver();
      expect(r.received).toHaveLength(i + 1);
      svc.clock.advance(minutes * MINUTE * 0.3);
      await deliver();
      expect(r.received).toHaveLength(i + 2);
    }
    const [d] = await events(signer, hook.id);
    expect(d!.status).toBe('failed');
    expect(d!.next_attempt_at).toBeNull();
    expect(d!.attempts.map((a) => [a.status_code, a.error])).toEqual(
      Array(4).fill([500, 'answered 500']),
    );
    expect(new Set(r.received.map((g) => g.headers['x-event-id'])).size).toBe(1);
    expect(new Set(r.received.map((g) => g.body)).size).toBe(1);
    const stamps = r.received.map(
      (g) => /^t=(\d+)/.exec(g.headers['x-webhook-signature'] as string)![1],
    );
    expect(new Set(stamps).size).toBe(4);
    svc.clock.advance(60 * MINUTE);
    await deliver();
    expect(r.received).toHaveLength(4);
  });

  it('stop at once when the receiver answers 410 Gone', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver(() => ({ status: 410 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await deliver();
    svc.clock.advance(30 * MINUTE);
    await deliver();
    expect(r.received).toHaveLength(1);
    const [d] = await events(signer, hook.id);
    expect(d).toMatchObject({ status: 'stopped', next_attempt_at: null });
    expect(d!.attempts[0]).toMatchObject({ status_code: 410 });
  });

  it('never follow a redirect: it is a failure', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const target = await receiver();
    const r = await receiver(() => ({ status: 307, headers: { location: target.url } }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await deliver();
    expect(target.received).toHaveLength(0);
    const [d] = await events(signer, hook.id);
    expect(d).toMatchObject({ status: 'retrying' });
    expect(d!.attempts[0]).toMatchObject({
      status_code: 307,
      error: 'answered 307; redirects are not followed',
    });
  });

  it('count any 2xx as delivered', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver(() => ({ status: 204 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await deliver();
    expect((await events(signer, hook.id))[0]).toMatchObject({ status: 'done' });
  });
});

describe('an answer', () => {
  it('of 1 MB: a 2xx is delivered, a 500 fails with its status, and the next delivery goes through', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const long = 'x'.repeat(1024 * 1024);
    let n = 0;
    const r = await receiver(() => ({ status: [200, 500, 200][n++] ?? 200, body: long }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    for (let nonce = 0; nonce < 3; nonce++) {
      await execute(svc, signer, 'mint', { template_id: templateId }, nonce);
      await deliver();
    }
    expect(r.received).toHaveLength(3);
    const byAction = new Map((await events(signer, hook.id)).map((e) => [e.action_id, e]));
    const sent = r.received.map((x) =>
      byAction.get((JSON.parse(x.body) as { event: { action: { id: string } } }).event.action.id)!,
    );
    expect(sent.map((e) => e.status)).toEqual(['done', 'retrying', 'done']);
    expect(sent[1]!.attempts[0]).toMatchObject({ status_code: 500, error: 'answered 500' });
  });
});

describe('switching off', () => {
  it('happens after three failed or stopped deliveries within an hour; the webhook then gets nothing until switched on', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver(() => ({ status: 410 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const get = async () => await call(svc, signer, 'GET', `/webhooks/${hook.id}`);
    let nonce = 0;
    for (let i = 0; i < 2; i++) {
      await execute(svc, signer, 'mint', { template_id: templateId }, nonce++);
      await deliver();
      svc.clock.advance(20 * MINUTE);
    }
    expect((await get()).is_active).toBe(true);
    await execute(svc, signer, 'mint', { template_id: templateId }, nonce++);
    await deliver();
    expect((await get()).is_active).toBe(false);
    await execute(svc, signer, 'mint', { template_id: templateId }, nonce++);
    await deliver();
    expect(r.received).toHaveLength(3);
    expect((await events(signer, hook.id)).map((e) => e.status)).toEqual([
      'stopped',
      'stopped',
      'stopped',
    ]);

    r.answer = () => ({ status: 200 });
    const on = await call(svc, signer, 'PUT', `/webhooks/${hook.id}`, { is_active: true });
    expect(on.is_active).toBe(true);
    const later = await execute(svc, signer, 'mint', { template_id: templateId }, nonce);
    await deliver();
    expect(r.received).toHaveLength(4);
    expect(JSON.parse(r.received[3]!.body).event.action.id).toBe(later.action.id);
  });

  it('does not happen for failures spread over more than an hour', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver(() => ({ status: 410 }));
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    for (let i = 0; i < 3; i++) {
      await execute(svc, signer, 'mint', { template_id: templateId }, i);
      await deliver();
      svc.clock.advance(31 * MINUTE);
    }
    expect((await call(svc, signer, 'GET', `/webhooks/${hook.id}`)).is_active).toBe(true);
  });

  it('fails what was queued when a webhook is switched off by hand', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await call(svc, signer, 'PUT', `/webhooks/${hook.id}`, { is_active: false });
    await deliver();
    expect(r.received).toHaveLength(0);
    expect((await events(signer, hook.id)).map((e) => e.status)).toEqual(['failed']);
  });
});

describe('a rotated signing key', () => {
  it('signs beside the new one for 24 hours, then no more', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const rotated = await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    await expectRotationSignatures(
      svc,
      r,
      { signer, templateId },
      { old: hook.signing_key, rotated: rotated.signing_key },
      () => deliver(),
    );
  });
});
