import { describe, expect, it } from 'vitest';
import { privateCommitmentOf, verifyReceipt, type Receipt } from '@ons/sdk';
import { cosignatureVerifierKey, generateSigner, noteVerifierKey } from '../src/log/signer.js';
import { FakeLog } from './log-fixture.js';

/** Issue 33 item 7 (SDK side): `verifyReceipt` checks a receipt offline with the log's key. */

const log = new FakeLog();
log.addBatch(3);
log.addBatch(5);
log.addBatch(1);
const witness = generateSigner('witness.test.example');
const wkey = cosignatureVerifierKey(witness);
const copy = (r: Receipt): Receipt => JSON.parse(JSON.stringify(r)) as Receipt;

describe('verifyReceipt', () => {
  it('accepts every action of the log, at its own size and at a later one', async () => {
    for (let i = 0; i < log.size; i++) {
      for (const size of [i + 1, log.size]) {
        const r = await verifyReceipt(log.receipt(i, size, [witness]), {
          logKey: log.vkey,
          witnessKeys: [wkey],
          minCosignatures: 1,
        });
        expect(r.errors, `${i} in ${size}`).toEqual([]);
        expect(r.ok).toBe(true);
        expect(r.checkpoint?.size).toBe(size);
        expect(r.cosignatures.map((c) => c.name)).toEqual([witness.name]);
      }
    }
  });

  it('refuses a record whose fields no longer give its hash (and another network)', async () => {
    const r = copy(log.receipt(4));
    r.action.params = { n: 4, note: 'rewritten' };
    expect((await verifyReceipt(r, { logKey: log.vkey })).errors).toEqual([
      'hash: the hash is not SHA-256 of the text rebuilt from the record',
    ]);
    const other = await verifyReceipt(log.receipt(4), { logKey: log.vkey, network: 'elsewhere' });
    expect(other.errors).toEqual([
      'hash: the hash is not SHA-256 of the text rebuilt from the record',
    ]);
  });

  it('says the hash was not rebuilt when no network id is known', async () => {
    const r = copy(log.receipt(2));
    delete r.network;
    const res = await verifyReceipt(r, { logKey: log.vkey });
    // The record's fields are not tied to its hash, so the record is not proven: not ok.
    expect(res).toMatchObject({ ok: false, errors: [], skipped: ['hash'] });
    expect((await verifyReceipt(r, { logKey: log.vkey, network: 'ons-test' })).ok).toBe(true);
  });

  it('is not ok for another record put beside a genuine private leaf without its opening', async () => {
    // A holder of one genuine receipt of a private action (its leaf, proof and checkpoint)
    // puts any record with a self-consistent hash beside it: nothing ties the two.
    const p = new FakeLog('log.forge.example');
    p.addBatch(4);
    const leaf = privateCommitmentOf(
      `0x${'5a'.repeat(32)}`,
      p.actions[1]!.hash,
      `0x${'1b'.repeat(32)}`,
    )!;
    p.privateLeaves.set(1, leaf);
    const genuine = { ...p.receipt(1), private: { leaf } };
    for (const other of [2, 3]) {
      const forged = { ...genuine, action: { ...p.receipt(other).action, log_index: 1 } };
      const res = await verifyReceipt(forged, { logKey: p.vkey });
      expect(res, `record ${other}`).toMatchObject({ ok: false, skipped: ['commitment'] });
    }
  });

  it('refuses an action swapped for another, a moved index, a bad proof, another size', async () => {
    const swapped = copy(log.receipt(1));
    swapped.action = { ...log.receipt(2).action };
    expect((await verifyReceipt(swapped, { logKey: log.vkey })).errors).toContain(
      "inclusion: the proof does not lead to the checkpoint's root",
    );
    const moved = copy(log.receipt(1));
    moved.log_index = 2;
    expect((await verifyReceipt(moved, { logKey: log.vkey })).errors).toEqual([
      "leaf: the receipt's log_index is not the record's",
      "inclusion: the proof does not lead to the checkpoint's root",
    ]);
    const bent = copy(log.receipt(1));
    bent.inclusion_proof[0] = `0x${'ee'.repeat(32)}`;
    expect((await verifyReceipt(bent, { logKey: log.vkey })).errors).toEqual([
      "inclusion: the proof does not lead to the checkpoint's root",
    ]);
    const long = copy(log.receipt(1));
    long.inclusion_proof.push(...long.inclusion_proof, ...long.inclusion_proof);
    expect((await verifyReceipt(long, { logKey: log.vkey })).errors).toEqual([
      'inclusion: the proof is longer than ⌈log₂ tree_size⌉',
    ]);
    const resized = copy(log.receipt(1));
    resized.tree_size = 8;
    expect((await verifyReceipt(resized, { logKey: log.vkey })).errors).toContain(
      "inclusion: tree_size is not the checkpoint's size",
    );
  });

  it("refuses a checkpoint not signed by the log's key, and a missing quorum", async () => {
    const impostor = new FakeLog(log.origin);
    impostor.addBatch(9);
    const r = await verifyReceipt(log.receipt(0), { logKey: noteVerifierKey(impostor.signer) });
    expect(r.errors).toEqual(["signature: no signature by the log's key"]);
    const q = await verifyReceipt(log.receipt(0), {
      logKey: log.vkey,
      witnessKeys: [wkey],
      minCosignatures: 1,
    });
    expect(q.errors).toEqual(['cosignatures: 0 valid, at least 1 required']);
    expect((await verifyReceipt({} as Receipt, { logKey: log.vkey })).errors).toEqual([
      'version: not a version 1 receipt',
    ]);
    expect((await verifyReceipt(log.receipt(0), { logKey: 'nonsense' })).errors).toEqual([
      'key: malformed verifier key',
    ]);
  });

  it("checks a private action's receipt through its salted commitment (the log's leaf)", async () => {
    const p = new FakeLog('log.private.example');
    p.addBatch(4);
    const salt = `0x${'5a'.repeat(32)}`;
    const integrity = `0x${'1b'.repeat(32)}`;
    const leaf = privateCommitmentOf(salt, p.actions[2]!.hash, integrity)!;
    p.privateLeaves.set(2, leaf);
    const receipt = { ...p.receipt(2), private: { leaf, salt, integrity_hash: integrity } };
    expect((await verifyReceipt(receipt, { logKey: p.vkey })).errors).toEqual([]);
    // Without the salt only the leaf is proven: not ok, though nothing failed.
    const unsalted = { ...p.receipt(2), private: { leaf } };
    expect(await verifyReceipt(unsalted, { logKey: p.vkey })).toMatchObject({
      ok: false,
      errors: [],
      skipped: ['commitment'],
    });
    const otherSalt = {
      ...receipt,
      private: { leaf, salt: `0x${'00'.repeat(32)}`, integrity_hash: integrity },
    };
    expect((await verifyReceipt(otherSalt, { logKey: p.vkey })).errors).toEqual([
      'commitment: the leaf does not open to the action with its salt',
    ]);
    // Without `private`, the action hash is not the leaf: the proof does not lead to the root.
    expect((await verifyReceipt(p.receipt(2), { logKey: p.vkey })).errors).toEqual([
      "inclusion: the proof does not lead to the checkpoint's root",
    ]);
    const badLeafHash = { ...receipt, leaf_hash: `0x${'00'.repeat(32)}` };
    expect((await verifyReceipt(badLeafHash, { logKey: p.vkey })).errors).toEqual([
      'leaf: leaf_hash is not H(0x00 ‖ the leaf)',
    ]);
  });
});
