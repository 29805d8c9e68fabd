import { describe, expect, it } from 'vitest';
import { bearer } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import {
  ACTION_FEE,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  snapshot,
  type EoaSigner,
} from '../helpers/ebus.js';

/** `action.expires` lies in the next 24 hours of the service's (fake) clock. */
const svc = useTestService();

const DAY_MS = 24 * 60 * 60 * 1000;
const { post } = svc;

async function world() {
  const owner = await createSigner(svc);
  await fund(svc, owner.orgId, ACTION_FEE * 10n);
  return { owner, templateId: await createTemplate(svc, owner.orgId) };
}

/** A mint signed by `owner` that expires `aheadMs` after the clock's now. */
function mint(owner: EoaSigner, templateId: string, nonce: number, aheadMs: number) {
  const expires = new Date(svc.clock.now().getTime() + aheadMs).toISOString();
  return signEoa(svc, owner, { name: 'mint', params: { template_id: templateId }, nonce, expires });
}

describe('action.expires at most 24 hours ahead', () => {
  it('accepts an action that expires exactly 24 hours from now', async () => {
    const { owner, templateId } = await world();
    const res = await post(
      '/ebus/execute',
      await mint(owner, templateId, 0, DAY_MS),
      owner.headers,
    );
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses one a millisecond later with 400 code 3 naming action.expires, on execute and actions', async () => {
    const { owner, templateId } = await world();
    const body = await mint(owner, templateId, 0, DAY_MS + 1);
    for (const url of ['/ebus/execute', '/ebus/actions']) {
      const before = await snapshot(svc, owner.orgId, owner.walletId);
      const res = await post(url, body, owner.headers);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({
        code: 3,
        details: { fields: [{ field: 'action.expires', reason: expect.any(String) }] },
      });
      expect(res.json().message).toContain('action.expires');
      expect(await snapshot(svc, owner.orgId, owner.walletId)).toEqual(before);
    }
  });

  it('measures from the clock: the same signed action is accepted once the time has come', async () => {
    const { owner, templateId } = await world();
    const body = await mint(owner, templateId, 0, 30 * DAY_MS);
    expect((await post('/ebus/execute', body, owner.headers)).statusCode).toBe(400);
    svc.clock.advance(29 * DAY_MS + 60_000);
    // The access token ran out meanwhile; the signed action did not.
    const fresh = await svc.container.sessions.issue(svc.container.db, {
      walletId: owner.walletId,
      orgId: owner.orgId,
    });
    const res = await post('/ebus/execute', body, bearer(fresh));
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses a batch item that expires too far ahead and applies the others', async () => {
    const { owner, templateId } = await world();
    const res = await post(
      '/ebus/actions/batch',
      {
        actions: [
          await mint(owner, templateId, 0, 60_000),
          await mint(owner, templateId, 1, 2 * DAY_MS),
        ],
      },
      owner.headers,
    );
    expect(res.statusCode, res.body).toBe(200);
    const [first, second] = res.json<{ results: Record<string, unknown>[] }>().results;
    expect(first).toMatchObject({ status: 'applied' });
    expect(second).toMatchObject({ status: 'refused', error: { code: 3 } });
    expect((second!.error as { message: string }).message).toContain('action.expires');
  });
});
