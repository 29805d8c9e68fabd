import { describe, expect, it } from 'vitest';
import { expectRefusals } from '../helpers/route-security.js';
import { webhookSuite } from '../helpers/webhook-suite.js';
import { call, createWebhook, execute, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * `GET /webhooks/events`: the deliveries of all the organization's webhooks at once (the
 * console's overview lists the open ones), `status=open` for those not delivered.
 */
const suite = webhookSuite();

interface Event {
  id: string;
  webhook_id: string;
  status: string;
  when_created: string;
}

describe('GET /webhooks/events', () => {
  it("lists every webhook's deliveries newest first; status=open leaves out the delivered", async () => {
    const { svc } = suite;
    const { signer, templateId } = await signerWithTemplate(svc);
    const rules = [{ template_id: templateId }];
    const ok = await createWebhook(svc, signer, (await suite.receiver()).url, rules);
    const failing = await createWebhook(
      svc,
      signer,
      (await suite.receiver(() => ({ status: 500 }))).url,
      rules,
    );
    const gone = await createWebhook(
      svc,
      signer,
      (await suite.receiver(() => ({ status: 410 }))).url,
      rules,
    );
    const deleted = await createWebhook(svc, signer, (await suite.receiver()).url, rules);
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    svc.clock.advance(1000);
    await execute(svc, signer, 'mint', { template_id: templateId }, 1);
    // Deleted with its deliveries queued: they become failed, and are listed nowhere.
    await call(svc, signer, 'DELETE', `/webhooks/${deleted.id}`);
    await suite.deliver();

    const all: Event[] = (await call(svc, signer, 'GET', '/webhooks/events')).events;
    expect(all).toHaveLength(6);
    expect(new Set(all.map((e) => e.webhook_id))).toEqual(new Set([ok.id, failing.id, gone.id]));
    const times = all.map((e) => e.when_created);
    expect([...times].sort().reverse()).toEqual(times);
    const statusOf = (list: Event[]) =>
      Object.fromEntries(
        [ok.id, failing.id, gone.id].map((w) => [
          w,
          list
            .filter((e) => e.webhook_id === w)
            .map((e) => e.status)
            .sort(),
        ]),
      );
    expect(statusOf(all)).toEqual({
      [ok.id]: ['done', 'done'],
      [failing.id]: ['retrying', 'retrying'],
      [gone.id]: ['stopped', 'stopped'],
    });

    const open: Event[] = (await call(svc, signer, 'GET', '/webhooks/events?status=open')).events;
    expect(statusOf(open)).toEqual({
      [ok.id]: [],
      [failing.id]: ['retrying', 'retrying'],
      [gone.id]: ['stopped', 'stopped'],
    });
    const stopped: Event[] = (await call(svc, signer, 'GET', '/webhooks/events?status=stopped'))
      .events;
    expect(stopped.map((e) => e.webhook_id)).toEqual([gone.id, gone.id]);

    // Paged like every list: the pages together are the whole list, once each.
    const first = await call(svc, signer, 'GET', '/webhooks/events?status=open&limit=3');
    expect(first.has_more).toBe(true);
    const second = await call(
      svc,
      signer,
      'GET',
      `/webhooks/events?status=open&limit=3&next=${first.next}`,
    );
    expect(second.has_more).toBe(false);
    expect([...first.events, ...second.events].map((e: Event) => e.id)).toEqual(
      open.map((e) => e.id),
    );

    // Another organization sees none of them.
    const other = await signerWithTemplate(svc);
    expect((await call(svc, other.signer, 'GET', '/webhooks/events')).events).toEqual([]);
  });

  it('refuses an unknown status and callers without webhooks.read', async () => {
    const { svc } = suite;
    const { signer } = await signerWithTemplate(svc);
    const bad = await call(svc, signer, 'GET', '/webhooks/events?status=lost', undefined, 400);
    expect(bad.code).toBe(3);
    expect(bad.details.fields[0].field).toBe('status');
    await expectRefusals(
      svc,
      { method: 'GET', url: '/webhooks/events' },
      { roleWithout: 'viewer', keyWithout: 'webhooks.read' },
    );
  });
});
