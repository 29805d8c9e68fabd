import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main as onsVerify } from '@ons/sdk/cli';
import { recoverMessageAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildActionText,
  httpSource,
  merkleRoot as sdkMerkleRoot,
  verifyActionInclusion,
  verifyActionSignature,
  verifyBatch,
  verifyInclusion as sdkVerifyInclusion,
  verifyNetwork,
  verifyObjectChain,
  type ActionRecord,
  type BatchRecord,
  type ProofRecord,
  type PublicCredential,
  type PublicObject,
  type PublicTemplate,
  type Source,
} from '@ons/sdk';
import {
  inclusionProof,
  merkleRootOfData,
  verifyInclusion as serviceVerifyInclusion,
} from '../../src/lib/merkle.js';
import { newId } from '../../src/lib/ids.js';
import { buildNetwork, type VerifyNetwork } from './verify-fixture.js';

/** Issue 18 items 1, 6 and 7: public reads for verifiers, the offline verifier, tampering. */

let net: VerifyNetwork;
let source: Source;
beforeAll(async () => {
  net = await buildNetwork();
  source = httpSource(net.live.baseUrl);
});
afterAll(async () => {
  await net?.live.stop();
});

const getJson = async <T>(path: string): Promise<T> => (await source.json<T>(path))!;
const history = async (id: string) =>
  (await getJson<{ action_logs: ActionRecord[] }>(`/public/objects/${id}/history?order=asc`))
    .action_logs;
const network = () => getJson<{ network: string; batch_public_key: string }>('/public/network');
const credentialOf = (id: string) => source.json<PublicCredential>(`/public/credentials/${id}`);
const raw = (path: string) => fetch(`${net.live.baseUrl}${path}`);
const answer = async (res: Response) => [res.status, ((await res.json()) as { code: number }).code];

describe('item 1: what a verifier needs is served without a credential', () => {
  it('rebuilds an EOA and a passkey action from public answers and checks them with viem and node:crypto', async () => {
    const { network: networkId } = await network();
    const log = await history(net.publicA);
    expect(log.map((a) => a.name)).toEqual(['mint', 'update', 'transfer', 'drop', 'pickup']);
    const textOf = (a: ActionRecord) =>
      buildActionText({
        network: networkId,
        organizationId: a.organization_id,
        wallet: a.wallet,
        nonce: a.nonce,
        name: a.name,
        params: a.params,
        expires: a.expires!,
      });
    const eoa = log[0]!;
    expect(eoa.signature_type).toBe('eoa');
    expect(
      await recoverMessageAddress({
        message: textOf(eoa),
        signature: eoa.signature as `0x${string}`,
      }),
    ).toBe(net.owner.account.address);

    const pk = log[3]!;
    expect(pk.signature_type).toBe('webauthn');
    const assertion = pk.signature as Exclude<ActionRecord['signature'], string>;
    const text = textOf(pk);
    expect(`0x${createHash('sha256').update(text).digest('hex')}`).toBe(pk.hash);
    const clientData = Buffer.from(assertion.client_data_json, 'base64url');
    expect(JSON.parse(clientData.toString()).challenge).toBe(
      createHash('sha256').update(text).digest('base64url'),
    );
    const cred = (await credentialOf(assertion.credential_id))!;
    expect(cred).toMatchObject({
      credential_id: assertion.credential_id,
      wallet: net.passkey.address,
      algorithm: { cose: -7, name: 'ES256' },
      when_removed: '',
    });
    const key = createPublicKey({
      key: Buffer.from(cred.public_key, 'base64url'),
      format: 'der',
      type: 'spki',
    });
    const signed = Buffer.concat([
      Buffer.from(assertion.authenticator_data, 'base64url'),
      createHash('sha256').update(clientData).digest(),
    ]);
    const sig = Buffer.from(assertion.signature, 'base64url');
    expect(nodeVerify('sha256', signed, key, sig)).toBe(true);
    sig[sig.length - 1]! ^= 1;
    expect(nodeVerify('sha256', signed, key, sig)).toBe(false);
  });

  it('refuses credentials it must not publish and malformed ids', async () => {
    const unknown = await raw('/public/credentials/AAAA');
    expect(await answer(unknown)).toEqual([404, 5]);
    // Registered, but it never signed an action: not published (docs/decisions.md).
    const idle = await raw(`/public/credentials/${net.idle.authenticator.credentialId}`);
    expect(await answer(idle)).toEqual([404, 5]);
    const bad = await raw('/public/credentials/a+b');
    expect(await answer(bad)).toEqual([400, 3]);
    const long = await raw(`/public/credentials/${'a'.repeat(1367)}`);
    expect(await answer(long)).toEqual([400, 3]);
  });

  it('serves a public object history, not a private or missing one', async () => {
    const page = await getJson<{
      action_logs: ActionRecord[];
      has_more: boolean;
      next: string | null;
    }>(`/public/objects/${net.publicA}/history?limit=2`);
    expect(page.action_logs.map((a) => a.name)).toEqual(['pickup', 'drop']); // newest first
    expect(page.has_more).toBe(true);
    const rest = await getJson<{ action_logs: ActionRecord[] }>(
      `/public/objects/${net.publicA}/history?limit=10&next=${encodeURIComponent(page.next!)}`,
    );
    expect(rest.action_logs.map((a) => a.name)).toEqual(['transfer', 'update', 'mint']);
    // A fresh id: one made by changing publicA's last character can be another object's (ids
    // made in one millisecond differ only there).
    const missing = newId('object');
    for (const id of [net.privateC, missing]) {
      const res = await raw(`/public/objects/${id}/history`);
      expect(await answer(res)).toEqual([404, 5]);
    }
    const bad = await raw('/public/objects/nope/history');
    expect(await answer(bad)).toEqual([400, 3]);
    const limit = await raw(`/public/objects/${net.publicA}/history?limit=101`);
    expect(limit.status).toBe(400);
  });

  it('lists both routes in /openapi.json', async () => {
    const doc = await getJson<{ paths: Record<string, unknown> }>('/openapi.json');
    expect(doc.paths).toHaveProperty(['/public/credentials/{credentialId}', 'get']);
    expect(doc.paths).toHaveProperty(['/public/objects/{id}/history', 'get']);
  });
});

describe("the SDK's RFC 6962 tree agrees with the service's", () => {
  it('computes the same roots and accepts and refuses the same proofs', () => {
    for (let n = 1; n <= 33; n++) {
      const leaves = Array.from({ length: n }, (_, i) =>
        createHash('sha256').update(`${n}.${i}`).digest(),
      );
      expect(sdkMerkleRoot(leaves)).toBe(`0x${merkleRootOfData(leaves).toString('hex')}`);
      for (const i of [0, Math.floor(n / 2), n - 1]) {
        const proof = inclusionProof(leaves, i);
        expect([
          sdkVerifyInclusion(proof, leaves[i]),
          serviceVerifyInclusion(proof, leaves[i]),
        ]).toEqual([true, true]);
        if (proof.audit_path.length > 0) {
          const bad = { ...proof, audit_path: [...proof.audit_path] };
          bad.audit_path[0] = flipHex(bad.audit_path[0]!);
          expect([sdkVerifyInclusion(bad), serviceVerifyInclusion(bad)]).toEqual([false, false]);
        }
        const wrongSize = { ...proof, tree_size: n + 1 };
        expect(sdkVerifyInclusion(wrongSize)).toBe(serviceVerifyInclusion(wrongSize));
      }
    }
  });
});

/** Changes one byte (the last hex digit) of a 0x hex string. */
function flipHex(h: string): string {
  const last = h.at(-1)!;
  return h.slice(0, -1) + (last === '0' ? '1' : '0');
}

describe('item 6: the verifier over the live service', () => {
  it('finds every action, object, proof and batch sound', async () => {
    const report = await verifyNetwork(source);
    const failed = report.verdicts.filter((v) => !v.ok);
    expect(failed).toEqual([]);
    expect(report.ok).toBe(true);
    const kinds = (p: string) => report.verdicts.filter((v) => v.item.startsWith(p)).length;
    // 7 public actions (5 on A, 2 on B; the private object's mint is in its batch's content
    // only as a commitment, with no text to check), 2 public objects, 7 proofs, 3 batches.
    expect([kinds('action '), kinds('object '), kinds('proof '), kinds('batch ')]).toEqual([
      7, 2, 7, 3,
    ]);
    // integrity_root is recomputed for every batch from its content (version 4), the batch
    // holding the private object's mint included: nothing is skipped.
    const batches = report.verdicts.filter((v) => v.item.startsWith('batch '));
    expect(batches.filter((b) => b.skipped !== undefined)).toEqual([]);
  });
});

/** A source that hands the verifier a changed answer for one path. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test edits served JSON freely
function tampered(path: string, change: (value: any) => void, inner: Source = source): Source {
  return {
    bytes: async (p) => {
      const b = await inner.bytes(p);
      if (p !== path || b === null) return b;
      const v = JSON.parse(new TextDecoder().decode(b));
      change(v);
      return new TextEncoder().encode(JSON.stringify(v));
    },
    json: async <T>(p: string) => {
      const v = await inner.json<T>(p);
      if (p === path && v !== null) change(v);
      return v;
    },
  };
}

describe('item 7: one changed byte is named', () => {
  const ctx = async () => ({
    network: (await network()).network,
    credential: (id: string) => credentialOf(id),
  });

  it('(a) a signature, a param', async () => {
    const [mint, update, , drop] = await history(net.publicA);
    expect(await verifyActionSignature(mint!, await ctx())).toMatchObject({ ok: true });
    const sig = { ...mint!, signature: flipHex(mint!.signature as string) };
    expect(await verifyActionSignature(sig, await ctx())).toMatchObject({
      ok: false,
      failed: 'signature',
    });
    const param = { ...update!, params: { ...update!.params, custom: { seat: '14D' } } };
    expect(await verifyActionSignature(param, await ctx())).toMatchObject({
      ok: false,
      failed: 'hash',
    });
    // The same change with the hash made to match: now the signature no longer does.
    const text = buildActionText({
      network: (await network()).network,
      organizationId: param.organization_id,
      wallet: param.wallet,
      nonce: param.nonce,
      name: param.name,
      params: param.params,
      expires: param.expires!,
    });
    const rehashed = { ...param, hash: `0x${createHash('sha256').update(text).digest('hex')}` };
    expect(await verifyActionSignature(rehashed, await ctx())).toMatchObject({
      ok: false,
      failed: 'signature',
    });
    const a = drop!.signature as Exclude<ActionRecord['signature'], string>;
    const s = Buffer.from(a.signature, 'base64url');
    s[10]! ^= 1;
    const pk = { ...drop!, signature: { ...a, signature: s.toString('base64url') } };
    expect(await verifyActionSignature(pk, await ctx())).toMatchObject({
      ok: false,
      failed: 'signature',
    });
    // A key the service would publish for another wallet is refused too.
    const other = await verifyActionSignature(drop!, {
      ...(await ctx()),
      credential: async (id) => ({ ...(await credentialOf(id))!, wallet: net.owner.address }),
    });
    expect(other).toMatchObject({ ok: false, failed: 'credential' });
    // Through verifyNetwork, the record of the public history is what gets changed.
    const report = await verifyNetwork(
      tampered(`/public/objects/${net.publicA}/history?order=asc&limit=100`, (v) => {
        v.action_logs[0].signature = flipHex(v.action_logs[0].signature);
      }),
      { objects: [net.publicA] },
    );
    expect(report.verdicts.filter((v) => !v.ok)).toEqual([
      expect.objectContaining({ item: `action ${mint!.id}`, failed: 'signature' }),
    ]);
  });

  it("(b) an object's custom field", async () => {
    const log = await history(net.publicA);
    const object = (await getJson<{ objects: PublicObject[] }>(`/public/objects?id=${net.publicA}`))
      .objects[0]!;
    const template = await getJson<PublicTemplate>(`/public/templates/${object.template_id}`);
    expect(verifyObjectChain(object, log, template).verdict.ok).toBe(true);
    const changed = { ...object, custom: { seat: '14D' } };
    expect(verifyObjectChain(changed, log, template).verdict).toMatchObject({
      ok: false,
      failed: 'custom',
    });
    const hash = { ...object, integrity_hash: flipHex(object.integrity_hash) };
    expect(verifyObjectChain(hash, log, template).verdict).toMatchObject({
      ok: false,
      failed: 'integrity_hash',
    });
    // A history missing an action no longer leads to the object.
    const gap = log.filter((a) => a.name !== 'transfer');
    expect(verifyObjectChain(object, gap, template).verdict.ok).toBe(false);
  });

  it('(c) a batch header field, the content, the attestation', async () => {
    const { batch_public_key } = await network();
    const batches = (await getJson<{ batches: BatchRecord[] }>('/batches?order=asc')).batches;
    const [first, second] = batches;
    const content = (await source.bytes(`/batches/${second!.id}/content`))!;
    const check = (b: BatchRecord, c: Uint8Array, previous: BatchRecord | null = first!) =>
      verifyBatch(b, c, { batchPublicKey: batch_public_key, previous });
    expect(await check(second!, content)).toMatchObject({ ok: true });
    // A header field changed in the explorer's answer.
    expect(
      await check({ ...second!, total_fee_wei: `${second!.total_fee_wei}1` }, content),
    ).toMatchObject({
      ok: false,
      failed: 'total_fee_wei',
    });
    // One byte of the content changed: its CID no longer matches.
    const text = new TextDecoder().decode(content);
    const edited = new TextEncoder().encode(text.replace('"name":"', '"name":"x'));
    expect(await check(second!, edited)).toMatchObject({ ok: false, failed: 'ipfs_url' });
    // A header changed in both places, with the ipfs_url made to match: the formulas catch it.
    const forged = JSON.parse(text);
    forged.batch.actions_hash = flipHex(forged.batch.actions_hash);
    const bytes = new TextEncoder().encode(JSON.stringify(forged));
    const { ipfsUrlOf } = await import('@ons/sdk');
    const headerForged = {
      ...second!,
      actions_hash: forged.batch.actions_hash,
      ipfs_url: ipfsUrlOf(bytes),
    };
    expect(await check(headerForged, bytes)).toMatchObject({ ok: false, failed: 'actions_hash' });
    // The chain: the second batch checked after another than its predecessor.
    expect(await check(second!, content, second)).toMatchObject({ ok: false, failed: 'sequence' });
    const badPrev = { ...first!, hash: flipHex(first!.hash) };
    expect(await check(second!, content, badPrev)).toMatchObject({
      ok: false,
      failed: 'prev_hash',
    });
    // The attestation.
    const sig = { ...second!, proof: { ...second!.proof!, value: flipHex(second!.proof!.value) } };
    expect(await check(sig, content)).toMatchObject({ ok: false, failed: 'proof' });
    expect(
      await verifyBatch(second!, content, {
        batchPublicKey: flipHex(batch_public_key),
        previous: first!,
      }),
    ).toMatchObject({ ok: false, failed: 'proof' });
    // Through verifyNetwork, with the explorer's list changed.
    const report = await verifyNetwork(
      tampered('/batches?order=asc&limit=100', (v) => {
        v.batches[1].when_created = v.batches[1].when_created.replace(/\d(?=Z$)/, (d: string) =>
          String((+d + 1) % 10),
        );
      }),
    );
    expect(report.verdicts.filter((v) => !v.ok)).toEqual([
      expect.objectContaining({ item: `batch 2 ${second!.id}`, failed: 'when_created' }),
    ]);
  });

  it('(d) an audit path node', async () => {
    const log = await history(net.publicA);
    const action = log[0]!;
    const batch = await getJson<BatchRecord>(`/batches/${action.batch_id}`);
    const proof = await getJson<ProofRecord>(`/batches/${batch.id}/proofs/${action.id}`);
    expect(proof.audit_path.length).toBeGreaterThan(0);
    expect(verifyActionInclusion(action, proof, batch)).toMatchObject({ ok: true });
    const path = [...proof.audit_path];
    path[0] = flipHex(path[0]!);
    expect(verifyActionInclusion(action, { ...proof, audit_path: path }, batch)).toMatchObject({
      ok: false,
      failed: 'audit_path',
    });
    expect(
      verifyActionInclusion({ ...action, hash: flipHex(action.hash) }, proof, batch),
    ).toMatchObject({
      ok: false,
      failed: 'leaf_hash',
    });
    expect(
      verifyActionInclusion(action, proof, { ...batch, actions_hash: flipHex(batch.actions_hash) }),
    ).toMatchObject({ ok: false, failed: 'root' });
  });
});

describe('the ons-verify CLI', () => {
  it('checks a URL, downloads, checks the saved files offline, and fails on a changed file', async () => {
    const lines: string[] = [];
    const out = { log: (l: string) => lines.push(l), isTTY: false };
    expect(await onsVerify(['check', net.live.baseUrl], out)).toBe(0);
    expect(lines.at(-1)).toBe('19 checked, 19 ok, 0 failed');
    expect(lines).toContain(`ok    object ${net.publicA}`);
    expect(lines.some((l) => /not checkable from public data/.test(l))).toBe(false);
    const dir = await mkdtemp(join(tmpdir(), 'ons-verify-'));
    try {
      lines.length = 0;
      expect(
        await onsVerify(['download', net.live.baseUrl, dir, '--object', net.publicA], out),
      ).toBe(0);
      lines.length = 0;
      expect(await onsVerify(['check', dir, '--object', net.publicA], out)).toBe(0);
      // A's 5 actions, its chain, 5 proofs, 3 batches, and the signatures of the 2 other
      // public actions those batches' contents hold (the private mint is a commitment there).
      expect(lines.at(-1)).toBe('16 checked, 16 ok, 0 failed');
      // One byte of the saved object changed.
      const file = (await readdir(dir)).find((f) =>
        f.startsWith(encodeURIComponent('/public/objects?id=')),
      )!;
      const text = await readFile(join(dir, file), 'utf8');
      await writeFile(join(dir, file), text.replace('"seat":"14C"', '"seat":"14D"'));
      lines.length = 0;
      expect(await onsVerify(['check', dir, '--object', net.publicA], out)).toBe(1);
      expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
        `FAIL  object ${net.publicA}: custom — the served custom is not what its 5 actions leave`,
      ]);
      // Something never downloaded, and a bad command: exit 2.
      expect(await onsVerify(['check', dir, '--object', net.publicB], out)).toBe(2);
      expect(await onsVerify(['nope'], { log: () => {}, isTTY: false })).not.toBe(0);
      // A --max-objects that is no count is refused, not read as "check nothing".
      for (const bad of ['abc', '0', '-1', '1e3']) {
        lines.length = 0;
        expect(await onsVerify(['check', net.live.baseUrl, '--max-objects', bad], out)).toBe(2);
      }
      // A list longer than --max-objects says what it left out.
      lines.length = 0;
      expect(await onsVerify(['check', net.live.baseUrl, '--max-objects', '1'], out)).toBe(0);
      expect(lines).toContain(
        'ok    public objects after the first 1 (not checked: past --max-objects)',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
