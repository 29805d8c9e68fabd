import { verifySealedBatch, type BatchRecord, type Source } from '@ons/sdk';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { BatchExplorer } from '../../src/modules/batches/service.js';
import { useTestService } from '../helpers/harness.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';

/**
 * What the anonymous explorer reads and builds per request (docs/batches.md): a list item
 * carries only its batch's first actions, and a sealed batch's content is built once. Batches of 30 actions, sealed when a test calls
 * `settle()` (the worker loop is not started).
 */
const MAX_ACTIONS = 30;
const LISTED = 20;

const svc = useTestService({ env: { BATCH_MAX_ACTIONS: String(MAX_ACTIONS) } });
const { get } = svc;

let owner: EoaSigner;
let templateId: string;
let nonce = 0;
/** The sealed batch of 30 actions, and those actions in execution order. */
let sealed: { id: string; actions: string[] };

/** Runs the sealer until a pass does nothing. */
async function settle() {
  for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
}

/** Mints `n` objects in one request; the actions' ids and batches, in execution order. */
async function mintMany(n: number): Promise<{ id: string; batch_id: string }[]> {
  const actions = [];
  for (let i = 0; i < n; i++) {
    actions.push(
      await signEoa(svc, owner, {
        name: 'mint',
        params: { template_id: templateId },
        nonce: nonce++,
      }),
    );
  }
  const res = await svc.post('/ebus/actions/batch', { actions }, owner.headers);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().results as { action: { id: string; batch_id: string } }[]).map(
    (r) => r.action,
  );
}

/** The service's answers as the SDK's verifier reads them, without a network. */
const injected: Source = {
  json: async <T>(path: string) => {
    const res = await get(path);
    if (res.statusCode === 404) return null;
    expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
    return res.json<T>();
  },
  bytes: async (path: string) => {
    const res = await get(path);
    if (res.statusCode === 404) return null;
    expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
    return new Uint8Array(res.rawPayload);
  },
};

beforeAll(async () => {
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  templateId = await createTemplate(svc, owner.orgId);
  await settle(); // opens batch 1
  const minted = await mintMany(MAX_ACTIONS);
  await settle();
  sealed = { id: minted[0]!.batch_id, actions: minted.map((a) => a.id) };
  expect(minted.every((a) => a.batch_id === sealed.id)).toBe(true);
});

describe('GET /batches', () => {
  it("lists each batch's first 20 actions, with actions_count the total", async () => {
    const list = (await get('/batches?limit=100')).json<{ batches: BatchRecord[] }>().batches;
    const item = list.find((b) => b.id === sealed.id)!;
    expect(item).toMatchObject({ status: 'proven', actions_count: MAX_ACTIONS });
    expect(item.affected_actions.map((a) => a.id)).toEqual(sealed.actions.slice(0, LISTED));

    // The batch's own record still lists every one.
    const one = (await get(`/batches/${sealed.id}`)).json<BatchRecord>();
    expect(one.affected_actions.map((a) => a.id)).toEqual(sealed.actions);
    expect(one.affected_actions.slice(0, LISTED)).toEqual(item.affected_actions);
  });

  it('lists a building batch likewise', async () => {
    const minted = await mintMany(25);
    const building = minted[0]!.batch_id;
    expect(building).not.toBe(sealed.id);
    const list = (await get('/batches?status=building')).json<{ batches: BatchRecord[] }>();
    const item = list.batches.find((b) => b.id === building)!;
    expect(item.actions_count).toBe(25);
    expect(item.affected_actions.map((a) => a.id)).toEqual(
      minted.slice(0, LISTED).map((a) => a.id),
    );
    const one = (await get(`/batches/${building}`)).json<BatchRecord>();
    expect(one.affected_actions.map((a) => a.id)).toEqual(minted.map((a) => a.id));
  });

  it("given a list item, the SDK's verifySealedBatch still proves every action's inclusion", async () => {
    const list = (await get('/batches?status=proven')).json<{ batches: BatchRecord[] }>();
    const item = list.batches.find((b) => b.id === sealed.id)!;
    const report = await verifySealedBatch(injected, item, { previous: null, maxObjects: 0 });
    expect(report.lines.filter((l) => !l.verdict.ok)).toEqual([]);
    const included = report.lines.filter((l) => l.kind === 'inclusion').map((l) => l.id);
    expect(included).toEqual(sealed.actions);
  });
});

describe('GET /batches/{batchId}/content', () => {
  const url = () => `/batches/${sealed.id}/content`;
  const first = () => sealed.actions[0]!;

  it('is not rebuilt from the action rows while the batch keeps its ipfs_url', async () => {
    const before = await get(url());
    expect(before.statusCode).toBe(200);
    // A changed row would no longer match the ipfs_url (500) if the content were rebuilt.
    await svc.container.db.execute(
      sql`UPDATE action_logs SET params = params || '{"changed": true}' WHERE id = ${first()}`,
    );
    try {
      const again = await get(url());
      expect(again.statusCode, again.body).toBe(200);
      expect(again.rawPayload.equals(before.rawPayload)).toBe(true);
      // Kept by ipfs_url too: under another one the batch is built again (and fails here).
      const { rows } = await svc.container.db.execute<{ ipfs_url: string }>(
        sql`SELECT ipfs_url FROM batches WHERE id = ${sealed.id}`,
      );
      await svc.container.db.execute(
        sql`UPDATE batches SET ipfs_url = 'ipfs://another' WHERE id = ${sealed.id}`,
      );
      try {
        expect((await get(url())).statusCode).toBe(500);
      } finally {
        await svc.container.db.execute(
          sql`UPDATE batches SET ipfs_url = ${rows[0]!.ipfs_url} WHERE id = ${sealed.id}`,
        );
      }
    } finally {
      await svc.container.db.execute(
        sql`UPDATE action_logs SET params = params - 'changed' WHERE id = ${first()}`,
      );
    }
  });

  it('is built once for requests at the same time, reading the action rows once', async () => {
    const dialect = new PgDialect();
    const statements: string[] = [];
    const db = svc.container.db;
    const counted = new Proxy(db, {
      get: (target, prop, receiver) =>
        prop === 'execute'
          ? (query: SQL) => {
              statements.push(dialect.sqlToQuery(query).sql);
              return target.execute(query);
            }
          : Reflect.get(target, prop, receiver),
    });
    const { rows } = await db.execute<{ secret: string }>(sql`SELECT secret FROM batch_salt_keys`);
    // A new explorer: nothing kept yet.
    const explorer = new BatchExplorer(
      counted,
      svc.container.logger,
      Buffer.from(rows[0]!.secret, 'hex'),
    );
    // The build reads the batch's action rows; each request reads the batch's row with which
    // of its actions are on private objects now (`FROM action_logs a JOIN objects`).
    const rowReads = () =>
      statements.filter((s) => /\bFROM action_logs\s+WHERE batch_id\b/.test(s)).length;

    const served = (await get(url())).rawPayload;
    const together = await Promise.all(
      Array.from({ length: 5 }, () => explorer.content(sealed.id)),
    );
    expect(rowReads()).toBe(1);
    for (const c of together) expect(c.equals(served)).toBe(true);
    const later = await explorer.content(sealed.id);
    expect(later.equals(served)).toBe(true);
    expect(rowReads()).toBe(1);
    // Each request still reads the batch's row (its ipfs_url, whether it is being re-published)
    // and its actions' visibility now, in one statement.
    expect(statements.length - rowReads()).toBe(6);
    expect(statements.filter((s) => /\bFROM action_logs a JOIN objects\b/.test(s))).toHaveLength(6);
  });
});
