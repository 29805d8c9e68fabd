import { sql } from 'drizzle-orm';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/http/logger.js';
import { tracing } from '../../src/lib/tracing.js';
import { GroupCommitter, type GroupCommitOptions } from '../../src/modules/ebus/group-commit.js';
import { registerEbusMetrics } from '../../src/modules/ebus/metrics.js';
import type { ApplyOutcome, VerifiedAction } from '../../src/modules/ebus/types.js';
import { createWorkerService } from '../../src/worker-service.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { webhookSuite } from '../helpers/webhook-suite.js';
import { createWebhook, execute, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * Issue 31 item 6: the queues on /metrics — the webhook outbox by status, the oldest pending
 * delivery's age, unsealed and unproven batches with the oldest unproven one's age, and the
 * group-commit queue — each read with known values, and which role reports which.
 */
const suite = webhookSuite();
let svc: TestService;
beforeAll(() => {
  svc = suite.svc;
});

/** The /metrics text, past its one-second reuse (the fake clock does not move that). */
async function scrape(s: { app: TestService['app'] }): Promise<string> {
  await new Promise((r) => setTimeout(r, 1_050));
  const res = await s.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The value of one series (`name{labels}`), or undefined when it is not there. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics, the outbox and the batches', () => {
  it('counts deliveries by status, ages the oldest pending one, counts unsealed and unproven batches', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await suite.receiver();
    await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    // Nothing queued yet, nothing sealed: every series is there, at zero.
    let text = await scrape(svc);
    for (const status of ['pending', 'retrying', 'failed', 'stopped']) {
      expect(value(text, `ons_webhook_outbox_deliveries{status="${status}"}`)).toBe(0);
    }
    expect(value(text, 'ons_webhook_outbox_oldest_pending_seconds')).toBe(0);
    expect(value(text, 'ons_batches_unsealed')).toBe(0);
    expect(value(text, 'ons_batches_unproven')).toBe(0);
    expect(value(text, 'ons_batch_oldest_unproven_seconds')).toBe(0);

    // The sealer opens the building batch the actions join.
    await svc.container.batches.sealer.openOrSeal();
    // Four actions, four deliveries queued (the worker is not running: nothing is sent).
    const firstAt = svc.clock.now().getTime();
    for (let nonce = 0; nonce < 4; nonce++) {
      await execute(svc, signer, 'mint', { template_id: templateId }, nonce);
      svc.clock.advance(10_000);
    }
    // One of them failed for good, one waits for a retry; two stay pending.
    const db = svc.container.db;
    const { rows } = await db.execute<{ id: string }>(
      sql`SELECT id FROM webhook_deliveries ORDER BY created_at, id`,
    );
    expect(rows).toHaveLength(4);
    const now = svc.clock.now();
    await db.execute(sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL,
      finished_at = ${now} WHERE id = ${rows[0]!.id}`);
    await db.execute(sql`UPDATE webhook_deliveries SET status = 'retrying',
      next_attempt_at = ${new Date(now.getTime() + 120_000)} WHERE id = ${rows[1]!.id}`);
    // A sealed batch waiting for its proof since 2 minutes ago.
    await db.execute(sql`INSERT INTO batches (id, sequence, status, seq_start, capacity,
      sealed_at, created_at, updated_at)
      VALUES ('bat_metrics_test', 1000000, 'proving', 900000000, 10,
        ${new Date(now.getTime() - 120_000)}, ${now}, ${now})`);

    text = await scrape(svc);
    expect(value(text, 'ons_webhook_outbox_deliveries{status="pending"}')).toBe(2);
    expect(value(text, 'ons_webhook_outbox_deliveries{status="retrying"}')).toBe(1);
    expect(value(text, 'ons_webhook_outbox_deliveries{status="failed"}')).toBe(1);
    expect(value(text, 'ons_webhook_outbox_deliveries{status="stopped"}')).toBe(0);
    // The oldest pending one is the third action's, due since it was queued.
    expect(value(text, 'ons_webhook_outbox_oldest_pending_seconds')).toBe(
      (now.getTime() - (firstAt + 20_000)) / 1000,
    );
    // The actions joined the building batch.
    expect(value(text, 'ons_batches_unsealed')).toBe(1);
    expect(value(text, 'ons_batches_unproven')).toBe(1);
    expect(value(text, 'ons_batch_oldest_unproven_seconds')).toBe(120);
    // The group-commit queue at rest.
    expect(value(text, 'ons_ebus_group_queue_actions')).toBe(0);
    expect(value(text, 'ons_ebus_groups_in_flight')).toBe(0);

    svc.clock.advance(30_000);
    text = await scrape(svc);
    expect(value(text, 'ons_webhook_outbox_oldest_pending_seconds')).toBe(
      (now.getTime() + 30_000 - (firstAt + 20_000)) / 1000,
    );
    expect(value(text, 'ons_batch_oldest_unproven_seconds')).toBe(150);
    await db.execute(sql`DELETE FROM batches WHERE id = 'bat_metrics_test'`);
  });

  it('were written without a trace: tracing is off unless its endpoint is set', async () => {
    expect(svc.config.tracing).toBeNull();
    expect(tracing()).toBeNull();
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE trace_parent IS NOT NULL`,
    );
    expect(rows[0]!.n).toBe(0);
  });
});

describe('/metrics, the group-commit queue', () => {
  // Each wallet of an organization of its own: groups of one organization are never in flight
  // at once (group-commit.ts).
  function action(walletId: string): VerifiedAction {
    return {
      payerOrgId: `org_${walletId}`,
      walletId,
      walletAddress: walletId,
      signerRole: 'member',
      apiKeyId: null,
      action: { wallet: walletId, name: 'mint', params: {}, nonce: 0, expires: '' },
      text: '',
      hash: walletId,
      signature: { type: 'eoa', signature: '0x' },
      passkey: null,
      credential: null,
      maxFeeWei: null,
    };
  }

  /**
   * A committer whose groups each wait until their function in `release` is called, and
   * `read`, which answers a series of its metrics.
   */
  function metered(options: Omit<GroupCommitOptions, 'maxWaitMs' | 'maxGroup'>) {
    const release: (() => void)[] = [];
    const applier = {
      apply: (items: readonly VerifiedAction[]) =>
        new Promise<ApplyOutcome[]>((resolve) =>
          release.push(() => resolve(items.map(() => ({ ok: false }) as unknown as ApplyOutcome))),
        ),
    };
    const committer = new GroupCommitter(applier, { maxWaitMs: 0, maxGroup: 1, ...options });
    const registry = new Registry();
    registerEbusMetrics(registry, committer.stats, () => committer.depth);
    const read = async (name: string) => value(await registry.getSingleMetricAsString(name), name);
    return { release, committer, read };
  }

  it('shows the actions waiting for a group and the groups in flight', async () => {
    const { release, committer, read } = metered({ maxConcurrent: 2, stallMs: 0, maxStalled: 0 });
    const done = ['w1', 'w2', 'w3', 'w4', 'w5'].map((w) => committer.submit(action(w)));
    await new Promise((r) => setImmediate(r));
    expect(await read('ons_ebus_groups_in_flight')).toBe(2);
    expect(await read('ons_ebus_group_queue_actions')).toBe(3);
    while (release.length > 0) {
      release.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(done);
    expect(await read('ons_ebus_groups_in_flight')).toBe(0);
    expect(await read('ons_ebus_group_queue_actions')).toBe(0);
  });

  it('counts the groups that stalled', async () => {
    const { release, committer, read } = metered({ maxConcurrent: 1, stallMs: 20, maxStalled: 1 });
    const done = ['w1', 'w2'].map((w) => committer.submit(action(w)));
    await new Promise((r) => setTimeout(r, 80));
    // w1's group stalled, so w2's started beside it; w2's cannot stall too (one slot).
    expect(await read('ons_ebus_groups_stalled')).toBe(1);
    expect(await read('ons_ebus_groups_in_flight')).toBe(2);
    release.splice(0).forEach((r) => r());
    await Promise.all(done);
  });
});

describe('/metrics by role', () => {
  it('an api process shows its group-commit queue, not the database-wide queues', async () => {
    const api = await startTestService({
      env: { ONS_ROLE: 'api' },
      databaseUrl: svc.config.databaseUrl!,
    });
    try {
      const text = await scrape(api);
      expect(value(text, 'ons_ebus_group_queue_actions')).toBe(0);
      expect(text).not.toContain('ons_webhook_outbox');
      expect(text).not.toContain('ons_batches_');
    } finally {
      await api.stop();
    }
  });

  it('a worker process shows the outbox and the batches, and no group-commit queue', async () => {
    const config = loadConfig({
      ONS_ROLE: 'worker',
      DATABASE_URL: svc.config.databaseUrl!,
      LOG_LEVEL: 'silent',
    });
    const worker = await createWorkerService({
      config,
      database: svc.database,
      clock: svc.clock,
      logger: createLogger('silent'),
    });
    try {
      const text = await scrape(worker);
      expect(value(text, 'ons_webhook_outbox_deliveries{status="pending"}')).toBe(2);
      expect(value(text, 'ons_batches_unsealed')).toBe(1);
      expect(text).not.toContain('ons_ebus_group');
      // Only what each setting runs here: without the sealer, no batch series.
      const noSealer = await createWorkerService({
        config: loadConfig({
          ONS_ROLE: 'worker',
          DATABASE_URL: svc.config.databaseUrl!,
          BATCH_SEALER: 'false',
        }),
        database: svc.database,
        clock: svc.clock,
        logger: createLogger('silent'),
      });
      try {
        const other = await scrape(noSealer);
        expect(value(other, 'ons_webhook_outbox_deliveries{status="pending"}')).toBe(2);
        expect(other).not.toContain('ons_batches_');
      } finally {
        await noSealer.close();
      }
    } finally {
      await worker.close();
    }
  });
});
