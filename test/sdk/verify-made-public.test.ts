/**
 * An object sealed private and made public later (docs/batches.md, "An object made public
 * later"): its batch keeps the commitment it sealed, and the inclusion proof of each of its
 * actions then carries the salt that opens it, so the public verifier checks the object's whole
 * history. While the object is private, no proof carries a salt.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  httpSource,
  verifyNetwork,
  verifyPrivateAction,
  verifySealedBatch,
  type BatchRecord,
  type PrivateActionRecord,
  type ProofRecord,
} from '@ons/sdk';
import { buildNetwork, type VerifyNetwork } from './verify-fixture.js';

let net: VerifyNetwork;
let templateId: string;

beforeAll(async () => {
  net = await buildNetwork();
  const res = await net.live.svc.app.inject({
    method: 'GET',
    url: `/objects/${net.privateC}`,
    headers: net.owner.headers,
  });
  templateId = res.json<{ template_id: string }>().template_id;
});
afterAll(async () => {
  await net?.live.stop();
});

const get = (url: string) => net.live.svc.app.inject({ method: 'GET', url });

async function proofsOf(
  objectId: string,
): Promise<{ proof: ProofRecord; batch: string; action: string }[]> {
  const { rows } = await net.live.svc.container.db.execute<{ id: string; batch_id: string }>(
    // The test reads the action ids itself: the object's history is not public yet.
    sql`SELECT id, batch_id FROM action_logs
      WHERE object_id = ${objectId} ORDER BY seq`,
  );
  const out = [];
  for (const r of rows) {
    const res = await get(`/batches/${r.batch_id}/proofs/${r.id}`);
    expect(res.statusCode, res.body).toBe(200);
    out.push({ proof: res.json<ProofRecord>(), batch: r.batch_id, action: r.id });
  }
  return out;
}

async function firstActionId(): Promise<string> {
  const { rows } = await net.live.svc.container.db.execute<{ id: string }>(
    sql`SELECT id FROM action_logs WHERE object_id = ${net.privateC} ORDER BY seq LIMIT 1`,
  );
  return rows[0]!.id;
}

async function setPublic(isPublic: boolean) {
  const res = await net.live.svc.app.inject({
    method: 'PUT',
    url: `/templates/${templateId}`,
    headers: net.owner.headers,
    payload: { is_public: isPublic },
  });
  expect(res.statusCode, res.body).toBe(200);
}

describe('an object sealed private, made public later', () => {
  it('while private: its proofs carry no salt', async () => {
    const proofs = await proofsOf(net.privateC);
    expect(proofs.length).toBeGreaterThan(0);
    for (const { proof } of proofs) expect(proof.salt).toBeUndefined();
  });

  it('made public: each proof carries its salt, and the verifier checks the whole history', async () => {
    await setPublic(true);
    try {
      for (const { proof } of await proofsOf(net.privateC)) {
        expect(proof.salt).toMatch(/^0x[0-9a-f]{64}$/);
      }
      const report = await verifyNetwork(httpSource(net.live.baseUrl));
      const failed = report.verdicts.filter((v) => !v.ok);
      expect(failed).toEqual([]);
      // Its chain and its proofs were checked, not skipped.
      const items = report.verdicts.map((v) => v.item);
      expect(items).toContain(`object ${net.privateC}`);
      // Every one of its actions has a proof verdict of its own, and each holds.
      const actions = await proofsOf(net.privateC);
      expect(actions.length).toBeGreaterThan(0);
      for (const { action, batch } of actions) {
        const verdict = report.verdicts.find((v) => v.item === `proof ${action} in ${batch}`);
        expect(verdict, `proof ${action} in ${batch}`).toBeDefined();
        expect(verdict!.ok).toBe(true);
      }
      expect(report.ok).toBe(true);
      // The console's check of one batch, on each batch that sealed one of its actions.
      for (const batchId of new Set((await proofsOf(net.privateC)).map((p) => p.batch))) {
        const batch = (await get(`/batches/${batchId}`)).json<BatchRecord>();
        const one = await verifySealedBatch(httpSource(net.live.baseUrl), batch);
        expect(one.lines.filter((l) => !l.verdict.ok)).toEqual([]);
        expect(one.lines.some((l) => l.kind === 'chain' && l.id === net.privateC)).toBe(true);
      }
      // A member's check of the private record still holds with the salt-bearing proof, and
      // a proof whose salt is not the record's fails.
      const [first] = await proofsOf(net.privateC);
      const opened = await net.live.svc.app.inject({
        method: 'GET',
        url: `/batches/${first!.batch}/private-actions/${await firstActionId()}`,
        headers: net.owner.headers,
      });
      expect(opened.statusCode, opened.body).toBe(200);
      const record = opened.json<PrivateActionRecord>();
      const batch = (await get(`/batches/${first!.batch}`)).json<BatchRecord>();
      expect(await verifyPrivateAction(record, batch, { proof: first!.proof })).toMatchObject({
        ok: true,
      });
      const wrong = { ...first!.proof, salt: `0x${'ab'.repeat(32)}` };
      expect(await verifyPrivateAction(record, batch, { proof: wrong })).toMatchObject({
        ok: false,
        failed: 'salt',
      });
    } finally {
      await setPublic(false);
    }
  });

  it('made private again: the salts are gone again', async () => {
    for (const { proof } of await proofsOf(net.privateC)) expect(proof.salt).toBeUndefined();
  });
});
