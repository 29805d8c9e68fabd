import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  ACTION_FEE,
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  signPasskey,
  snapshot,
  type EoaSigner,
} from '../helpers/ebus.js';

/**
 * A signed action is its own idempotency key: the same signed text with the same signature,
 * executed again, answers what it answered when it was applied (`Idempotent-Replayed: true`),
 * charges nothing and changes nothing; another text with a used nonce stays 409 code 10.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.stop();
});

type Body = Awaited<ReturnType<typeof signEoa>>;

function post(s: TestService, url: string, headers: Record<string, string>, payload: unknown) {
  return s.app.inject({ method: 'POST', url, headers, payload: payload as object });
}

async function world() {
  const owner = await createSigner(svc, { role: 'owner' });
  await fund(svc, owner.orgId, ACTION_FEE * 20n);
  const templateId = await createTemplate(svc, owner.orgId);
  return { owner, templateId };
}

async function mintBody(owner: EoaSigner, templateId: string, nonce: number): Promise<Body> {
  return signEoa(svc, owner, {
    name: 'mint',
    params: { template_id: templateId, custom: { n: nonce } },
    nonce,
  });
}

describe('executing an applied signed action again', () => {
  it('answers the original record with Idempotent-Replayed and charges nothing', async () => {
    const { owner, templateId } = await world();
    const body = await mintBody(owner, templateId, 0);
    const first = await post(svc, '/ebus/execute', owner.headers, body);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const objectId = first.json().object.id as string;
    const before = await snapshot(svc, owner.orgId, owner.walletId, objectId);

    for (const url of ['/ebus/execute', '/ebus/actions', '/objects']) {
      const again = await post(svc, url, owner.headers, body);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
    }
    expect(await snapshot(svc, owner.orgId, owner.walletId, objectId)).toEqual(before);
  });

  it('keeps 409 code 10 for another text with the used nonce, and 401 for another signature', async () => {
    const { owner, templateId } = await world();
    const body = await mintBody(owner, templateId, 0);
    expect((await post(svc, '/ebus/execute', owner.headers, body)).statusCode).toBe(200);
    const other = await signEoa(svc, owner, {
      name: 'mint',
      params: { template_id: templateId, custom: { n: 'other' } },
      nonce: 0,
    });
    const refused = await post(svc, '/ebus/execute', owner.headers, other);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 10 });
    expect(refused.headers['idempotent-replayed']).toBeUndefined();

    // The same text with a signature that is not the one applied: the refusal stands.
    const forged = { ...body, signature: { type: 'eoa', signature: other.signature.signature } };
    const bad = await post(svc, '/ebus/execute', owner.headers, forged);
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers the object as that action left it, after later actions changed it', async () => {
    const { owner, templateId } = await world();
    const mint = await mintBody(owner, templateId, 0);
    const minted = await post(svc, '/ebus/execute', owner.headers, mint);
    expect(minted.statusCode, minted.body).toBe(200);
    const objectId = minted.json().object.id as string;
    const update = await signEoa(svc, owner, {
      name: 'update',
      params: { object_id: objectId, custom: { n: 1 }, metadata: { name: 'renamed' } },
      nonce: 1,
    });
    svc.clock.advance(1000);
    const updated = await svc.app.inject({
      method: 'PUT',
      url: `/objects/${objectId}`,
      headers: owner.headers,
      payload: update,
    });
    expect(updated.statusCode, updated.body).toBe(200);
    // A new template version between them: the rebuild uses the version each action used.
    await svc.container.db.execute(
      sql`UPDATE templates SET name = 'another name', updated_at = now() WHERE id = ${templateId}`,
    );
    const transfer = await signEoa(svc, owner, {
      name: 'transfer',
      params: { object_id: objectId, to: '0x' + '1'.repeat(40) },
      nonce: 2,
    });
    svc.clock.advance(1000);
    const moved = await post(svc, '/ebus/execute', owner.headers, transfer);
    expect(moved.statusCode, moved.body).toBe(200);

    const againMint = await post(svc, '/ebus/execute', owner.headers, mint);
    expect(againMint.statusCode, againMint.body).toBe(200);
    expect(againMint.json().object).toEqual(minted.json().object);
    expect(againMint.json().action).toEqual(minted.json().action);
    const againUpdate = await svc.app.inject({
      method: 'PUT',
      url: `/objects/${objectId}`,
      headers: owner.headers,
      payload: update,
    });
    expect(againUpdate.statusCode, againUpdate.body).toBe(200);
    expect(againUpdate.headers['idempotent-replayed']).toBe('true');
    expect(againUpdate.json().object).toEqual(updated.json().object);
    expect(againUpdate.json().object.owner).toBe(owner.address);
  });

  it('answers after the action expired, and for a passkey whose counter cannot repeat', async () => {
    const { owner, templateId } = await world();
    const body = await mintBody(owner, templateId, 0);
    const first = await post(svc, '/ebus/execute', owner.headers, body);
    expect(first.statusCode).toBe(200);
    svc.clock.advance(10 * 60_000);
    const late = await post(svc, '/ebus/execute', owner.headers, body);
    expect(late.statusCode, late.body).toBe(200);
    expect(late.headers['idempotent-replayed']).toBe('true');
    expect(late.json()).toEqual(first.json());

    const pk = await createPasskeySigner(svc, { orgId: owner.orgId, role: 'member' });
    const signed = signPasskey(svc, pk, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: 0,
    });
    const applied = await post(svc, '/ebus/execute', pk.headers, signed);
    expect(applied.statusCode, applied.body).toBe(200);
    const again = await post(svc, '/ebus/execute', pk.headers, signed);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(applied.json());
  });

  it('answers each batch item applied before as applied and replayed', async () => {
    const { owner, templateId } = await world();
    const a = await mintBody(owner, templateId, 0);
    const first = await post(svc, '/ebus/execute', owner.headers, a);
    expect(first.statusCode).toBe(200);
    const b = await mintBody(owner, templateId, 1);
    const res = await post(svc, '/ebus/actions/batch', owner.headers, { actions: [a, b] });
    expect(res.statusCode, res.body).toBe(200);
    const [ra, rb] = res.json().results;
    expect(ra).toMatchObject({ status: 'applied', replayed: true });
    expect({ action: ra.action, object: ra.object }).toEqual(first.json());
    expect(rb.status).toBe('applied');
    expect(rb.replayed).toBeUndefined();
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM action_logs WHERE wallet_id = ${owner.walletId}`,
    );
    expect(rows[0]!.n).toBe(2);
  });

  it("reads an object's history only up to the action replayed, and at most 1,000 actions a request", async () => {
    const { owner, templateId } = await world();
    await fund(svc, owner.orgId, ACTION_FEE * 40n);
    const minted = await post(
      svc,
      '/ebus/execute',
      owner.headers,
      await mintBody(owner, templateId, 0),
    );
    expect(minted.statusCode, minted.body).toBe(200);
    const objectId = minted.json().object.id as string;
    // The mint and 29 updates: the object's history is 30 actions long.
    const updates: Body[] = [];
    for (let nonce = 1; nonce < 30; nonce++) {
      updates.push(
        await signEoa(svc, owner, {
          name: 'update',
          params: { object_id: objectId, custom: { n: nonce } },
          nonce,
        }),
      );
    }
    const applied = await post(svc, '/ebus/actions/batch', owner.headers, { actions: updates });
    expect(applied.statusCode, applied.body).toBe(200);
    expect(applied.json().results.every((r: { status: string }) => r.status === 'applied')).toBe(
      true,
    );
    // The 15th action, sent again 100 times in one batch: each replay reads the 15 actions up
    // to it (not all 30), so the request's 1,000 steps answer 66 of them; the rest keep their
    // refusal (409 code 10, the nonce is used), and nothing is charged or changed.
    const fifteenth = updates[13]!;
    const before = await snapshot(svc, owner.orgId, owner.walletId, objectId);
    const res = await post(svc, '/ebus/actions/batch', owner.headers, {
      actions: Array.from({ length: 100 }, () => fifteenth),
    });
    expect(res.statusCode, res.body).toBe(200);
    const results = res.json().results as {
      status: string;
      replayed?: boolean;
      error?: { code: number };
    }[];
    expect(results.slice(0, 66).every((r) => r.status === 'applied' && r.replayed)).toBe(true);
    expect(results.slice(66).map((r) => [r.status, r.error?.code])).toEqual(
      Array.from({ length: 34 }, () => ['refused', 10]),
    );
    expect(results[0]).toMatchObject({ object: applied.json().results[13].object });
    expect(await snapshot(svc, owner.orgId, owner.walletId, objectId)).toEqual(before);
  });

  it('never replays for another organization', async () => {
    const { owner, templateId } = await world();
    const body = await mintBody(owner, templateId, 0);
    expect((await post(svc, '/ebus/execute', owner.headers, body)).statusCode).toBe(200);
    const stranger = await createSigner(svc, { role: 'owner' });
    const res = await post(svc, '/ebus/execute', stranger.headers, body);
    expect(res.statusCode).not.toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('is answered by another instance and after a restart (the database keeps it)', async () => {
    const { owner, templateId } = await world();
    const body = await mintBody(owner, templateId, 0);
    const first = await post(svc, '/ebus/execute', owner.headers, body);
    expect(first.statusCode).toBe(200);
    const other = await startTestService({
      databaseUrl: svc.config.databaseUrl!,
      now: svc.clock.now(),
    });
    try {
      const again = await post(other, '/ebus/execute', owner.headers, body);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
    } finally {
      await other.stop();
    }
  });
});
