import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPLAY_DELIVERIES_PER_DAY } from '../../src/modules/webhooks/delivery-log.js';
import { KEPT_ATTEMPTS } from '../../src/modules/webhooks/schema.js';
import { createMember } from '../helpers/fixtures.js';
import { expectRefusals } from '../helpers/route-security.js';
import type { TestService } from '../helpers/service.js';
import type { Receiver } from '../helpers/webhook-receiver.js';
import { webhookSuite } from '../helpers/webhook-suite.js';
import { call, createWebhook, execute, signerWithTemplate } from '../helpers/webhooks.js';

/** Issue 20 item 6: the delivery log, redelivery of one delivery, replay of a time range. */
const suite = webhookSuite();
let svc: TestService;
const MINUTE = 60_000;
beforeAll(() => {
  svc = suite.svc;
});
const receiver = (answer?: Receiver['answer']) => suite.receiver(answer);
const deliver = () => suite.deliver();

/** A webhook whose receiver answers `status`, and `n` actions delivered to it once. */
async function deliveredOnce(n: number, status: number) {
  const { signer, templateId } = await signerWithTemplate(svc);
  const r = await receiver(() => ({ status }));
  const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
  for (let nonce = 0; nonce < n; nonce++) {
    await execute(svc, signer, 'mint', { template_id: templateId }, nonce);
    svc.clock.advance(1000);
  }
  await deliver();
  return { signer, templateId, r, hook };
}

describe('GET /webhooks/{webhookId}/events', () => {
  it('lists deliveries newest first with their attempts, filtered by status and paged', async () => {
    const { signer, r, hook } = await deliveredOnce(3, 500);
    r.answer = () => ({ status: 200 });
    const all = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(all.map((e: { status: string }) => e.status)).toEqual([
      'retrying',
      'retrying',
      'retrying',
    ]);
    const times = all.map((e: { when_created: string }) => e.when_created);
    expect([...times].sort().reverse()).toEqual(times);
    // Retry the first one due only (the waits are jittered), so two statuses are listed.
    const first = [...all].sort((x, y) => x.next_attempt_at.localeCompare(y.next_attempt_at))[0];
    const rest = all.filter((e: { id: string }) => e.id !== first.id);
    svc.clock.set(first.next_attempt_at);
    await deliver();
    const done = await call(svc, signer, 'GET', `/webhooks/${hook.id}/events?status=done`);
    expect(done.events.map((e: { id: string }) => e.id)).toEqual([first.id]);
    expect(done.events[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([
      500, 200,
    ]);
    const retrying = await call(
      svc,
      signer,
      'GET',
      `/webhooks/${hook.id}/events?status=retrying&limit=1`,
    );
    expect(retrying.events).toHaveLength(1);
    expect(retrying.has_more).toBe(true);
    const page2 = await call(
      svc,
      signer,
      'GET',
      `/webhooks/${hook.id}/events?status=retrying&limit=1&next=${retrying.next}`,
    );
    expect([retrying.events[0].id, page2.events[0].id]).toEqual(
      rest.map((e: { id: string }) => e.id),
    );
    expect(page2.has_more).toBe(false);
  });

  it('refuses an unknown status, another organization and callers without webhooks.read', async () => {
    const { signer, hook } = await deliveredOnce(0, 200);
    const bad = await call(
      svc,
      signer,
      'GET',
      `/webhooks/${hook.id}/events?status=lost`,
      undefined,
      400,
    );
    expect(bad.code).toBe(3);
    expect(bad.details.fields[0].field).toBe('status');
    await expectRefusals(
      svc,
      { method: 'GET', url: `/webhooks/${hook.id}/events` },
      { otherOrgMember: true, roleWithout: 'viewer', keyWithout: 'webhooks.read' },
    );
  });
});

describe('POST /webhooks/{webhookId}/events/{eventId}/redeliver', () => {
  it('sends a failed delivery again with the same X-Event-ID', async () => {
    const { signer, r, hook } = await deliveredOnce(1, 500);
    for (const minutes of [3, 5, 9]) {
      svc.clock.advance(minutes * MINUTE);
      await deliver();
    }
    const [failed] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(failed.status).toBe('failed');
    r.answer = () => ({ status: 200 });
    const queued = await call(
      svc,
      signer,
      'POST',
      `/webhooks/${hook.id}/events/${failed.id}/redeliver`,
    );
    expect(queued).toMatchObject({
      id: failed.id,
      status: 'pending',
      next_attempt_at: svc.clock.now().toISOString(),
    });
    await deliver();
    expect(r.received).toHaveLength(5);
    expect(new Set(r.received.map((g) => g.headers['x-event-id']))).toEqual(new Set([failed.id]));
    const [done] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(done.status).toBe('done');
    expect(done.attempts).toHaveLength(5);
  });

  it('sends a stopped delivery again', async () => {
    const { signer, r, hook } = await deliveredOnce(1, 410);
    const [stopped] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    r.answer = () => ({ status: 200 });
    await call(svc, signer, 'POST', `/webhooks/${hook.id}/events/${stopped.id}/redeliver`);
    await deliver();
    expect(r.received).toHaveLength(2);
  });

  it(`keeps a delivery's last ${KEPT_ATTEMPTS} attempts, however often it is redelivered`, async () => {
    const { signer, r, hook } = await deliveredOnce(1, 410);
    const [first] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    const times = [first.attempts[0].when_created];
    for (let i = 1; i < KEPT_ATTEMPTS + 3; i++) {
      svc.clock.advance(1000);
      await call(svc, signer, 'POST', `/webhooks/${hook.id}/events/${first.id}/redeliver`);
      await deliver();
      times.push(svc.clock.now().toISOString());
    }
    expect(r.received).toHaveLength(KEPT_ATTEMPTS + 3);
    const [d] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(d.status).toBe('stopped');
    // The newest, oldest first, as they were appended.
    expect(d.attempts.map((a: { when_created: string }) => a.when_created)).toEqual(
      times.slice(-KEPT_ATTEMPTS),
    );
    // A list grown longer before the bound is cut to it by the next attempt.
    const old = Array.from({ length: KEPT_ATTEMPTS + 10 }, () => d.attempts[0]);
    await svc.container.db.execute(
      sql`UPDATE webhook_deliveries SET attempts = ${JSON.stringify(old)}::jsonb WHERE id = ${d.id}`,
    );
    svc.clock.advance(1000);
    await call(svc, signer, 'POST', `/webhooks/${hook.id}/events/${d.id}/redeliver`);
    await deliver();
    const [after] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(after.attempts).toHaveLength(KEPT_ATTEMPTS);
    expect(after.attempts.at(-1).when_created).toBe(svc.clock.now().toISOString());
  });

  it('answers 400 code 9 for a delivery that is not failed or stopped', async () => {
    const { signer, hook } = await deliveredOnce(2, 500);
    const [retrying] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    const res = await call(
      svc,
      signer,
      'POST',
      `/webhooks/${hook.id}/events/${retrying.id}/redeliver`,
      undefined,
      400,
    );
    expect(res).toMatchObject({ code: 9, message: expect.stringContaining('retrying') });
    const ok = await deliveredOnce(1, 200);
    const [done] = (await call(svc, ok.signer, 'GET', `/webhooks/${ok.hook.id}/events`)).events;
    const again = await call(
      svc,
      ok.signer,
      'POST',
      `/webhooks/${ok.hook.id}/events/${done.id}/redeliver`,
      undefined,
      400,
    );
    expect(again.code).toBe(9);
  });

  it('answers 404 code 5 for another organization’s delivery or an unknown one, 400 code 3 for a malformed id', async () => {
    const { signer, hook } = await deliveredOnce(1, 410);
    const [stopped] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    await expectRefusals(
      svc,
      { method: 'POST', url: `/webhooks/${hook.id}/events/${stopped.id}/redeliver` },
      { otherOrgMember: true, roleWithout: 'member', keyWithout: 'webhooks.update' },
    );
    // Another webhook of the same organization does not own it either.
    const r2 = await receiver();
    const other = await createWebhook(svc, signer, r2.url, [
      { template_id: (await signerWithTemplate(svc)).templateId },
    ]);
    await call(
      svc,
      signer,
      'POST',
      `/webhooks/${other.id}/events/${stopped.id}/redeliver`,
      undefined,
      404,
    );
    await call(
      svc,
      signer,
      'POST',
      `/webhooks/${hook.id}/events/evt_01JZ0000000000000000000000/redeliver`,
      undefined,
      404,
    );
    const bad = await call(
      svc,
      signer,
      'POST',
      `/webhooks/${hook.id}/events/nope/redeliver`,
      undefined,
      400,
    );
    expect(bad.details.fields).toEqual([
      { field: 'eventId', reason: 'is not a well-formed id (evt_ then 26 characters)' },
    ]);
    // Still stopped: nothing above changed it.
    const [still] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    expect(still.status).toBe('stopped');
  });

  it('answers 400 code 9 while the webhook is inactive', async () => {
    const { signer, hook } = await deliveredOnce(1, 410);
    const [stopped] = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events`)).events;
    await call(svc, signer, 'PUT', `/webhooks/${hook.id}`, { is_active: false });
    const res = await call(
      svc,
      signer,
      'POST',
      `/webhooks/${hook.id}/events/${stopped.id}/redeliver`,
      undefined,
      400,
    );
    expect(res).toMatchObject({ code: 9, message: expect.stringContaining('inactive') });
  });
});

describe('POST /webhooks/{webhookId}/replay', () => {
  it('queues again the finished deliveries of the range once, with their own event ids', async () => {
    const { signer, r, hook } = await deliveredOnce(3, 200);
    const events = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events?order=asc`)).events;
    const range = {
      since: events[1].when_created,
      until: new Date(Date.parse(events[2].when_created) + 1).toISOString(),
    };
    expect(await call(svc, signer, 'POST', `/webhooks/${hook.id}/replay`, range)).toEqual({
      queued: 2,
    });
    // Called again while they are still queued: nothing more.
    expect(await call(svc, signer, 'POST', `/webhooks/${hook.id}/replay`, range)).toEqual({
      queued: 0,
    });
    await deliver();
    expect(r.received).toHaveLength(5);
    expect(
      r.received
        .slice(3)
        .map((g) => g.headers['x-event-id'])
        .sort(),
    ).toEqual([events[1].id, events[2].id].sort());
    // `until` is exclusive.
    const before = { since: events[0].when_created, until: events[1].when_created };
    expect(await call(svc, signer, 'POST', `/webhooks/${hook.id}/replay`, before)).toEqual({
      queued: 1,
    });
  });

  it('bounds what replays queue per organization and UTC day: past it 429 code 8, nothing queued', async () => {
    const { signer, hook } = await deliveredOnce(2, 200);
    const events = (await call(svc, signer, 'GET', `/webhooks/${hook.id}/events?order=asc`)).events;
    const url = `/webhooks/${hook.id}/replay`;
    const both = {
      since: events[0].when_created,
      until: new Date(Date.parse(events[1].when_created) + 1).toISOString(),
    };
    const first = { since: events[0].when_created, until: events[1].when_created };
    // Earlier replays of the day left room for one more delivery.
    const day = svc.clock.now().toISOString().slice(0, 10);
    await svc.container.db.execute(sql`INSERT INTO webhook_replay_usage
      (organization_id, day, deliveries)
      VALUES (${signer.orgId}, ${day}, ${REPLAY_DELIVERIES_PER_DAY - 1})`);
    const over = await call(svc, signer, 'POST', url, both, 429);
    expect(over).toMatchObject({
      code: 8,
      details: { replay_deliveries_per_day: REPLAY_DELIVERIES_PER_DAY, deliveries: 2 },
    });
    // Nothing was queued: both are still done, and one still fits.
    const done = await call(svc, signer, 'GET', `/webhooks/${hook.id}/events?status=done`);
    expect(done.events).toHaveLength(2);
    expect(await call(svc, signer, 'POST', url, first)).toEqual({ queued: 1 });
    await deliver();
    // The day is full; the next UTC day starts afresh.
    expect((await call(svc, signer, 'POST', url, first, 429)).code).toBe(8);
    svc.clock.advance(24 * 60 * MINUTE);
    expect(await call(svc, signer, 'POST', url, both)).toEqual({ queued: 2 });
  });

  it('refuses a range that is empty, backwards or longer than 31 days with 400 code 3', async () => {
    const { signer, hook } = await deliveredOnce(0, 200);
    const t = '2026-03-01T00:00:00.000Z';
    for (const body of [
      { since: t, until: t },
      { since: t, until: '2026-02-01T00:00:00.000Z' },
      { since: t, until: '2026-04-01T00:00:01.000Z' },
    ]) {
      const res = await call(svc, signer, 'POST', `/webhooks/${hook.id}/replay`, body, 400);
      expect(res).toMatchObject({ code: 3, details: { fields: [{ field: 'until' }] } });
    }
    const bad = await call(
      svc,
      signer,
      'POST',
      `/webhooks/${hook.id}/replay`,
      { since: 'yesterday', until: t },
      400,
    );
    expect(bad.details.fields[0].field).toBe('since');
    expect(
      await call(svc, signer, 'POST', `/webhooks/${hook.id}/replay`, {
        since: t,
        until: '2026-04-01T00:00:00.000Z',
      }),
    ).toEqual({ queued: 0 });
  });

  it('refuses another organization and callers without webhooks.update', async () => {
    const { hook } = await deliveredOnce(0, 200);
    await expectRefusals(
      svc,
      {
        method: 'POST',
        url: `/webhooks/${hook.id}/replay`,
        payload: { since: '2026-03-01T00:00:00Z', until: '2026-03-02T00:00:00Z' },
      },
      {
        otherOrgMember: await createMember(svc),
        roleWithout: 'member',
        keyWithout: 'webhooks.update',
      },
    );
  });
});
