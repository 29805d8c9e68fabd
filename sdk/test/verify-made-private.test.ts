import type { webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/actions/canonical-json.js';
import {
  commitmentOf,
  GENESIS,
  headerHash,
  integrityRootOf,
  ipfsUrlOf,
  verifyBatch,
  type BatchContext,
} from '../src/verify/batches.js';
import { hashBytes, hex, sha256, utf8 } from '../src/verify/bytes.js';
import { merkleRoot } from '../src/verify/merkle.js';
import type { BatchRecord } from '../src/verify/types.js';

/**
 * An action sealed public whose object was made private later (docs/batches.md, "An object
 * made private later"): its batch's content (version 4) shows it as version 3's private
 * record — `hash` and `integrity_hash`, what the header committed to — and its leaf stays its
 * action hash. One batch of three actions: a public one (obj_P), one made private since
 * (obj_Q) and one sealed private as a salted commitment (obj_R).
 */

const H = (s: string) => hex(sha256(utf8(s)));
const BATCH = 'bat_1';
const PUBLIC = {
  batch_id: BATCH,
  expires: '2030-01-01T00:00:00.000Z',
  fee_wei: '10',
  hash: H('text of act_1'),
  id: 'act_1',
  integrity_hash: H('obj_P after act_1'),
  name: 'mint',
  nonce: 0,
  object_id: 'obj_P',
  organization_id: 'org_1',
  params: { template_id: 'tpl_1' },
  signature: `0x${'00'.repeat(65)}`,
  signature_type: 'eoa',
  template_id: 'tpl_1',
  template_version: 1,
  wallet: `0x${'11'.repeat(20)}`,
  when_created: '2025-01-01T00:00:00.000Z',
};
/** Version 3's private record: what the header committed to, nothing else. */
const HIDDEN = {
  batch_id: BATCH,
  fee_wei: '10',
  hash: H('text of act_2'),
  id: 'act_2',
  integrity_hash: H('obj_Q after act_2'),
  object_id: 'obj_Q',
  private: true,
};
const SEALED = {
  batch_id: BATCH,
  commitment: H('commitment of act_3'),
  fee_wei: '10',
  id: 'act_3',
  object_id: 'obj_R',
  private: true,
};

interface Sealed {
  batch: BatchRecord;
  content: Uint8Array;
  ctx: BatchContext;
}

/** Seals the three records, as `change` leaves them, into a signed version 4 batch. */
async function seal(change: (hidden: typeof HIDDEN) => Record<string, unknown> = (h) => h) {
  const hidden = change({ ...HIDDEN });
  const actions = [PUBLIC, hidden, SEALED];
  const objects = [
    { id: 'obj_P', integrity_hash: PUBLIC.integrity_hash },
    { id: 'obj_Q', integrity_hash: HIDDEN.integrity_hash },
    { commitment: SEALED.commitment, id: 'obj_R' },
  ];
  // The header commits to the action hash and integrity hash as sealed (before the change).
  const header: Record<string, unknown> = {
    id: BATCH,
    sequence: 1,
    prev_hash: GENESIS,
    prev_integrity_root: GENESIS,
    integrity_root: integrityRootOf([
      objects[0] as { id: string; integrity_hash: string },
      objects[1] as { id: string; integrity_hash: string },
      { id: 'obj_R', integrity_hash: SEALED.commitment },
    ]),
    actions_hash: merkleRoot(
      [PUBLIC.hash, HIDDEN.hash, SEALED.commitment].map((h) => hashBytes(h)!),
    ),
    actions_count: 3,
    total_fee_wei: '30',
    when_created: '2025-01-02T00:00:00.000Z',
  };
  header.commitment = commitmentOf(header as never);
  header.hash = headerHash(header as never);
  const kp = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const pub = hex(new Uint8Array(await crypto.subtle.exportKey('raw', kp.publicKey)));
  const sig = new Uint8Array(
    await crypto.subtle.sign({ name: 'Ed25519' }, kp.privateKey, hashBytes(header.commitment)!),
  );
  const content = utf8(canonicalJson({ actions, batch: header, objects, version: 4 }));
  const batch = {
    ...header,
    version: 4,
    ipfs_url: ipfsUrlOf(content),
    proof: {
      type: 'ed25519-attestation',
      value: hex(sig),
      public_values: header.commitment,
      vkey: pub,
      message: '',
    },
    proof_id: hex(sha256(utf8('ed25519-attestation'), Uint8Array.of(0), sig)),
  } as unknown as BatchRecord;
  return { batch, content, ctx: { batchPublicKey: pub, previous: null } } satisfies Sealed;
}

describe('a version 4 batch showing an action made private since it sealed', () => {
  it("verifies: the record's hash is its leaf, its integrity hash its object's leaf", async () => {
    const { batch, content, ctx } = await seal();
    expect(await verifyBatch(batch, content, ctx)).toEqual({ item: `batch 1 ${BATCH}`, ok: true });
  });

  it('is checked against a replayed history by its hash and integrity hash, as a public one', async () => {
    const { batch, content, ctx } = await seal();
    const history = [{ id: 'act_2', hash: HIDDEN.hash, batch_id: BATCH }];
    const histories = new Map([['obj_Q', history]]);
    const integrityByAction = new Map([['act_2', HIDDEN.integrity_hash]]);
    expect(await verifyBatch(batch, content, { ...ctx, histories, integrityByAction })).toEqual({
      item: `batch 1 ${BATCH}`,
      ok: true,
    });
    // The history names another hash for it: the content's record is not that action.
    const other = new Map([['obj_Q', [{ ...history[0]!, hash: H('another text') }]]]);
    expect(await verifyBatch(batch, content, { ...ctx, histories: other })).toMatchObject({
      ok: false,
      failed: 'history',
    });
    // The replay left another integrity hash than the record says.
    const replayed = new Map([['act_2', H('another state')]]);
    expect(
      await verifyBatch(batch, content, { ...ctx, integrityByAction: replayed }),
    ).toMatchObject({ ok: false, failed: 'integrity_hash' });
  });

  it('fails a record whose hash or integrity hash is not what the header committed to', async () => {
    const hash = await seal((h) => ({ ...h, hash: H('changed') }));
    expect(await verifyBatch(hash.batch, hash.content, hash.ctx)).toMatchObject({
      ok: false,
      failed: 'actions_hash',
    });
    const integrity = await seal((h) => ({ ...h, integrity_hash: H('changed') }));
    expect(await verifyBatch(integrity.batch, integrity.content, integrity.ctx)).toMatchObject({
      ok: false,
      failed: 'objects',
    });
    // A private record with neither a commitment nor a hash has no leaf.
    const bare = await seal(({ hash: _, ...h }) => h);
    expect(await verifyBatch(bare.batch, bare.content, bare.ctx)).toMatchObject({
      ok: false,
      failed: 'actions_hash',
    });
  });
});
