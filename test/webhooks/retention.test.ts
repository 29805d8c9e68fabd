import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { newId } from '../../src/lib/ids.js';
import { RETENTION_LOCK } from '../../src/modules/webhooks/repo/retention.js';
import { DeliveryRetention } from '../../src/modules/webhooks/retention.js';
import type { DeliveryStatus } from '../../src/modules/webhooks/schema.js';
import { createWebhooks } from '../../src/modules/webhooks/wiring.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';
import { call } from '../helpers/webhooks.js';

/**
 * Deliveries that ended are deleted once older than WEBHOOK_DELIVERY_RETENTION_DAYS
 * (docs/webhooks.md, "How long deliveries are kept"); queued ones never are. The rows are
 * written with SQL at the ages each case needs, and the prune is called directly (the loop's
 * pass), so nothing waits for a period to pass.
 */
const svc = useTestService();
const DAY = 24 * 60 * 60_000;

/** A webhook of the member's organization, written straight to the table. */
async function webhookOf(m: TestMember, deleted = false): Promise<string> {
  const id = newId('webhook');
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO webhooks (id, organization_id, url, rules,
      signing_key, active_since, created_at, updated_at, deleted_at)
    VALUES (${id}, ${m.orgId}, 'https://hooks.example.com/ons',
      ${JSON.stringify([{ template_id: 'tpl_x', actions: [], addresses: [] }])}::jsonb,
      ${Buffer.alloc(32, 1)}, ${now}, ${now}, ${now}, ${deleted ? now : null})`);
  return id;
}

/**
 * A delivery of `webhookId` created `ageDays` before the clock's now, in `status` (a queued
 * one due at its creation, or held by a worker's claim with `claimed`).
 */
async function delivery(
  m: TestMember,
  webhookId: string,
  status: DeliveryStatus,
  ageDays: number,
  claimed = false,
): Promise<string> {
  const id = newId('event');
  const at = new Date(svc.clock.now().getTime() - ageDays * DAY);
  const queued = status === 'pending' || status === 'retrying';
  const ended = status === 'failed' || status === 'stopped';
  const lease = claimed ? new Date(svc.clock.now().getTime() + 60_000) : null;
  await svc.container.db.execute(sql`INSERT INTO webhook_deliveries (id, organization_id,
      webhook_id, action_id, event, status, next_attempt_at, leased_until, claim_id,
      finished_at, created_at, updated_at)
    VALUES (${id}, ${m.orgId}, ${webhookId}, ${newId('action')}, '{}', ${status},
      ${queued ? at : null}, ${lease}, ${claimed ? 'clm_test' : null}, ${ended ? at : null},
      ${at}, ${at})`);
  return id;
}

/** Which of `ids` are still stored. */
async function stored(ids: readonly string[]): Promise<string[]> {
  const { rows } = await svc.container.db.execute<{ id: string }>(sql`
    SELECT id FROM webhook_deliveries
    WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`);
  return rows.map((r) => r.id).sort();
}

const sorted = (ids: readonly string[]) => [...ids].sort();

// Each test counts what it deleted: it starts from an empty outbox.
beforeEach(async () => {
  await svc.container.db.execute(sql`DELETE FROM webhook_deliveries`);
});

describe('the retention of webhook deliveries', () => {
  it('deletes ended deliveries created before the retention (30 days by default); keeps younger ones and queued ones of any age', async () => {
    expect(svc.config.webhooks.deliveryRetentionDays).toBe(30);
    const m = await createMember(svc);
    const hook = await webhookOf(m);
    const gone: string[] = [];
    const kept: string[] = [];
    /** Ended, 29.99 days old: kept now, past the retention a day later. */
    const nearly: string[] = [];
    for (const status of ['done', 'failed', 'stopped'] as const) {
      gone.push(await delivery(m, hook, status, 400));
      gone.push(await delivery(m, hook, status, 30.01));
      nearly.push(await delivery(m, hook, status, 29.99));
      kept.push(await delivery(m, hook, status, 0));
    }
    // Queued, however old: due, waiting for a retry, or held by a worker right now.
    kept.push(await delivery(m, hook, 'pending', 400));
    kept.push(await delivery(m, hook, 'retrying', 400));
    kept.push(await delivery(m, hook, 'pending', 400, true));
    kept.push(await delivery(m, hook, 'retrying', 31, true));
    // A deleted webhook's deliveries age out like any other.
    const deletedHook = await webhookOf(m, true);
    gone.push(await delivery(m, deletedHook, 'done', 31));
    kept.push(await delivery(m, deletedHook, 'failed', 1));

    const retention = svc.container.webhooks.retention;
    const before = retention.pruned;
    expect(await retention.pruneDeliveries(svc.clock.now())).toBe(gone.length);
    expect(await stored([...gone, ...nearly, ...kept])).toEqual(sorted([...nearly, ...kept]));
    expect(retention.pruned - before).toBe(gone.length);
    // Nothing more is due.
    expect(await retention.pruneDeliveries(svc.clock.now())).toBe(0);
    // A day on, the ended ones of 29.99 days are past it too; the queued ones still stay.
    svc.clock.advance(DAY);
    expect(await retention.pruneDeliveries(svc.clock.now())).toBe(nearly.length);
    expect(await stored([...nearly, ...kept])).toEqual(sorted(kept));
  });

  it('shows the deliveries it deleted on /metrics', async () => {
    const m = await createMember(svc);
    const hook = await webhookOf(m);
    for (let i = 0; i < 3; i++) await delivery(m, hook, 'done', 45);
    const retention = svc.container.webhooks.retention;
    await retention.pruneDeliveries(svc.clock.now());
    const text = (await svc.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith('ons_webhook_deliveries_pruned_total '));
    expect(line).toBeDefined();
    expect(Number(line!.split(' ')[1])).toBe(retention.pruned);
    expect(retention.pruned).toBeGreaterThanOrEqual(3);
  });

  it('deletes a chunk per statement until nothing is due', async () => {
    const m = await createMember(svc);
    const hook = await webhookOf(m);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await delivery(m, hook, 'done', 40 + i));
    const small = new DeliveryRetention(svc.container.db, svc.clock, svc.container.logger, 30, {
      chunk: 2,
      restMs: 0,
    });
    expect(await small.pruneDeliveries(svc.clock.now())).toBe(5);
    expect(await stored(ids)).toEqual([]);
  });

  it('keeps every delivery with WEBHOOK_DELIVERY_RETENTION_DAYS=0', async () => {
    const config = loadConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: '0' });
    const hooks = createWebhooks({
      db: svc.container.db,
      clock: svc.clock,
      config: { ...svc.config, webhooks: config.webhooks },
      logger: svc.container.logger,
      sessions: svc.container.identity.sessions,
    });
    try {
      const m = await createMember(svc);
      const hook = await webhookOf(m);
      const ids: string[] = [];
      for (const status of ['done', 'failed', 'stopped'] as const) {
        ids.push(await delivery(m, hook, status, 3650));
      }
      expect(hooks.retention.horizon(svc.clock.now())).toBeNull();
      expect(await hooks.retention.pruneDeliveries(svc.clock.now())).toBe(0);
      expect(await stored(ids)).toEqual(sorted(ids));
    } finally {
      await hooks.client.close();
    }
  });

  it('skips a delivery another transaction holds (a replay queueing it again), never waiting for it', async () => {
    const m = await createMember(svc);
    const hook = await webhookOf(m);
    const held = await delivery(m, hook, 'done', 60);
    const free = await delivery(m, hook, 'done', 60);
    const client = await svc.database.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [held]);
      const retention = svc.container.webhooks.retention;
      expect(await retention.pruneDeliveries(svc.clock.now())).toBe(1);
      expect(await stored([held, free])).toEqual([held]);
      // Queued again meanwhile: no longer ended, so it stays.
      await client.query(`UPDATE webhook_deliveries SET status = 'pending' WHERE id = $1`, [held]);
      await client.query('COMMIT');
      expect(await retention.pruneDeliveries(svc.clock.now())).toBe(0);
      expect(await stored([held])).toEqual([held]);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  });

  it('leaves the work to the process already pruning (one at a time, under an advisory lock)', async () => {
    const m = await createMember(svc);
    const hook = await webhookOf(m);
    const id = await delivery(m, hook, 'failed', 90);
    const client = await svc.database.pool.connect();
    const retention = svc.container.webhooks.retention;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [RETENTION_LOCK]);
      expect(await retention.pruneDeliveries(svc.clock.now())).toBe(0);
      expect(await stored([id])).toEqual([id]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    expect(await retention.pruneDeliveries(svc.clock.now())).toBe(1);
  });

  it('prunes from the loop as soon as it starts, and stops', async () => {
    const m = await createMember(svc);
    const hook = await webhookOf(m);
    const id = await delivery(m, hook, 'done', 31);
    const loop = new DeliveryRetention(svc.container.db, svc.clock, svc.container.logger, 30);
    loop.start();
    try {
      const until = Date.now() + 5_000;
      while ((await stored([id])).length > 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await stored([id])).toEqual([]);
    } finally {
      await loop.stop();
    }
  });

  it('leaves a replay of a range before the retention nothing to queue: it answers {queued: 0}', async () => {
    const m = await createMember(svc);
    const hook = await webhookOf(m);
    const old = await delivery(m, hook, 'done', 40);
    const young = await delivery(m, hook, 'done', 10);
    await svc.container.webhooks.retention.pruneDeliveries(svc.clock.now());
    expect(await stored([old, young])).toEqual([young]);
    const at = (days: number) => new Date(svc.clock.now().getTime() - days * DAY).toISOString();
    const replay = (since: string, until: string) =>
      call(svc, m, 'POST', `/webhooks/${hook}/replay`, { since, until });
    expect(await replay(at(45), at(35))).toEqual({ queued: 0 });
    expect(await replay(at(35), at(5))).toEqual({ queued: 1 });
  });
});
