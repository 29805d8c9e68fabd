import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';
import {
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  signPasskey,
  snapshot,
  type EoaSigner,
  ACTION_FEE,
} from '../helpers/ebus.js';

const FEE = ACTION_FEE;

const svc = useTestService();

const { post } = svc;

/** An owner with one minted object (nonce now 1) and a funded organization. */
async function world(balance = FEE * 10n) {
  const owner = await createSigner(svc);
  await fund(svc, owner.orgId, balance + FEE);
  const templateId = await createTemplate(svc, owner.orgId, {
    customSchema: { type: 'object', properties: { seat: { type: 'integer' } } },
  });
  const body = await signEoa(svc, owner, {
    name: 'mint',
    params: { template_id: templateId },
    nonce: 0,
  });
  const res = await post('/ebus/execute', body, owner.headers);
  expect(res.statusCode, res.body).toBe(200);
  return { owner, orgId: owner.orgId, templateId, objectId: res.json().object.id as string };
}

/** Sends `body` as `by`, expects the refusal, and checks nothing moved. */
async function expectRefused(
  w: { orgId: string; owner: EoaSigner; objectId: string },
  by: { headers: Record<string, string> },
  body: unknown,
  status: number,
  code: number,
  message?: RegExp,
) {
  const before = await snapshot(svc, w.orgId, w.owner.walletId, w.objectId);
  const res = await post('/ebus/execute', body, by.headers);
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json().code).toBe(code);
  if (message) expect(res.json().message).toMatch(message);
  expect(await snapshot(svc, w.orgId, w.owner.walletId, w.objectId)).toEqual(before);
}

describe('refused actions change nothing and cost nothing', () => {
  it('refuses params that fail the schema with 400 code 3', async () => {
    const w = await world();
    const body = await signEoa(svc, w.owner, {
      name: 'transfer',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    await expectRefused(w, w.owner, body, 400, 3);
  });

  it('refuses unknown fields in the body with 400 code 3', async () => {
    const w = await world();
    const body = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    await expectRefused(w, w.owner, { ...body, extra: 1 }, 400, 3);
  });

  it('refuses custom data the template schema refuses with 400 code 3', async () => {
    const w = await world();
    const body = await signEoa(svc, w.owner, {
      name: 'update',
      params: { object_id: w.objectId, custom: { seat: 'A' } },
      nonce: 1,
    });
    await expectRefused(w, w.owner, body, 400, 3, /custom/);
  });

  it('refuses an expired action with 400 code 9', async () => {
    const w = await world();
    const body = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    svc.clock.advance(6 * 60_000);
    await expectRefused(w, w.owner, body, 400, 9, /expired/);
  });

  it('refuses a signature over other bytes with 401 code 16', async () => {
    const w = await world();
    const body = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    await expectRefused(w, w.owner, { ...body, action: { ...body.action, nonce: 2 } }, 401, 16);
    const garbage = { ...body, signature: { type: 'eoa', signature: '0x1234' } };
    await expectRefused(w, w.owner, garbage, 401, 16);
  });

  it("refuses a valid signature by another wallet's credential with 403 code 7", async () => {
    const w = await world();
    const other = await createSigner(svc, { orgId: w.orgId });
    const body = await signEoa(svc, other, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
      wallet: w.owner.address,
    });
    await expectRefused(w, w.owner, body, 403, 7, /another wallet/);
  });

  it('refuses a passkey assertion over other bytes with 401 code 16', async () => {
    const w = await world();
    const pk = await createPasskeySigner(svc, { orgId: w.orgId });
    const body = signPasskey(svc, pk, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 0,
    });
    await expectRefused(w, pk, { ...body, action: { ...body.action, nonce: 1 } }, 401, 16);
  });

  it('refuses a signer wallet that is not a member of the caller organization with 403 code 7', async () => {
    const w = await world();
    const outsider = await createSigner(svc);
    const body = await signEoa(
      svc,
      outsider,
      { name: 'redeem', params: { object_id: w.objectId }, nonce: 0 },
      { orgId: w.orgId },
    );
    await expectRefused(w, w.owner, body, 403, 7, /not an active member/);
  });

  it('refuses a replayed nonce and an out-of-order nonce with 409 code 10', async () => {
    const w = await world();
    const replay = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 0,
    });
    await expectRefused(w, w.owner, replay, 409, 10, /replayed/);
    const ahead = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 5,
    });
    await expectRefused(w, w.owner, ahead, 409, 10, /out of order/);
  });

  it('refuses an action the signer has no right to with 403 code 7', async () => {
    const w = await world();
    const other = await createSigner(svc, { orgId: w.orgId, role: 'member' });
    const notOwner = await signEoa(svc, other, {
      name: 'transfer',
      params: { object_id: w.objectId, to: other.address },
      nonce: 0,
    });
    await expectRefused(w, w.owner, notOwner, 403, 7, /owner/);
    const notDropped = await signEoa(svc, other, {
      name: 'pickup',
      params: { object_id: w.objectId },
      nonce: 0,
    });
    await expectRefused(w, w.owner, notDropped, 403, 7, /not dropped/);
    const viewer = await createSigner(svc, { orgId: w.orgId, role: 'viewer' });
    const mint = await signEoa(svc, viewer, {
      name: 'mint',
      params: { template_id: (await world()).templateId },
      nonce: 0,
    });
    await expectRefused(w, w.owner, mint, 403, 7);
  });

  it('refuses an action the template does not list, and anything on a redeemed object, with 403 code 7', async () => {
    const w = await world();
    const tpl = await createTemplate(svc, w.orgId, { actions: ['mint'] });
    const m = await post(
      '/ebus/execute',
      await signEoa(svc, w.owner, { name: 'mint', params: { template_id: tpl }, nonce: 1 }),
      w.owner.headers,
    );
    const locked = { ...w, objectId: m.json().object.id };
    const body = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: locked.objectId },
      nonce: 2,
    });
    await expectRefused(locked, w.owner, body, 403, 7, /does not list/);
    const r = await post(
      '/ebus/execute',
      await signEoa(svc, w.owner, { name: 'redeem', params: { object_id: w.objectId }, nonce: 2 }),
      w.owner.headers,
    );
    expect(r.statusCode).toBe(200);
    const after = await signEoa(svc, w.owner, {
      name: 'update',
      params: { object_id: w.objectId, custom: {} },
      nonce: 3,
    });
    await expectRefused(w, w.owner, after, 403, 7, /redeemed/);
  });

  it('refuses a missing object with 404 code 5', async () => {
    const w = await world();
    const body = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: 'obj_missing' },
      nonce: 1,
    });
    await expectRefused(w, w.owner, body, 404, 5);
  });

  it('refuses an underfunded organization with 402 code 9', async () => {
    const w = await world(0n);
    const body = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    await expectRefused(w, w.owner, body, 402, 9, /insufficient balance/);
  });

  it('refuses a fee above max_fee_wei with 400 code 9, and applies it at or under the limit', async () => {
    const w = await world();
    const body = await signEoa(
      svc,
      w.owner,
      { name: 'redeem', params: { object_id: w.objectId }, nonce: 1 },
      { maxFeeWei: (FEE - 1n).toString() },
    );
    await expectRefused(w, w.owner, body, 400, 9, /max_fee_wei/);
    const ok = await post(
      '/ebus/execute',
      {
        ...body,
        max_fee_wei: FEE.toString(),
      },
      w.owner.headers,
    );
    expect(ok.statusCode, ok.body).toBe(200);
  });
});

describe('POST /ebus/actions/batch', () => {
  it('answers per item in order; consecutive nonces of one wallet apply in order', async () => {
    const w = await world();
    const other = await createSigner(svc, { orgId: w.orgId, role: 'member' });
    const items = [
      await signEoa(svc, w.owner, {
        name: 'transfer',
        params: { object_id: w.objectId, to: other.address },
        nonce: 1,
      }),
      await signEoa(svc, other, {
        name: 'update',
        params: { object_id: w.objectId, custom: { seat: 3 } },
        nonce: 0,
      }),
      await signEoa(svc, w.owner, { name: 'redeem', params: { object_id: w.objectId }, nonce: 2 }),
      await signEoa(svc, other, { name: 'redeem', params: { object_id: w.objectId }, nonce: 1 }),
      await signEoa(svc, other, { name: 'redeem', params: { object_id: w.objectId }, nonce: 1 }),
    ];
    // The owner's redeem comes after giving the object away; the last item repeats the one
    // before it: the same signed action, answered as applied once (ebus-replay).
    const res = await post('/ebus/actions/batch', { actions: items }, w.owner.headers);
    expect(res.statusCode, res.body).toBe(200);
    const results = res.json().results;
    expect(results.map((r: { status: string }) => r.status)).toEqual([
      'applied',
      'applied',
      'refused',
      'applied',
      'applied',
    ]);
    expect(results[2].error.code).toBe(7);
    expect(results[3].replayed).toBeUndefined();
    expect(results[4].replayed).toBe(true);
    expect(results[4].action).toEqual(results[3].action);
    expect(results[4].object).toEqual(results[3].object);
    expect(results[3].object).toMatchObject({ is_redeemed: true, custom: { seat: 3 } });
  });

  it("applies one wallet's consecutive nonces in order even when listed backwards", async () => {
    const w = await world();
    const items = [];
    for (let n = 3; n >= 1; n--) {
      items.push(
        await signEoa(svc, w.owner, {
          name: 'update',
          params: { object_id: w.objectId, custom: { seat: n } },
          nonce: n,
        }),
      );
    }
    const res = await post('/ebus/actions/batch', { actions: items }, w.owner.headers);
    const results = res.json().results;
    expect(results.map((r: { status: string }) => r.status)).toEqual([
      'applied',
      'applied',
      'applied',
    ]);
    expect(results[0].object).toMatchObject({ custom: { seat: 3 }, nonce: 3 });
  });

  it('refuses more than 100 items with 400 code 3 and no credential with 401 code 16', async () => {
    const w = await world();
    const one = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    const big = await post(
      '/ebus/actions/batch',
      {
        actions: Array(101).fill(one),
      },
      w.owner.headers,
    );
    expect([big.statusCode, big.json().code]).toEqual([400, 3]);
    expect((await post('/ebus/actions/batch', { actions: [one] }, {})).statusCode).toBe(401);
  });
});

describe('POST /objects and PUT /objects/{id}', () => {
  it('mint and update through the REST forms, answering like execute', async () => {
    const w = await world();
    const mint = await signEoa(svc, w.owner, {
      name: 'mint',
      params: { template_id: w.templateId },
      nonce: 1,
    });
    const created = await post('/objects', mint, w.owner.headers);
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().object.id;
    const upd = await signEoa(svc, w.owner, {
      name: 'update',
      params: { object_id: id, custom: { seat: 9 } },
      nonce: 2,
    });
    const put = await svc.app.inject({
      method: 'PUT',
      url: `/objects/${id}`,
      headers: w.owner.headers,
      payload: upd,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      action: { name: 'update' },
      object: { id, custom: { seat: 9 } },
    });
  });

  it('refuses another action name or a path id that differs from params.object_id with 400 code 3', async () => {
    const w = await world();
    const redeem = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    expect((await post('/objects', redeem, w.owner.headers)).json().code).toBe(3);
    const upd = await signEoa(svc, w.owner, {
      name: 'update',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    const put = await svc.app.inject({
      method: 'PUT',
      url: '/objects/obj_other',
      headers: w.owner.headers,
      payload: upd,
    });
    expect([put.statusCode, put.json().code]).toEqual([400, 3]);
    const viewer = await createMember(svc, { orgId: w.orgId, role: 'viewer' });
    expect((await post('/objects', redeem, viewer.headers)).statusCode).toBe(403);
  });

  it('names the refused field: a mint for POST, an update for PUT, of the path object', async () => {
    const w = await world();
    const redeem = await signEoa(svc, w.owner, {
      name: 'redeem',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    const mint = await signEoa(svc, w.owner, {
      name: 'mint',
      params: { template_id: w.templateId },
      nonce: 1,
    });
    const upd = await signEoa(svc, w.owner, {
      name: 'update',
      params: { object_id: w.objectId },
      nonce: 1,
    });
    const put = (url: string, payload: object) =>
      svc.app.inject({ method: 'PUT', url, headers: w.owner.headers, payload });
    const refusals = [
      await post('/objects', redeem, w.owner.headers),
      await put(`/objects/${w.objectId}`, mint),
      await put('/objects/obj_01JD0000000000000000000000', upd),
    ];
    expect(refusals.map((r) => [r.statusCode, r.json().code, r.json().details?.fields])).toEqual([
      [400, 3, [{ field: 'action.name', reason: 'must be mint' }]],
      [400, 3, [{ field: 'action.name', reason: 'must be update' }]],
      [400, 3, [{ field: 'action.params.object_id', reason: 'must equal the path id' }]],
    ]);
    // Nothing was applied: the wallet's nonce 1 is still free.
    expect((await post('/ebus/execute', upd, w.owner.headers)).statusCode).toBe(200);
  });
});

describe('GET /ebus/action-logs', () => {
  it('lists applied actions with filters and pages, scoped to the organization', async () => {
    const w = await world();
    const other = await world();
    for (let n = 1; n <= 3; n++) {
      const b = await signEoa(svc, w.owner, {
        name: 'update',
        params: { object_id: w.objectId, custom: { seat: n } },
        nonce: n,
      });
      expect((await post('/ebus/execute', b, w.owner.headers)).statusCode).toBe(200);
    }
    const get = (q: string, h = w.owner.headers) =>
      svc.app.inject({ method: 'GET', url: `/ebus/action-logs${q}`, headers: h });
    const all = (await get('')).json();
    expect(all.action_logs).toHaveLength(4);
    expect(all.action_logs.map((l: { nonce: number }) => l.nonce)).toEqual([3, 2, 1, 0]);
    expect(Object.keys(all.action_logs[0]).sort()).toEqual([
      'batch_id',
      'expires',
      'fee_wei',
      'hash',
      'id',
      'log_index',
      'name',
      'nonce',
      'object_id',
      'organization_id',
      'params',
      'signature',
      'signature_type',
      'template_id',
      'template_version',
      'wallet',
      'when_created',
    ]);
    const page1 = (await get('?limit=3')).json();
    expect(page1.has_more).toBe(true);
    const page2 = (await get(`?limit=3&next=${page1.next}`)).json();
    expect(page2.action_logs.map((l: { nonce: number }) => l.nonce)).toEqual([0]);
    expect((await get('?name=mint')).json().action_logs).toHaveLength(1);
    expect((await get(`?hash=${all.action_logs[1].hash}`)).json().action_logs[0].nonce).toBe(2);
    expect((await get(`?id=${all.action_logs[1].id}`)).json().action_logs).toHaveLength(1);
    expect(
      (await get(`?wallet=${w.owner.address}&object_id=${w.objectId}`)).json().action_logs,
    ).toHaveLength(4);
    expect((await get(`?wallet=${other.owner.address}`)).json().action_logs).toHaveLength(0);
    const future = new Date(svc.clock.now().getTime() + 1000).toISOString();
    expect((await get(`?when_created[$gt]=${future}`)).json().action_logs).toHaveLength(0);
    expect((await get('?limit=101')).json().code).toBe(3);
    expect((await get('?sortBy=nonce')).json().code).toBe(3);
    const viewer = await createMember(svc, { orgId: w.orgId, role: 'viewer' });
    expect((await get('', viewer.headers)).statusCode).toBe(403);
    expect((await svc.app.inject({ method: 'GET', url: '/ebus/action-logs' })).statusCode).toBe(
      401,
    );
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM action_logs WHERE organization_id = ${w.orgId}`,
    );
    expect(rows[0]!.n).toBe(4);
  });
});

describe('GET /public/network and /public/network/fees', () => {
  it('answer without credentials: the network and token, and the fee parts from configuration', async () => {
    const net = await svc.app.inject({ method: 'GET', url: '/public/network' });
    expect(net.json()).toEqual({
      network: 'ons-test',
      token: 'ONS',
      decimals: 18,
      batch_public_key: svc.container.batches.publicKey,
      // What passkey assertions are checked against: the defaults WEBAUTHN_RP_ID, _ORIGINS.
      webauthn: { rp_id: 'localhost', origins: ['http://localhost:8080'] },
      // The transparency log's origin and key (docs/log.md); no witnesses configured here.
      log: { origin: expect.any(String), verifier_key: expect.any(String), witnesses: [] },
    });
    expect(svc.container.batches.publicKey).toMatch(/^0x[0-9a-f]{64}$/);
    const fees = (await svc.app.inject({ method: 'GET', url: '/public/network/fees' })).json();
    expect(fees).toMatchObject({
      token: 'ONS',
      decimals: 18,
      fixed_fee_wei: '1000000000000000',
      proving_fee_wei: '100000000000000',
      total_fee_wei: '1100000000000000',
      total_fee: '0.0011',
    });
    expect(Date.parse(fees.when_updated)).not.toBeNaN();
  });
});
