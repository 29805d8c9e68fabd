import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { newId } from '../../src/lib/ids.js';
import { createMember } from '../helpers/fixtures.js';
import { padCredential } from '../helpers/identity.js';
import { vectorPath } from '../support/vectors.js';
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

async function setup(balance = FEE * 100n) {
  const owner = await createSigner(svc, { role: 'owner' });
  await fund(svc, owner.orgId, balance);
  const templateId = await createTemplate(svc, owner.orgId);
  return { owner, orgId: owner.orgId, templateId };
}

async function mint(signer: EoaSigner, templateId: string, nonce = 0, extra = {}) {
  const body = await signEoa(svc, signer, {
    name: 'mint',
    params: { template_id: templateId, ...extra },
    nonce,
  });
  const res = await post('/ebus/execute', body, signer.headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('the shared action-text vector', () => {
  it('prepare reproduces its text, hash and challenge, and execute accepts its signature', async () => {
    const vector = JSON.parse(readFileSync(vectorPath('action-text.json'), 'utf8'));
    svc.clock.set('2026-11-30T23:50:00.000Z');
    const orgId = vector.organization_id as string;
    const now = svc.clock.now();
    await svc.container.db.execute(sql`INSERT INTO organizations (id, name, created_at, updated_at)
      VALUES (${orgId}, 'Vector Org', ${now}, ${now})`);
    const signer = await createSigner(svc, { orgId, privateKey: vector.private_key });
    expect(signer.address).toBe(vector.address);
    await svc.container.db.execute(
      sql`UPDATE wallets SET next_nonce = 6 WHERE id = ${signer.walletId}`,
    );
    await fund(svc, orgId, FEE * 2n);
    const templateId = await createTemplate(svc, orgId);
    const minted = await mint(signer, templateId, 6);
    await svc.container.db.execute(sql`
      UPDATE objects SET id = ${vector.action.params.object_id} WHERE id = ${minted.object.id}`);

    const prep = await post(
      '/ebus/prepare',
      {
        action: { name: 'transfer', params: vector.action.params },
      },
      signer.headers,
    );
    expect(prep.statusCode, prep.body).toBe(200);
    const p = prep.json();
    expect(p.text).toBe(vector.text);
    expect(p.hash).toBe(vector.hash);
    expect(p.challenge).toBe(vector.webauthn_challenge);
    expect(p.action).toEqual(vector.action);

    const res = await post(
      '/ebus/execute',
      {
        action: p.action,
        signature: { type: 'eoa', signature: vector.eip191_signature },
      },
      signer.headers,
    );
    expect(res.statusCode, JSON.stringify(svc.logs.filter((l) => l.level === 50))).toBe(200);
    expect(res.json().action).toMatchObject({ hash: vector.hash, nonce: 7, name: 'transfer' });
    expect(res.json().object.owner).toBe(vector.action.params.to);
    svc.clock.set(new Date());
  });
});

describe('GET /ebus/nonce', () => {
  it("answers the caller's next action number, starting at 0, and moves after an action", async () => {
    const { owner, templateId } = await setup();
    const first = await svc.app.inject({
      method: 'GET',
      url: '/ebus/nonce',
      headers: owner.headers,
    });
    expect(first.json()).toEqual({
      address: owner.address,
      nonce: 0,
      organization_id: owner.orgId,
    });
    await mint(owner, templateId);
    const second = await svc.app.inject({
      method: 'GET',
      url: `/ebus/nonce?address=${owner.address}`,
      headers: owner.headers,
    });
    expect(second.json()).toEqual({
      address: owner.address,
      nonce: 1,
      organization_id: owner.orgId,
    });
  });

  it('answers 404 for a wallet outside the organization, 400 for a malformed address, 401 without credentials', async () => {
    const { owner } = await setup();
    const stranger = await createSigner(svc);
    const other = await svc.app.inject({
      method: 'GET',
      url: `/ebus/nonce?address=${stranger.address}`,
      headers: owner.headers,
    });
    expect(other.statusCode).toBe(404);
    const bad = await svc.app.inject({
      method: 'GET',
      url: '/ebus/nonce?address=0x12',
      headers: owner.headers,
    });
    expect(bad.json().code).toBe(3);
    const none = await svc.app.inject({ method: 'GET', url: '/ebus/nonce' });
    expect([none.statusCode, none.json().code]).toEqual([401, 16]);
  });

  it('?signer= answers the wallet an EOA signs for: its own, or the one it is linked to (issue 32)', async () => {
    const { owner } = await setup();
    const member = await createSigner(svc, { orgId: owner.orgId, role: 'member' });
    const linked = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    const linkId = newId('credential');
    await svc.container.db.execute(sql`INSERT INTO credentials
      (id, wallet_id, type, external_id, created_at)
      VALUES (${linkId}, ${member.walletId}, 'eoa', ${linked}, ${svc.clock.now()})`);
    const ask = (signer: string, headers = owner.headers) =>
      svc.app.inject({ method: 'GET', url: `/ebus/nonce?signer=${signer}`, headers });
    expect((await ask(linked)).json()).toEqual({
      address: member.address,
      nonce: 0,
      organization_id: owner.orgId,
    });
    expect((await ask(member.address)).json()).toMatchObject({ address: member.address });
    // Unlinked, unknown, or another organization's: 404 naming the fix; malformed: 400.
    await svc.container.db.execute(
      sql`UPDATE credentials SET removed_at = ${svc.clock.now()} WHERE id = ${linkId}`,
    );
    const gone = await ask(linked);
    expect([gone.statusCode, gone.json().code]).toEqual([404, 5]);
    expect(gone.json().message).toContain('Link it to the acting wallet');
    const stranger = await createSigner(svc);
    expect((await ask(stranger.address)).statusCode).toBe(404);
    expect((await ask('0x12')).json().code).toBe(3);
    expect(
      (await svc.app.inject({ method: 'GET', url: `/ebus/nonce?signer=${linked}` })).statusCode,
    ).toBe(401);
  });
});

describe('POST /ebus/prepare', () => {
  it('answers the text, action, hash, challenge and fee, and changes nothing', async () => {
    const { owner, orgId, templateId } = await setup();
    const before = await snapshot(svc, orgId, owner.walletId);
    const res = await post(
      '/ebus/prepare',
      {
        action: { name: 'mint', params: { template_id: templateId } },
      },
      owner.headers,
    );
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json();
    expect(p.action).toMatchObject({ wallet: owner.address, name: 'mint', nonce: 0 });
    expect(Date.parse(p.action.expires) - svc.clock.now().getTime()).toBe(10 * 60_000);
    expect(p.text.split('\n')[0]).toBe('ONS action v1');
    expect(p.text).toContain(`organization: ${orgId}`);
    expect(p.hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(p.fee.total_fee_wei).toBe(FEE.toString());
    expect(await snapshot(svc, orgId, owner.walletId)).toEqual(before);
    // A client signing the prepared text gets it applied.
    const sig = await owner.account.signMessage({ message: p.text });
    const exec = await post(
      '/ebus/execute',
      {
        action: p.action,
        signature: { type: 'eoa', signature: sig },
      },
      owner.headers,
    );
    expect(exec.statusCode, exec.body).toBe(200);
  });

  it('refuses bad params with code 3, a viewer with code 7 and no credential with code 16', async () => {
    const { owner, orgId } = await setup();
    const bad = await post(
      '/ebus/prepare',
      {
        action: { name: 'transfer', params: { object_id: 'obj_x', to: 'nope' } },
      },
      owner.headers,
    );
    expect([bad.statusCode, bad.json().code]).toEqual([400, 3]);
    const unknown = await post(
      '/ebus/prepare',
      {
        action: { name: 'burn', params: {} },
      },
      owner.headers,
    );
    expect(unknown.json().code).toBe(3);
    const viewer = await createMember(svc, { orgId, role: 'viewer' });
    const v = await post(
      '/ebus/prepare',
      {
        action: { name: 'redeem', params: { object_id: 'o' } },
      },
      viewer.headers,
    );
    expect([v.statusCode, v.json().code]).toEqual([403, 7]);
    const none = await post(
      '/ebus/prepare',
      { action: { name: 'redeem', params: { object_id: 'o' } } },
      {},
    );
    expect([none.statusCode, none.json().code]).toEqual([401, 16]);
  });
});

describe('POST /ebus/execute', () => {
  it('mints: charges the fee, writes the log and ledger row, advances the nonce, answers both records', async () => {
    const { owner, orgId, templateId } = await setup(FEE * 3n);
    const out = await mint(owner, templateId, 0, {
      metadata: { name: 'Gold ticket' },
      custom: { seat: 12 },
      location: { latitude: 51.5, longitude: -0.12 },
    });
    expect(out.action).toMatchObject({
      name: 'mint',
      wallet: owner.address,
      signature_type: 'eoa',
      nonce: 0,
      template_id: templateId,
      object_id: out.object.id,
      fee_wei: FEE.toString(),
      batch_id: null,
    });
    expect(out.object).toMatchObject({
      owner: owner.address,
      template_id: templateId,
      custom: { seat: 12 },
      nonce: 0,
      version: 1,
      metadata: { name: 'Gold ticket', category: 'tickets' },
      location: { latitude: 51.5, longitude: -0.12, geo_hash: 'gcpuvr295' },
      prev_integrity_hash: '0x' + '0'.repeat(64),
    });
    const snap = await snapshot(svc, orgId, owner.walletId);
    expect(snap.balance).toEqual({ b: (FEE * 2n).toString() });
    expect(snap.nonce).toEqual({ next_nonce: 1 });
    const { rows } = await svc.container.db.execute<{
      kind: string;
      amount_wei: string;
      ref_id: string;
    }>(
      sql`SELECT kind, amount_wei::text, ref_id FROM ledger_entries WHERE organization_id = ${orgId} AND kind = 'action_fee'`,
    );
    expect(rows).toEqual([
      { kind: 'action_fee', amount_wei: (-FEE).toString(), ref_id: out.action.id },
    ]);
  });

  it('runs an object through transfer, update, drop, pickup and redeem, chaining its hashes', async () => {
    const { owner, orgId, templateId } = await setup();
    const other = await createSigner(svc, { orgId, role: 'member' });
    const minted = (await mint(owner, templateId)).object;
    const exec = async (signer: EoaSigner, name: string, params: object, nonce: number) => {
      const res = await post(
        '/ebus/actions',
        await signEoa(svc, signer, { name, params: { object_id: minted.id, ...params }, nonce }),
        signer.headers,
      );
      expect(res.statusCode, res.body).toBe(200);
      return res.json().object;
    };
    const t = await exec(owner, 'transfer', { to: other.address }, 1);
    expect(t).toMatchObject({
      owner: other.address,
      nonce: 1,
      version: 2,
      prev_integrity_hash: minted.integrity_hash,
    });
    const u = await exec(
      other,
      'update',
      { custom: { color: 'red' }, metadata: { description: 'x' } },
      0,
    );
    expect(u).toMatchObject({
      custom: { color: 'red' },
      metadata: { name: 'Ticket', description: 'x' },
      nonce: 2,
    });
    expect(u.custom_hash).not.toBe(t.custom_hash);
    const d = await exec(other, 'drop', { location: { latitude: 1, longitude: 2 } }, 1);
    expect(d).toMatchObject({ is_dropped: true, location: { latitude: 1, longitude: 2 } });
    const p = await exec(owner, 'pickup', {}, 2);
    expect(p).toMatchObject({ is_dropped: false, owner: owner.address, nonce: 4 });
    const r = await exec(owner, 'redeem', {}, 3);
    expect(r).toMatchObject({
      is_redeemed: true,
      version: 6,
      prev_integrity_hash: p.integrity_hash,
    });
  });

  it('accepts a passkey (webauthn) signature and stores the new sign count', async () => {
    const { orgId, templateId } = await setup();
    const signer = await createPasskeySigner(svc, { orgId, role: 'member' });
    const res = await post(
      '/ebus/execute',
      signPasskey(svc, signer, { name: 'mint', params: { template_id: templateId }, nonce: 0 }),
      signer.headers,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().action.signature_type).toBe('webauthn');
    const { rows } = await svc.container.db.execute<{ sign_count: number }>(
      sql`SELECT sign_count FROM credentials WHERE id = ${signer.credentialRowId}`,
    );
    expect(Number(rows[0]!.sign_count)).toBe(1);
  });

  it('accepts a passkey signature whose base64url fields are padded', async () => {
    const { orgId, templateId } = await setup();
    const signer = await createPasskeySigner(svc, { orgId, role: 'member' });
    const body = signPasskey(svc, signer, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: 0,
    });
    const credential = padCredential(body.signature.credential);
    expect(credential.id).not.toBe(body.signature.credential.id);
    const res = await post(
      '/ebus/execute',
      {
        ...body,
        signature: { type: 'webauthn', credential },
      },
      signer.headers,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().action.signature_type).toBe('webauthn');
  });

  it('refuses a viewer with 403 code 7 and no credential with 401 code 16', async () => {
    const { owner, orgId, templateId } = await setup();
    const viewer = await createMember(svc, { orgId, role: 'viewer' });
    const body = await signEoa(svc, owner, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: 0,
    });
    expect((await post('/ebus/execute', body, viewer.headers)).statusCode).toBe(403);
    expect((await post('/ebus/execute', body, {})).json().code).toBe(16);
  });
});
