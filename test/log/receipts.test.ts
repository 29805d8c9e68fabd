import { sql } from 'drizzle-orm';
import { newId } from '../../src/lib/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt, type Receipt } from '../../sdk/src/log/receipt.js';
import { PRIVATE_DOMAIN } from '../../src/modules/batches/formulas.js';
import { permissionsOfRole, ROLES, type Permission } from '../../src/lib/permissions.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createMember } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { bytes, H, hex, parseCheckpoint, rootFromInclusion } from '../helpers/log.js';

/**
 * Issue 33, item 7: `GET /ebus/action-logs/{id}/receipt` — one self-contained receipt (the
 * record, its inclusion proof, the signed checkpoint) for the action's organization, and for
 * anyone when its object is public; checked with the SDK's `verifyReceipt`. Item 2: a new
 * checkpoint within 1 s of its batch's header, with the real sealer loop.
 */
let svc: TestService;
let owner: EoaSigner;
let stranger: EoaSigner;
let publicAction: { id: string; hash: string };
let privateAction: { id: string; hash: string };
let logKey: string;
const nonces = new Map<string, number>();

async function mint(signer: EoaSigner, templateId: string) {
  const n = nonces.get(signer.walletId) ?? 0;
  nonces.set(signer.walletId, n + 1);
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/actions',
    headers: signer.headers,
    payload: await signEoa(svc, signer, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: n,
    }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ action: { id: string; hash: string } }>().action;
}

async function settle() {
  svc.clock.advance(11_000);
  for (let i = 0; i < 30 && (await svc.container.batches.sealer.tick()); i++);
}

const receipt = (id: string, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url: `/ebus/action-logs/${id}/receipt`, headers });

beforeAll(async () => {
  svc = await startTestService({ env: { BATCH_MAX_ACTIONS: '3' } });
  owner = await createSigner(svc);
  stranger = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  await fund(svc, stranger.orgId, 10n ** 21n);
  const publicTemplate = await createTemplate(svc, owner.orgId);
  const privateTemplate = await createTemplate(svc, owner.orgId, { isPublic: false });
  await settle();
  publicAction = await mint(owner, publicTemplate);
  privateAction = await mint(owner, privateTemplate);
  await mint(stranger, await createTemplate(svc, stranger.orgId));
  await mint(owner, publicTemplate);
  await settle();
  logKey = (await svc.app.inject({ method: 'GET', url: '/public/network' })).json<{
    log: { verifier_key: string };
  }>().log.verifier_key;
});
afterAll(async () => {
  await svc?.stop();
});

describe('receipts', () => {
  it('answers the signer’s organization a receipt the SDK verifies offline with the log key', async () => {
    const res = await receipt(publicAction.id, owner.headers);
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json<Receipt & { leaf_hash: string; network: string }>();
    expect(r).toMatchObject({ version: 1, network: 'ons-test', log_index: 0, tree_size: 4 });
    expect(r.action).toMatchObject({ id: publicAction.id, hash: publicAction.hash, log_index: 0 });
    const checked = await verifyReceipt(r, { logKey });
    expect(checked.errors).toEqual([]);
    expect(checked.skipped).toEqual([]);
    expect(checked.ok).toBe(true);
    // Doctored: another index or a changed record fails.
    expect((await verifyReceipt({ ...r, log_index: 1 }, { logKey })).ok).toBe(false);
    const forged = { ...r, action: { ...r.action, params: { template_id: 'tpl_other' } } };
    expect((await verifyReceipt(forged, { logKey })).ok).toBe(false);
  });

  it('is public for an action on a public object: no credential, or another organization', async () => {
    for (const headers of [{}, stranger.headers]) {
      const res = await receipt(publicAction.id, headers);
      expect(res.statusCode, res.body).toBe(200);
      expect((await verifyReceipt(res.json<Receipt>(), { logKey })).ok).toBe(true);
    }
  });

  it('is refused for a private object’s action to anyone but its organization', async () => {
    for (const headers of [{}, stranger.headers]) {
      const res = await receipt(privateAction.id, headers);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 5 });
      expect(res.body).not.toContain(privateAction.hash);
    }
  });

  it('gives the organization a private action’s receipt with what opens its commitment', async () => {
    const res = await receipt(privateAction.id, owner.headers);
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json<
      Receipt & {
        leaf_hash: string;
        private: { leaf: string; salt: string; integrity_hash: string };
      }
    >();
    const commitment = H(
      PRIVATE_DOMAIN,
      bytes(r.private.salt),
      bytes(privateAction.hash),
      bytes(r.private.integrity_hash),
    );
    expect(r.private.leaf).toBe(hex(commitment));
    expect(r.leaf_hash).toBe(hex(H(Buffer.of(0), commitment)));
    const cp = parseCheckpoint(r.checkpoint);
    const root = rootFromInclusion(
      r.log_index,
      r.tree_size,
      bytes(r.leaf_hash),
      r.inclusion_proof.map(bytes),
    );
    expect(root && hex(root)).toBe(hex(cp.root));
  });

  it('opens a private action only to a caller holding actions.read and objects.read', async () => {
    // The rule, over every role and over keys holding each mix of the two permissions:
    // without actions.read 403; with it, the opening (salt, integrity hash) only with
    // objects.read too, as `GET /batches/{id}/private-actions/{actionId}` asks.
    const callers: {
      name: string;
      perms: ReadonlySet<Permission>;
      headers: Record<string, string>;
    }[] = [];
    for (const role of ROLES) {
      const m = await createMember(svc, { orgId: owner.orgId, role });
      callers.push({ name: `role ${role}`, perms: permissionsOfRole(role), headers: m.headers });
    }
    const mixes: Permission[][] = [
      ['actions.read'],
      ['objects.read'],
      ['actions.read', 'objects.read'],
      ['actions.read', 'objects.read', 'objects.update'],
    ];
    for (const perms of mixes) {
      const key = await createApiKey(svc, owner, perms);
      callers.push({ name: `key ${perms.join('+')}`, perms: new Set(perms), headers: key.headers });
    }
    expect(callers.some((c) => c.perms.has('actions.read') && !c.perms.has('objects.read'))).toBe(
      true,
    );
    for (const c of callers) {
      const res = await receipt(privateAction.id, c.headers);
      if (!c.perms.has('actions.read')) {
        expect([res.statusCode, res.json<{ code: number }>().code], c.name).toEqual([403, 7]);
        continue;
      }
      expect(res.statusCode, `${c.name}: ${res.body}`).toBe(200);
      const opening = res.json<{ private: Record<string, string> }>().private;
      if (c.perms.has('objects.read')) {
        expect(Object.keys(opening).sort(), c.name).toEqual(['integrity_hash', 'leaf', 'salt']);
      } else {
        expect(opening, c.name).toEqual({ leaf: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      }
    }
  });

  it('refuses a caller without actions.read, and answers 404 for no such action', async () => {
    const viewer = await createMember(svc, { orgId: owner.orgId, role: 'viewer' });
    const res = await receipt(publicAction.id, viewer.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 7 });
    expect((await receipt(newId('action'), owner.headers)).statusCode).toBe(404);
    expect((await receipt('act_nothing', owner.headers)).statusCode).toBe(400);
    expect((await receipt('x'.repeat(101), owner.headers)).statusCode).toBe(400);
  });

  it('answers 400 code 9 while the action’s batch is not in the log yet', async () => {
    const pending = await mint(owner, await createTemplate(svc, owner.orgId));
    const res = await receipt(pending.id, owner.headers);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 9 });
    await settle();
    expect((await receipt(pending.id, owner.headers)).statusCode).toBe(200);
  });
});

describe('checkpoint latency', () => {
  it('a new checkpoint exists within 1 s of its batch’s header being written', async () => {
    const templateId = await createTemplate(svc, owner.orgId);
    svc.container.batchWorker.start();
    try {
      const latest = async () =>
        (
          await svc.container.db.execute<{ sequence: number }>(sql`
            SELECT coalesce(max(sequence), 0)::int AS sequence FROM batches WHERE hash IS NOT NULL`)
        ).rows[0]!.sequence;
      const before = await latest();
      for (let i = 0; i < 3; i++) await mint(owner, templateId); // fills a batch: it seals
      const deadline = Date.now() + 30_000;
      let headerAt = 0;
      let target = 0;
      while (Date.now() < deadline) {
        if (headerAt === 0) {
          const seq = await latest();
          if (seq > before) [headerAt, target] = [Date.now(), seq];
        }
        if (headerAt > 0) {
          const res = await svc.app.inject({ method: 'GET', url: '/log/checkpoint' });
          if (parseCheckpoint(res.body).extension.startsWith(`ons-batch ${target} `)) {
            expect(Date.now() - headerAt).toBeLessThan(1_000);
            return;
          }
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error('no new checkpoint within 30 s');
    } finally {
      await svc.container.batchWorker.stop();
    }
  }, 40_000);
});
