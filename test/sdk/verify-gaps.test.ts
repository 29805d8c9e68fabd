import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  httpSource,
  ipfsUrlOf,
  verifyActionSignature,
  verifyBatch,
  verifyNetwork,
  verifyObjectChain,
  type ActionRecord,
  type BatchRecord,
  type PublicCredential,
  type PublicObject,
  type PublicTemplate,
  type SignerLinks,
  type Source,
  type TemplateVersion,
} from '@ons/sdk';
import { buildGapsNetwork, FACES_V1, FACES_V2, type GapsNetwork } from './verify-gaps-fixture.js';

/**
 * The verifier's three gaps (docs/batches.md, docs/objects.md): EOA signers linked to a
 * wallet, `integrity_root` of batches holding private objects (content version 2), and
 * object chains replayed with the template version each action was applied with.
 */

let net: GapsNetwork;
let source: Source;
beforeAll(async () => {
  net = await buildGapsNetwork();
  source = httpSource(net.live.baseUrl);
});
afterAll(async () => {
  await net?.live.stop();
});

const getJson = async <T>(path: string): Promise<T> => (await source.json<T>(path))!;
const raw = (path: string) => fetch(`${net.live.baseUrl}${path}`);
const answer = async (res: Response) => [res.status, ((await res.json()) as { code: number }).code];
const history = async (id: string) =>
  (await getJson<{ action_logs: ActionRecord[] }>(`/public/objects/${id}/history?order=asc`))
    .action_logs;
const batch = (i: number) => getJson<BatchRecord>(`/batches/${net.batchIds[i]}`);
const content = async (i: number) => (await source.bytes(`/batches/${net.batchIds[i]}/content`))!;
const networkInfo = () => getJson<{ network: string; batch_public_key: string }>('/public/network');
const flipHex = (h: string) => h.slice(0, -1) + (h.endsWith('0') ? '1' : '0');

/** A source answering 404 for the paths `hide` matches, and `inner`'s answer otherwise. */
function hiding(hide: (path: string) => boolean, inner: Source = source): Source {
  return {
    bytes: (p) => (hide(p) ? Promise.resolve(null) : inner.bytes(p)),
    json: <T>(p: string) => (hide(p) ? Promise.resolve(null) : inner.json<T>(p)),
  };
}

describe('the whole network verifies', () => {
  it('with a linked EOA, a changed template and private objects in every batch', async () => {
    expect(net.batchIds).toHaveLength(3);
    const report = await verifyNetwork(source);
    expect(report.verdicts.filter((v) => !v.ok)).toEqual([]);
    const batches = report.verdicts.filter((v) => v.item.startsWith('batch '));
    // Batch 1 was sealed with content version 1 and holds the private object's mint: it was
    // re-published as version 3 (docs/batches.md), whose objects give integrity_root; batches
    // 2 and 3 are version 4. Nothing is skipped.
    expect(batches.map((b) => b.skipped ?? [])).toEqual([[], [], []]);
    expect([(await batch(0)).version, (await batch(1)).version, (await batch(2)).version]).toEqual([
      3, 4, 4,
    ]);
  });
});

describe('gap 1: an EOA linked to a wallet', () => {
  const linksPath = () =>
    `/public/wallets/${net.member.address}/signers/${net.linked.address.toLowerCase()}`;

  it('GET /public/wallets/{address}/signers/{signer} answers the link and its time span', async () => {
    const links = await getJson<SignerLinks>(linksPath());
    expect(links.wallet).toBe(net.member.address);
    expect(links.signer).toBe(net.linked.address.toLowerCase());
    expect(links.links).toHaveLength(1);
    const [link] = links.links;
    expect(Date.parse(link!.when_linked)).toBeLessThan(Date.parse(link!.when_unlinked));
    // Mixed-case addresses name the same link.
    const mixed = await getJson<SignerLinks>(
      `/public/wallets/${net.member.address.toUpperCase().replace('0X', '0x')}/signers/${net.linked.address}`,
    );
    expect(mixed).toEqual(links);
    // A wallet's own EOA is one of its signers too, linked since the wallet was made.
    const own = await getJson<SignerLinks>(
      `/public/wallets/${net.owner.address}/signers/${net.owner.address}`,
    );
    expect(own.links).toEqual([{ when_linked: expect.any(String), when_unlinked: '' }]);
  });

  it('answers 404 for an address never linked, an unknown wallet, and 400 for malformed ones', async () => {
    const stranger = '0x' + '12'.repeat(20);
    for (const path of [
      `/public/wallets/${net.member.address}/signers/${stranger}`,
      `/public/wallets/${stranger}/signers/${net.linked.address}`,
      // The owner's EOA was never linked to the member's wallet.
      `/public/wallets/${net.member.address}/signers/${net.owner.address}`,
    ]) {
      expect(await answer(await raw(path))).toEqual([404, 5]);
    }
    for (const path of [
      `/public/wallets/nope/signers/${stranger}`,
      `/public/wallets/${stranger}/signers/0x1234`,
      `/public/wallets/${stranger}/signers/${stranger}00`,
    ]) {
      expect(await answer(await raw(path))).toEqual([400, 3]);
    }
  });

  it('publishes nothing for a wallet that never signed an action with an EOA', async () => {
    const { createPasskeySigner } = await import('../helpers/ebus.js');
    const { sql } = await import('drizzle-orm');
    const { newId } = await import('../../src/lib/ids.js');
    const svc = net.live.svc;
    const quiet = await createPasskeySigner(svc, { orgId: net.owner.orgId });
    const eoa = '0x' + 'ab'.repeat(20);
    await svc.container.db.execute(sql`INSERT INTO credentials (id, wallet_id, type, external_id,
      created_at) VALUES (${newId('credential')}, ${quiet.walletId}, 'eoa', ${eoa}, ${svc.clock.now()})`);
    expect(await answer(await raw(`/public/wallets/${quiet.address}/signers/${eoa}`))).toEqual([
      404, 5,
    ]);
  });

  it("the verifier passes the linked EOA's action, after the unlink too", async () => {
    const update = (await history(net.publicA)).find((a) => a.name === 'update')!;
    expect(update.signature_type).toBe('eoa');
    expect(update.wallet).toBe(net.member.address);
    const ctx = {
      network: (await networkInfo()).network,
      credential: (id: string) => source.json<PublicCredential>(`/public/credentials/${id}`),
      signerLinks: (w: string, s: string) =>
        source.json<SignerLinks>(`/public/wallets/${w}/signers/${s}`),
    };
    expect(await verifyActionSignature(update, ctx)).toEqual({
      item: `action ${update.id}`,
      ok: true,
    });
    const signer = net.linked.address.toLowerCase();
    // Not linked: the verdict names the signature and the address it recovers.
    const unlinked = await verifyActionSignature(update, { ...ctx, signerLinks: async () => null });
    expect(unlinked).toMatchObject({ ok: false, failed: 'signature' });
    expect(unlinked.reason).toContain(signer);
    expect(unlinked.reason).toMatch(/neither the wallet .* nor an EOA linked to it/);
    // Linked, but not when the action was made.
    const links = await getJson<SignerLinks>(linksPath());
    const later = {
      ...links,
      links: [{ when_linked: '2099-01-01T00:00:00.000Z', when_unlinked: '' }],
    };
    const outside = await verifyActionSignature(update, { ...ctx, signerLinks: async () => later });
    expect(outside).toMatchObject({ ok: false, failed: 'signature' });
    expect(outside.reason).toContain(`${signer}, which was not linked to the wallet`);
    // Through verifyNetwork: the link not served.
    const report = await verifyNetwork(
      hiding((p) => p.startsWith('/public/wallets/')),
      { objects: [net.publicA] },
    );
    expect(report.verdicts.filter((v) => !v.ok)).toEqual([
      expect.objectContaining({ item: `action ${update.id}`, failed: 'signature' }),
    ]);
  });
});

describe('gap 2: integrity_root from batch content version 2', () => {
  /** The index of the version 2 batch holding an action on the private object. */
  const privateBatch = async () => {
    for (let i = 1; i < net.batchIds.length; i++) {
      const c = JSON.parse(new TextDecoder().decode(await content(i)));
      if ((c.actions as { object_id: string }[]).some((a) => a.object_id === net.privateP)) {
        return i;
      }
    }
    throw new Error('no version 4 batch acts on the private object');
  };

  it('re-published the batch sealed with version 1 as version 3, and lays out version 4', async () => {
    const first = await batch(0);
    expect(first.version).toBe(3);
    // The former CID (of the version 1 content, which showed the private mint) is history.
    expect(first.superseded_ipfs_urls).toHaveLength(1);
    expect(first.superseded_ipfs_urls[0]).not.toBe(first.ipfs_url);
    const v3 = JSON.parse(new TextDecoder().decode(await content(0)));
    expect(Object.keys(v3)).toEqual(['actions', 'batch', 'objects', 'version']);
    const mint = v3.actions.find((a: { object_id: string }) => a.object_id === net.privateP);
    expect(Object.keys(mint)).toEqual([
      'batch_id',
      'fee_wei',
      'hash',
      'id',
      'integrity_hash',
      'object_id',
      'private',
    ]);
    const v4 = JSON.parse(new TextDecoder().decode(await content(await privateBatch())));
    expect(v4.version).toBe(4);
    expect(Object.keys(v4)).toEqual(['actions', 'batch', 'objects', 'version']);
    for (const a of v4.actions) {
      if (a.private) {
        expect(Object.keys(a)).toEqual([
          'batch_id',
          'commitment',
          'fee_wei',
          'id',
          'object_id',
          'private',
        ]);
        continue;
      }
      expect(a).toMatchObject({
        organization_id: expect.stringMatching(/^org_/),
        template_version: expect.any(Number),
        integrity_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
    }
    // objects: each affected object once, sorted by id, with its last action's integrity
    // hash, or for the private object its last action's commitment.
    const last = new Map<string, Record<string, string>>();
    for (const a of v4.actions) {
      last.set(
        a.object_id,
        a.private
          ? { id: a.object_id, commitment: a.commitment }
          : { id: a.object_id, integrity_hash: a.integrity_hash },
      );
    }
    const ids = [...last.keys()].sort();
    expect(v4.objects).toEqual(ids.map((id) => last.get(id)));
    expect(ids).toContain(net.privateP);
  });

  it("checks no private action's signature (its text is not public), and names a changed commitment", async () => {
    const k = await privateBatch();
    const parsed = JSON.parse(new TextDecoder().decode(await content(k))) as {
      actions: { id: string; object_id: string; commitment?: string }[];
    };
    const hidden = parsed.actions.find((a) => a.object_id === net.privateP)!;
    expect(hidden).not.toHaveProperty('signature');
    const report = await verifyNetwork(source);
    expect(report.ok).toBe(true);
    expect(report.verdicts.some((v) => v.item === `action ${hidden.id}`)).toBe(false);
    // Its commitment changed in the content served: the batch names ipfs_url.
    const path = `/batches/${net.batchIds[k]}/content`;
    const changed: Source = {
      json: (p) => source.json(p),
      bytes: async (p) => {
        const b = await source.bytes(p);
        if (p !== path || b === null) return b;
        const c = JSON.parse(new TextDecoder().decode(b)) as typeof parsed;
        const a = c.actions.find((x) => x.id === hidden.id)!;
        a.commitment = flipHex(a.commitment!);
        return new TextEncoder().encode(JSON.stringify(c));
      },
    };
    const tampered = await verifyNetwork(changed);
    expect(tampered.verdicts.filter((v) => !v.ok)).toEqual([
      expect.objectContaining({ item: `batch ${k + 1} ${net.batchIds[k]}`, failed: 'ipfs_url' }),
    ]);
  });

  it('recomputes integrity_root for a batch with a private object, and names a changed hash', async () => {
    const { batch_public_key } = await networkInfo();
    const k = await privateBatch();
    const [previous, target] = [await batch(k - 1), await batch(k)];
    const bytes = await content(k);
    const check = (b: BatchRecord, c: Uint8Array, integrityByAction?: Map<string, string>) =>
      verifyBatch(b, c, {
        batchPublicKey: batch_public_key,
        previous,
        ...(integrityByAction ? { integrityByAction } : {}),
      });
    // No replayed chain at all: still recomputed, nothing skipped.
    expect(await check(target, bytes)).toEqual({
      item: `batch ${target.sequence} ${target.id}`,
      ok: true,
    });

    type Content = {
      objects: { id: string; integrity_hash?: string; commitment?: string }[];
      actions: { id: string; object_id: string; integrity_hash?: string; commitment?: string }[];
    };
    const text = new TextDecoder().decode(bytes);
    const forge = (change: (c: Content) => void) => {
      const c = JSON.parse(text) as Content;
      change(c);
      const b = new TextEncoder().encode(JSON.stringify(c));
      return { bytes: b, batch: { ...target, ipfs_url: ipfsUrlOf(b) } };
    };
    // The private object's leaf (its last action's commitment) changed in the content: its
    // CID is checked first.
    const edited = forge((c) => {
      const o = c.objects.find((x) => x.id === net.privateP)!;
      o.commitment = flipHex(o.commitment!);
    });
    expect(await check(target, edited.bytes)).toMatchObject({ ok: false, failed: 'ipfs_url' });
    // …and with the explorer's ipfs_url made to match: integrity_root.
    expect(await check(edited.batch, edited.bytes)).toMatchObject({
      ok: false,
      failed: 'integrity_root',
    });
    // A public action's integrity hash changed (objects untouched): the objects no longer match.
    const action = forge((c) => {
      const a = c.actions.filter((x) => x.object_id !== net.privateP).at(-1)!;
      a.integrity_hash = flipHex(a.integrity_hash!);
    });
    expect(await check(action.batch, action.bytes)).toMatchObject({
      ok: false,
      failed: 'objects',
    });
    // The private action's commitment changed (objects untouched): actions_hash, whose leaf
    // it is, is checked first.
    const commitment = forge((c) => {
      const a = c.actions.filter((x) => x.object_id === net.privateP).at(-1)!;
      a.commitment = flipHex(a.commitment!);
    });
    expect(await check(commitment.batch, commitment.bytes)).toMatchObject({
      ok: false,
      failed: 'actions_hash',
    });
    // A replayed chain that disagrees with the content names the action.
    const a0 = (JSON.parse(text) as Content).actions.find((x) => x.integrity_hash)!;
    const replayed = await check(target, bytes, new Map([[a0.id, flipHex(a0.integrity_hash!)]]));
    expect(replayed).toMatchObject({ ok: false, failed: 'integrity_hash' });
    expect(replayed.reason).toContain(a0.id);
    // The explorer claiming another content version.
    expect(await check({ ...target, version: 1 }, bytes)).toMatchObject({
      ok: false,
      failed: 'version',
    });
  });
});

describe('gap 3: chains replayed with the template version of each action', () => {
  it('GET /public/templates/{id}/versions/{version} serves each version', async () => {
    const v1 = await getJson<TemplateVersion>(`/public/templates/${net.template}/versions/1`);
    expect(v1).toMatchObject({
      template_id: net.template,
      version: 1,
      name: 'Ticket',
      faces: FACES_V1,
    });
    const v2 = await getJson<TemplateVersion>(`/public/templates/${net.template}/versions/2`);
    expect(v2).toMatchObject({ version: 2, name: 'Ticket, gold', faces: FACES_V2 });
    expect(Date.parse(v2.when_created)).toBeGreaterThan(Date.parse(v1.when_created));
    for (const path of [
      `/public/templates/${net.template}/versions/3`,
      `/public/templates/${net.hidden}/versions/1`,
    ]) {
      expect(await answer(await raw(path))).toEqual([404, 5]);
    }
    for (const path of [
      `/public/templates/${net.template}/versions/0`,
      `/public/templates/${net.template}/versions/one`,
      `/public/templates/nope/versions/1`,
    ]) {
      expect(await answer(await raw(path))).toEqual([400, 3]);
    }
    const doc = await getJson<{ paths: Record<string, unknown> }>('/openapi.json');
    expect(doc.paths).toHaveProperty(['/public/templates/{id}/versions/{version}', 'get']);
    expect(doc.paths).toHaveProperty(['/public/wallets/{address}/signers/{signer}', 'get']);
  });

  it('makes a version only when what chains hash changes', async () => {
    const svc = net.live.svc;
    const put = (payload: object) =>
      svc.app.inject({
        method: 'PUT',
        url: `/templates/${net.hidden}`,
        headers: net.owner.headers,
        payload,
      });
    const { sql } = await import('drizzle-orm');
    const versions = async () =>
      (
        await svc.container.db.execute<{ version: number }>(
          sql`SELECT version FROM template_versions WHERE template_id = ${net.hidden} ORDER BY version`,
        )
      ).rows.map((r) => r.version);
    expect(await versions()).toEqual([1]);
    expect((await put({ actions: ['mint', 'update'] })).statusCode).toBe(200);
    expect(await versions()).toEqual([1]);
    expect((await put({ description: 'changed' })).statusCode).toBe(200);
    expect(await versions()).toEqual([1, 2]);
  });

  it('records the version in force at each action; the current template alone fails', async () => {
    const log = await history(net.publicA);
    expect(log.map((a) => [a.name, a.template_version])).toEqual([
      ['mint', 1],
      ['transfer', 1],
      ['update', 2],
      ['redeem', 2],
    ]);
    const object = (await getJson<{ objects: PublicObject[] }>(`/public/objects?id=${net.publicA}`))
      .objects[0]!;
    const current = await getJson<PublicTemplate>(`/public/templates/${net.template}`);
    const v = new Map<number, TemplateVersion>();
    for (const n of [1, 2]) {
      v.set(n, await getJson<TemplateVersion>(`/public/templates/${net.template}/versions/${n}`));
    }
    const byVersion = (a: ActionRecord) => v.get(a.template_version!) ?? null;
    expect(verifyObjectChain(object, log, byVersion).verdict).toEqual({
      item: `object ${net.publicA}`,
      ok: true,
    });
    // The current template for every action: the mint took the old name.
    expect(verifyObjectChain(object, log, current).verdict).toMatchObject({
      ok: false,
      failed: 'metadata',
    });
    // Version 1's faces changed as served: the chain no longer ends in the object.
    const forged = new Map(v);
    forged.set(1, { ...v.get(1)!, faces: FACES_V2 });
    expect(
      verifyObjectChain(object, log, (a) => forged.get(a.template_version!) ?? null).verdict,
    ).toMatchObject({ ok: false, failed: 'prev_integrity_hash' });
    // A version not served.
    const missing = verifyObjectChain(object, log, (a) =>
      a.template_version === 2 ? null : byVersion(a),
    ).verdict;
    expect(missing).toMatchObject({ ok: false, failed: 'template' });
    // Through verifyNetwork, with version 1 not served.
    const report = await verifyNetwork(
      hiding((p) => p === `/public/templates/${net.template}/versions/1`),
      { objects: [net.publicA] },
    );
    expect(report.verdicts.filter((x) => !x.ok)).toEqual([
      expect.objectContaining({ item: `object ${net.publicA}`, failed: 'template' }),
    ]);
  });
});
