import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  ACTION_FEE,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  snapshot,
  type EoaSigner,
} from '../helpers/ebus.js';

/**
 * Two service instances on one database. Each remembers the state its groups wrote and
 * checks the next group against it without reading (the optimistic path); these tests move
 * the state behind one instance's back and show that it never answers from a stale
 * memory: a guard fails, the locked path reads afresh and decides.
 */
let a: TestService;
let b: TestService;

beforeAll(async () => {
  a = await startTestService();
  b = await startTestService({ databaseUrl: a.config.databaseUrl!, now: a.clock.now() });
});
afterAll(async () => {
  await b.stop();
  await a.stop();
});

async function execute(svc: TestService, signer: EoaSigner, action: Parameters<typeof signEoa>[2]) {
  const body = await signEoa(a, signer, action);
  return svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: signer.headers,
    payload: body,
  });
}

async function setup(balance = ACTION_FEE * 100n) {
  const owner = await createSigner(a, { role: 'owner' });
  await fund(a, owner.orgId, balance);
  const templateId = await createTemplate(a, owner.orgId);
  return { owner, templateId };
}

const mint = (templateId: string, nonce: number) => ({
  name: 'mint',
  params: { template_id: templateId },
  nonce,
});

describe('two instances on one database', () => {
  it('follow one wallet whose actions alternate between them', async () => {
    const { owner, templateId } = await setup();
    // a remembers next nonce 1 after this; b then moves it to 2 behind a's back.
    expect((await execute(a, owner, mint(templateId, 0))).statusCode).toBe(200);
    expect((await execute(b, owner, mint(templateId, 1))).statusCode).toBe(200);
    const third = await execute(a, owner, mint(templateId, 2));
    expect(third.statusCode, third.body).toBe(200);
    expect((await execute(b, owner, mint(templateId, 3))).statusCode).toBe(200);

    // a remembers 3; the wallet is at 4: another action with nonce 3 is refused with the true
    // next nonce (the same signed action again would be answered as applied: ebus-replay).
    const replay = await execute(a, owner, {
      ...mint(templateId, 3),
      params: { template_id: templateId, metadata: { name: 'another' } },
    });
    expect(replay.statusCode).toBe(409);
    expect(replay.json().message).toContain('replayed');
    expect(replay.json().message).toContain('next nonce is 4');

    const { rows } = await a.container.db.execute<{ nonce: string }>(
      sql`SELECT nonce::text FROM action_logs WHERE wallet_id = ${owner.walletId} ORDER BY nonce`,
    );
    expect(rows.map((r) => r.nonce)).toEqual(['0', '1', '2', '3']);
  });

  it('refuse an action the balance no longer covers, however much one of them remembers', async () => {
    const { owner, templateId } = await setup(ACTION_FEE * 2n);
    expect((await execute(a, owner, mint(templateId, 0))).statusCode).toBe(200);
    // a remembers one fee left; b spends it.
    expect((await execute(b, owner, mint(templateId, 1))).statusCode).toBe(200);
    const before = await snapshot(a, owner.orgId, owner.walletId);
    const short = await execute(a, owner, mint(templateId, 2));
    expect(short.statusCode, short.body).toBe(402);
    expect(await snapshot(a, owner.orgId, owner.walletId)).toEqual(before);
    expect(before.balance).toEqual({ b: '0' });

    // A deposit made elsewhere is seen at once.
    await fund(a, owner.orgId, ACTION_FEE);
    expect((await execute(a, owner, mint(templateId, 2))).statusCode).toBe(200);
  });

  it('apply a template change made elsewhere, even within the same millisecond', async () => {
    const { owner, templateId } = await setup();
    expect((await execute(a, owner, mint(templateId, 0))).statusCode).toBe(200);
    // The template stops listing mint; updated_at is left as it was (two edits in one ms).
    await b.container.db.execute(
      sql`UPDATE templates SET actions = '{transfer}' WHERE id = ${templateId}`,
    );
    const refused = await execute(a, owner, mint(templateId, 1));
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().message).toContain('does not list mint');
  });

  // Each field the checks use, changed behind a's back with updated_at left as it was: the
  // guard compares `version` (moved by name, description, category and faces) and the
  // fields that do not move it, never the faces themselves (repo/group-write.ts).
  const changes: {
    field: string;
    set: string;
    check: (res: Awaited<ReturnType<typeof execute>>, templateId: string) => Promise<void>;
  }[] = [
    {
      field: 'faces',
      set: `faces = '[{"id":"back","url":"https://x.test/b.png","config":{},"content":"new"}]'`,
      check: appliedWithVersion2,
    },
    { field: 'name', set: `name = 'Another name'`, check: appliedWithVersion2 },
    { field: 'description', set: `description = 'another'`, check: appliedWithVersion2 },
    { field: 'category', set: `category = 'another'`, check: appliedWithVersion2 },
    {
      field: 'is_public',
      set: 'is_public = false',
      check: async (res) => {
        expect(res.statusCode, res.body).toBe(200);
        const { rows } = await a.container.db.execute<{ is_public: boolean }>(
          sql`SELECT is_public FROM objects WHERE id = ${res.json().object.id as string}`,
        );
        expect(rows).toEqual([{ is_public: false }]);
      },
    },
    {
      field: 'custom_schema',
      set: `custom_schema = '{"type":"object","required":["seat"]}'`,
      check: async (res) => {
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().message).toContain("custom does not match the template's schema");
      },
    },
  ];
  async function appliedWithVersion2(res: Awaited<ReturnType<typeof execute>>, templateId: string) {
    expect(res.statusCode, res.body).toBe(200);
    const { rows } = await a.container.db.execute<{ template_version: number }>(
      sql`SELECT template_version FROM action_logs WHERE object_id = ${res.json().object.id as string}`,
    );
    expect(rows).toEqual([{ template_version: 2 }]);
    const faces = await a.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM templates WHERE id = ${templateId} AND version = 2`,
    );
    expect(faces.rows[0]!.n).toBe(1);
  }
  it.each(changes)(
    'apply a change of $field made elsewhere within the same millisecond',
    async (c) => {
      const { owner, templateId } = await setup();
      expect((await execute(a, owner, mint(templateId, 0))).statusCode).toBe(200);
      await b.container.db.execute(
        sql.raw(`UPDATE templates SET ${c.set} WHERE id = '${templateId}'`),
      );
      await c.check(await execute(a, owner, mint(templateId, 1)), templateId);
    },
  );

  it('refuse a transfer by an owner that another instance has moved the object from', async () => {
    const { owner, templateId } = await setup();
    const other = await createSigner(a, { orgId: owner.orgId, role: 'member' });
    const minted = await execute(a, owner, mint(templateId, 0));
    const objectId = minted.json().object.id as string;
    // b moves it to `other`; a still remembers `owner` as its owner.
    const moved = await execute(b, owner, {
      name: 'transfer',
      params: { object_id: objectId, to: other.address },
      nonce: 1,
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const before = await snapshot(a, owner.orgId, owner.walletId, objectId);
    const stale = await execute(a, owner, {
      name: 'transfer',
      params: { object_id: objectId, to: owner.address },
      nonce: 2,
    });
    expect(stale.statusCode, stale.body).toBe(403);
    expect(stale.json().message).toContain('only the owner');
    expect(await snapshot(a, owner.orgId, owner.walletId, objectId)).toEqual(before);

    // The new owner can, through the instance that remembered the old one.
    const back = await execute(a, other, {
      name: 'transfer',
      params: { object_id: objectId, to: owner.address },
      nonce: 0,
    });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().object.owner).toBe(owner.address);
  });

  it('refuse a pickup of an object another instance has seen picked up already', async () => {
    const { owner, templateId } = await setup();
    const other = await createSigner(a, { orgId: owner.orgId, role: 'member' });
    const objectId = (await execute(a, owner, mint(templateId, 0))).json().object.id as string;
    const location = { latitude: 52.37, longitude: 4.89 };
    const drop = { name: 'drop', params: { object_id: objectId, location }, nonce: 1 };
    expect((await execute(a, owner, drop)).statusCode).toBe(200);
    // a remembers it dropped, and owner's next nonce (2) rightly; b sees other pick it up.
    const pickup = { name: 'pickup', params: { object_id: objectId } };
    expect((await execute(b, other, { ...pickup, nonce: 0 })).statusCode).toBe(200);
    const before = await snapshot(a, owner.orgId, owner.walletId, objectId);
    const stale = await execute(a, owner, { ...pickup, nonce: 2 });
    expect(stale.statusCode, stale.body).toBe(403);
    expect(stale.json().message).toContain('not dropped');
    expect(await snapshot(a, owner.orgId, owner.walletId, objectId)).toEqual(before);
  });
});
